"""Semantic mode's ranking: the dense half (the local model's embedding, nearest vectors in
the store, scoped in the store query) fused with the lexical half (BM25 over the ledger's
own full-text index, memory.lexical). docs/semantic-index.md has the design and the
measurements that chose the fusion (bench/recall_eval.py).

The lexical half reads the ledger, so a fact is recalled the moment its write commits, even
while its vector is pending. Any failure of the dense half raises SemanticUnavailable (the
caller falls back to keyword recall). Hits carry ledger ids; the caller materialises live
rows only, so a stale vector of a forgotten fact never resurrects it.
"""

from concurrent.futures import Future, ThreadPoolExecutor

from memory import lexical
from memory.keyword import Hit
from memory.semantic.client import Client
from memory.semantic.config import GLOBAL_SENTINEL, MEM0_USER
from memory.semantic.encoder import embed_query
from memory.semantic.guard import guarded

# How much the lexical half counts beside the cosine: chosen on the development data
# (bench/recall_eval.py, docs/semantic-index.md).
LEXICAL_WEIGHT = 1.0
# Each half is asked for more than ``limit``: a stale vector or a fact only one half ranks
# must not push the fused top ``limit`` short.
_OVERFETCH = 2
_EXTRA = 10
# The query embedding (CPU, torch releases the GIL) runs here while the calling thread asks
# the ledger for the lexical half; Django's connection stays on the calling thread.
_encoder = ThreadPoolExecutor(max_workers=2, thread_name_prefix="karani-embed")


def scope_filters(company_key: str | None) -> dict:
    """The company's facts plus global ones, never another company's: enforced by the store."""
    filters: dict = {"user_id": MEM0_USER}
    if company_key is not None:
        filters["company"] = {"in": [company_key, GLOBAL_SENTINEL]}
    return filters


def nearest(client: Client, vector: object, *, company_key: str | None, depth: int) -> list[Hit]:
    """Ledger ids of the nearest vectors in scope, by cosine similarity, best first; several
    vectors of one ledger row (extraction can make them) count once, at their best."""
    found = client.store.search(
        query="", vectors=vector, top_k=depth, filters=scope_filters(company_key)
    )
    hits: list[Hit] = []
    seen: set[int] = set()
    for row in found:
        ledger_id = (row.payload or {}).get("ledger_id")
        if isinstance(ledger_id, int) and ledger_id not in seen:
            seen.add(ledger_id)
            hits.append(Hit(memory_id=ledger_id, score=float(row.score)))
    return hits


def fuse(dense: list[Hit], words: list[Hit], *, weight: float = LEXICAL_WEIGHT) -> list[Hit]:
    """Cosine plus ``weight`` times the share of the query's idf a fact holds (memory.lexical).

    Both are on absolute scales, so a weak match on either side stays weak: a paraphrase
    whose words only brush unrelated facts keeps its dense order, and a fact holding the
    query's rare words rises. A fact one half did not return scores 0 on that half (a
    pending fact has no vector yet). Ties go to the newer fact.
    """
    scores: dict[int, float] = {}
    for hit in dense:
        scores[hit.memory_id] = hit.score
    for hit in words:
        scores[hit.memory_id] = scores.get(hit.memory_id, 0.0) + weight * hit.score
    order = sorted(scores.items(), key=lambda kv: (-kv[1], -kv[0]))
    return [Hit(memory_id=pk, score=score) for pk, score in order]


def search(*, query: str, company_key: str | None, limit: int) -> list[Hit]:
    """Hybrid candidates, best first (more than ``limit``). Raises SemanticUnavailable."""
    depth = limit * _OVERFETCH + _EXTRA
    embedding: Future = guarded(lambda client: _encoder.submit(embed_query, client, query))
    words = lexical.search(query=query, company_key=company_key, limit=depth)
    dense = guarded(
        lambda client: nearest(client, embedding.result(), company_key=company_key, depth=depth)
    )
    return fuse(dense, words)
