"""mem0 over pgvector, built once per process on first use.

The mem0 ``Memory`` (a slow-loading model) is cached per model configuration and survives
store outages; the vector store (our pool, short timeouts) is dropped after any failure.
"""

import importlib.util
import logging
import threading
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.adapt import AdaptersMap
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool

from memory.errors import first_line
from memory.semantic import config as cfgmod
from memory.semantic import extraction, mem0_adapter, schema, sides
from memory.semantic.config import SemanticConfig, SemanticUnavailable

log = logging.getLogger("karani.memory")
POOL_NAME = "karani-vectors"
HNSW_EF_SEARCH = 100

_lock = threading.RLock()
_memory: Any = None
_memory_key: tuple[Any, ...] | None = None
_budget: Any = None  # extraction.Budget of the LLM _memory talks to, None without one
_store: Any = None
_store_key: tuple[str, str] | None = None


@dataclass(frozen=True)
class Client:
    memory: Any  # mem0.Memory, with .vector_store set to `store`
    store: Any  # mem0.vector_stores.pgvector.PGVector on our pool
    config: SemanticConfig
    # Token budget of an extraction request (memory.semantic.extraction); None: no LLM.
    llm_budget: Any = None

    @property
    def pool(self) -> Any:
        return self.store.connection_pool


# Why our pool last failed to connect, as psycopg said it: a timeout then names the cause.
_last_connect_error = ""


def _not_our_pool(record: logging.LogRecord) -> bool:
    # psycopg_pool warns on every background reconnect, forever while the store is down; the
    # breaker already logged the one warning that counts.
    global _last_connect_error
    message = record.getMessage()
    if POOL_NAME not in message:
        return True
    if message.startswith("error connecting in "):
        first = (message.split(": ", 1)[-1].strip().splitlines() or [""])[0]
        _last_connect_error = " ".join(first.split())
    return False


def last_connect_error() -> str:
    """psycopg's reason the pool's last connection attempt failed ("" after a success)."""
    return _last_connect_error


def import_mem0(cfg: SemanticConfig) -> Any:
    """``mem0.Memory``, imported with telemetry off and its files under KARANI_DATA_DIR."""
    cfgmod.prepare_environment(cfg)
    try:
        from mem0 import Memory  # optional (the memory extra), and slow to import
        from mem0.vector_stores import pgvector  # noqa: F401  (needs psycopg_pool)
    except Exception as exc:  # ImportError, or anything a broken install raises at import
        first = first_line(exc)
        raise SemanticUnavailable(
            f"mem0 is not importable ({first}); install the extra: pip install -e '.[memory]'"
        ) from exc
    # mem0 logs its own tracebacks at ERROR on every failed call; karani reports each outage
    # once through the breaker instead.
    mem0_log = logging.getLogger("mem0")
    # setLevel clears every logger's level cache, and this runs on every recall.
    if mem0_log.level != logging.CRITICAL:
        mem0_log.setLevel(logging.CRITICAL)
    return Memory


def _configure_connection(conn: Any) -> None:
    global _last_connect_error
    _last_connect_error = ""
    # Filtered HNSW: without iterative scan pgvector stops after ef_search candidates and a
    # company filter can return fewer than k rows; relaxed order keeps scanning (mem0
    # re-sorts the candidates by score anyway).
    conn.execute("SET hnsw.iterative_scan = relaxed_order")
    conn.execute(f"SET hnsw.ef_search = {HNSW_EF_SEARCH}")
    conn.commit()


def connection_kwargs(cfg: SemanticConfig) -> dict[str, Any]:
    """libpq parameters that bound every way a vector-store call can hang: connecting, a
    slow or blocked statement (lifted by reindex), and a peer that vanished mid-call."""
    timeout_ms = max(100, round(cfg.timeout * 1000))
    # Keep any options the DSN already carries (e.g. a search_path); ours come last and win.
    options = conninfo_to_dict(cfg.dsn).get("options") or ""
    return {
        "connect_timeout": max(1, round(cfg.timeout)),
        "options": f"{options} -c statement_timeout={timeout_ms}".strip(),
        "keepalives": 1,
        "keepalives_idle": 10,
        "keepalives_interval": 2,
        "keepalives_count": 3,
        "tcp_user_timeout": max(1000, timeout_ms * 2),
    }


def new_pool(cfg: SemanticConfig) -> Any:
    """A pool that fails in ~timeout s instead of mem0's default 30 s hang (see MEM0.md)."""
    from pgvector.psycopg.vector import VectorBinaryDumper  # optional (the memory extra)

    # numpy arrays go out in pgvector's binary format; unlike pgvector's register_vector this
    # needs no ``vector`` type yet (mem0 creates it later).
    adapters = AdaptersMap(psycopg.adapters)
    adapters.register_dumper("numpy.ndarray", VectorBinaryDumper)
    global _last_connect_error
    _last_connect_error = ""  # a new store: another store's failure says nothing about it
    timeout = cfg.timeout
    logging.getLogger("psycopg.pool").addFilter(_not_our_pool)  # a no-op when already there
    pool = ConnectionPool(
        cfg.dsn,
        name=POOL_NAME,
        min_size=1,
        max_size=5,
        timeout=timeout,
        kwargs={**connection_kwargs(cfg), "context": adapters},
        check=ConnectionPool.check_connection,
        configure=_configure_connection,
        reconnect_timeout=max(timeout * 5, 10),
        open=False,
    )
    pool.open(wait=False)
    return pool


