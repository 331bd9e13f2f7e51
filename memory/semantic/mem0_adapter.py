"""What karani needs of mem0 that mem0 does not publish, in one place (mem0ai 2.2.x).

Everything else karani does with mem0 goes through its public API: ``Memory.from_config``,
``VectorStoreFactory``, the vector store's ``insert``/``search``/``list``/``create_col``/
``delete_col``/``reset``, the embedder's ``embed``/``embed_batch`` and the LLM's
``generate_response``.
A mem0 upgrade that changes anything below fails tests/test_semantic_mem0_adapter.py, which
also pins the supported version range to pyproject.toml's.
"""

from typing import Any

# mem0's pgvector ``create_col`` always builds a full-text index on a lemmatised copy of each
# text for its own keyword search; karani's recall reads the ledger's index instead, so
# karani writes no such copy and drops the index (memory.semantic.schema).
KEYWORD_INDEX_SUFFIX = "text_lemmatized_idx"
# The HNSW index ``create_col`` builds, under mem0's naming convention.
HNSW_INDEX_SUFFIX = "hnsw_idx"


def index_name(collection: str, suffix: str) -> str:
    """The name mem0 gives an index of ``collection``."""
    return f"{collection}_{suffix}"


def ensure_collection(store: Any) -> None:
    """Create a new store's table (and mem0's indexes) when it is missing.

    mem0 checks once per store, on the store's first call, and then trusts the table for the
    store's lifetime: a dropped table stays dropped for that store, so karani discards a
    store after any failure and calls this on every new one.
    """
    store.list(top_k=0)  # the cheapest public call; mem0 runs its check first


def adopt_store(memory: Any, store: Any) -> None:
    """Make ``memory`` (a ``mem0.Memory``) use ``store`` (karani's PGVector on its own pool)."""
    memory.vector_store = store
    memory.collection_name = store.collection_name


def detach_own_store(memory: Any) -> None:
    """Forget the PGVector ``Memory()`` built for itself on a pool it was handed: that spare's
    ``__del__`` would otherwise close the pool karani keeps using."""
    memory.vector_store.connection_pool = None


def use_llm_client(memory: Any, client: Any) -> None:
    """Send ``memory``'s LLM calls through ``client`` (an ``openai.OpenAI``): mem0 picks
    OpenRouter whenever OPENROUTER_API_KEY is set, whatever the configured base URL."""
    memory.llm.client = client


def strip_code_fences(reply: str) -> str:
    """The LLM's reply without Markdown code fences, as mem0 reads its own extraction replies."""
    from mem0.memory.utils import remove_code_blocks  # mem0 is optional (the memory extra)

    return remove_code_blocks(reply)


def json_in(text: str) -> str:
    """The JSON object within ``text`` (mem0's lenient reading of a chatty reply)."""
    from mem0.memory.utils import extract_json  # mem0 is optional (the memory extra)

    return extract_json(text)
