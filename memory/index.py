"""The seam between the ledger and the optional semantic index (KARANI_MEMORY=mem0).

Called after the ledger commits, so an index failure never rolls back or blocks a write; in
off/basic mode these do nothing, and in mem0 mode nothing here raises (ADR 0009).
"""

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from memory import background, modes
from memory.conf import settings
from memory.keyword import Hit

log = logging.getLogger("karani.memory")


def _safely(call: Callable[[], Any], warning: str) -> Any:
    # SemanticUnavailable was logged once by the breaker; anything else is a bug worth a trace.
    from memory.semantic.config import SemanticUnavailable  # mem0 mode only (optional extra)

    try:
        return call()
    except SemanticUnavailable:
        return None
    except Exception:
        log.warning("semantic index: %s", warning, exc_info=True)
        return None


def added(memory_ids: Sequence[int]) -> None:
    """New live facts exist: index them (by default on this process's background worker,
    memory.background), or leave them pending when the index is down."""
    if modes.current() == modes.MEM0 and memory_ids:
        if settings.KARANI_INDEX_IN_BACKGROUND:
            background.submit(memory_ids, _index)
        else:
            _index(list(memory_ids))


def _index(memory_ids: list[int]) -> None:
    from memory.semantic import sync  # mem0 mode only (optional extra)

    _safely(lambda: sync.added(memory_ids), "could not record indexing; rows stay pending")


def removed(memory_ids: Sequence[int]) -> None:
    """Facts were soft-deleted: drop them from the index; recall never returns them anyway."""
    if modes.current() == modes.MEM0 and memory_ids:
        from memory.semantic import sync  # mem0 mode only (optional extra)

        _safely(lambda: sync.removed(memory_ids), "could not remove deleted rows")


def redacted(memory_ids: Sequence[int]) -> None:
    """Facts rewritten in place by redaction: every vector they had goes (extraction may have
    made several), the store's table is vacuumed so no payload keeps the old text, and the
    live ones are indexed again from their new text."""
    if modes.current() == modes.MEM0 and memory_ids:
        from memory.semantic.guard import guarded  # mem0 mode only (optional extra)

        ids = list(memory_ids)
        _safely(lambda: guarded(lambda client: _purge(client, ids)), "could not purge rows")
        added(ids)


def _purge(client: Any, ids: list[int]) -> None:
    # mem0 mode only: psycopg costs every basic-mode CLI start-up about 0.2 s.
    import psycopg
    from psycopg import sql

    from memory.semantic import store

    store.delete_ledger_ids(client, ids)
    # Deleted vectors stay in the table's pages until it is rewritten.
    with psycopg.connect(client.config.dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("VACUUM FULL {}").format(sql.Identifier(client.config.collection)))


def search(*, query: str, company_key: str | None, limit: int) -> list[Hit] | None:
    """Semantic candidates (ledger ids, best first, possibly stale), or None to fall back."""
    if modes.current() != modes.MEM0:
        return None
    from memory.semantic import search as semantic  # mem0 mode only (optional extra)

    return _safely(
        lambda: semantic.search(query=query, company_key=company_key, limit=limit),
        "search failed; falling back to keyword",
    )


def similarities(*, queries: Sequence[str], ledger_ids: Sequence[int]) -> Any:
    """The cosine of each query with each of these facts' stored vectors (a queries x facts
    float array; 0 for a fact not indexed yet): the queries embedded as recall embeds them,
    which keeps their vectors, and the facts' vectors read, never encoded again. None outside
    mem0 mode or to fall back."""
    if modes.current() != modes.MEM0 or not queries or not ledger_ids:
        return None
    # mem0 mode only: the semantic index loads the optional memory extra.
    import numpy as np

    from memory.semantic.encoder import embed_queries
    from memory.semantic.guard import guarded
    from memory.semantic.search import cosines

    def run(client: Any) -> Any:
        vectors = embed_queries(client, list(queries))
        return np.asarray(cosines(client, vectors, list(ledger_ids)), dtype=np.float32)

    return _safely(lambda: guarded(run), "similarity failed; falling back to keyword")


def nearest_many(
    *, queries: Sequence[str], company_key: str | None, limit: int, per_side: bool = False
) -> list | None:
    """Each query's nearest facts in scope by cosine similarity alone (ledger ids, best first,
    possibly stale; one scale for every query), the queries embedded in one batch; ``limit``
    of each side with ``per_side``; None to fall back."""
    if modes.current() != modes.MEM0:
        return None
    # mem0 mode only: the semantic index loads the optional memory extra.
    from memory.semantic.encoder import queries_in_passes
    from memory.semantic.guard import guarded
    from memory.semantic.search import nearest_many

    def run(client: Any) -> list[list[Hit]]:
        def scan(vectors: list) -> list[list[Hit]]:
            return nearest_many(
                client, vectors, company_key=company_key, depth=limit, per_side=per_side
            )

        found: list[list[Hit]] = [[] for _ in queries]
        # The database scans one pass's vectors while this process encodes the next: on two
        # cores the scans cost little more than the last pass's (docs/embedders.md).
        with ThreadPoolExecutor(max_workers=1) as searcher:
            passes = queries_in_passes(client, list(queries))
            scans = [(at, searcher.submit(scan, vectors)) for at, vectors in passes]
            for at, scanned in scans:
                for n, hits in zip(at, scanned.result(), strict=True):
                    found[n] = hits
        return found

    return _safely(lambda: guarded(run), "search failed; falling back to keyword")