def _store_config(cfg: SemanticConfig, pool: Any) -> dict[str, Any]:
    # embedding_model_dims: not synced with the embedder by mem0 and 1536 by default.
    return {
        "collection_name": cfg.collection,
        "embedding_model_dims": cfg.embedder_dims,
        "connection_pool": pool,
    }


def _new_store(cfg: SemanticConfig, pool: Any) -> Any:
    """A PGVector on our pool, built as mem0's Memory builds its own."""
    from mem0.configs.vector_stores.pgvector import PGVectorConfig  # optional (memory extra)
    from mem0.utils.factory import VectorStoreFactory

    return VectorStoreFactory.create("pgvector", PGVectorConfig(**_store_config(cfg, pool)))


def _new_memory(cfg: SemanticConfig, store: Any, budget: Any) -> Any:
    Memory = import_mem0(cfg)
    from openai import OpenAI  # slow to import: loaded with mem0, never at start-up

    embedder = cfgmod.embedder_config(cfg)
    if not cfg.embedder_is_remote and cfg.embedder_threads:
        import torch  # optional (the memory extra)

        # One intra-op thread by default: torch's spinning workers slow a one-sentence
        # query on a busy machine (MEM0.md).
        torch.set_num_threads(cfg.embedder_threads)
    try:
        memory = Memory.from_config(
            {
                "vector_store": {
                    "provider": "pgvector",
                    "config": _store_config(cfg, store.connection_pool),
                },
                "embedder": embedder,
                "llm": cfgmod.llm_config(
                    cfg,
                    max_tokens=budget.completion if budget else extraction.MAX_COMPLETION_TOKENS,
                ),
                # The ledger is the audit log; karani never calls mem0's add(), which writes it.
                "history_db_path": ":memory:",
            }
        )
    except Exception as exc:
        first = first_line(exc)
        raise SemanticUnavailable(f"could not load the embedder or mem0: {first}") from exc
    # Memory() built its own PGVector on our pool; we hand it ours in get().
    mem0_adapter.detach_own_store(memory)
    # karani's extraction must only ever talk to the configured local endpoint.
    client = OpenAI(
        api_key=cfg.llm_api_key,
        base_url=cfg.llm_base_url or cfgmod.UNUSED_LLM_URL,
        timeout=cfg.llm_timeout,
        max_retries=0,
    )
    mem0_adapter.use_llm_client(memory, client)
    dims = sides.probe(cfg, memory.embedding_model)
    if dims != cfg.embedder_dims:
        raise SemanticUnavailable(
            f"the embedder returns {dims}-dimension vectors but KARANI_EMBEDDER_DIMS is "
            f"{cfg.embedder_dims}; set KARANI_EMBEDDER_DIMS={dims} and run `karani reindex`"
        )
    return memory


def get() -> Client:
    """The process's mem0 client, built on first use. Raises SemanticUnavailable."""
    global _memory, _memory_key, _budget, _store, _store_key
    cfg = cfgmod.load()
    with _lock:
        fresh = _store is None or _store_key != cfg.store_key()
        if fresh:
            discard_store()
            # Is the extra there? Found without importing it: mem0 loads slowly.
            if not all(importlib.util.find_spec(n) for n in ("mem0", "pgvector", "psycopg_pool")):
                import_mem0(cfg)  # raises the one-line "install the extra" message
            pool = new_pool(cfg)
            try:
                # A dead store fails here, in about one timeout, before mem0, torch and the
                # model are loaded (and the breaker then skips them for the cool-down).
                pool.wait(timeout=cfg.timeout)
                import_mem0(cfg)
                _store, _store_key = _new_store(cfg, pool), cfg.store_key()
            except BaseException:
                pool.close(timeout=0)
                raise
        else:
            # Cheap once imported (a sys.modules look-up), and it notices a broken install.
            import_mem0(cfg)
        if _memory is None or _memory_key != cfg.model_key():
            _memory = None
            # One /v1/models probe per LLM configuration, not per write.
            _budget = extraction.budget(cfg) if cfg.infer else None
            try:
                _memory = _new_memory(cfg, _store, _budget)
            except BaseException:
                # A half-built Memory may have closed our pool on its way out.
                discard_store()
                raise
            _memory_key = cfg.model_key()
        mem0_adapter.adopt_store(_memory, _store)
        client = Client(memory=_memory, store=_store, config=cfg, llm_budget=_budget)
        if fresh:
            # First use of this store in the process: make sure the collection and the
            # indexes the scoped search relies on exist (a dropped table comes back here).
            try:
                schema.ensure(_store, cfg)
            except BaseException:
                discard_store()
                raise
        return client


def discard_store() -> None:
    """Drop the store and its pool: the next get() reconnects and re-ensures the collection."""
    global _store, _store_key
    with _lock:
        store, _store, _store_key = _store, None, None
    if store is not None:
        try:
            store.connection_pool.close(timeout=0)
        except Exception:  # closing a pool to a dead server may itself complain
            log.debug("closing the vector pool failed", exc_info=True)


def discard_all() -> None:
    """Forget everything (tests switch configurations; the model is reloaded on next use)."""
    global _memory, _memory_key, _budget
    discard_store()
    with _lock:
        _memory, _memory_key, _budget = None, None, None
