"""Semantic mode's ranking: the dense half (nearest vectors in the store, scoped in the store
query) fused with the lexical half (memory.lexical, on the ledger, so a fact is found the
moment its write commits); docs/semantic-index.md has the design and the measurements.
"""

import math
from concurrent.futures import Future, ThreadPoolExecutor

from memory import lexical
from memory.keyword import Hit
from memory.semantic.client import Client
from memory.semantic.config import GLOBAL_SENTINEL, MEM0_USER
from memory.semantic.encoder import embed_query
from memory.semantic.guard import guarded

# The dense half's share of the fused score (the lexical half has the rest), once each is
# put on its query's own scale: chosen by leave-one-conversation-out cross-validation on
# LoCoMo's development split (bench/recall_eval.py, docs/semantic-index.md).
DENSE_SHARE = 0.4
# Candidates per half. The z-scores depend on how many there are, so any limit up to 10
# ranks the same; a larger limit asks for more (a stale vector or a fact only one half
# ranks must not push the fused top ``limit`` short).
DEPTH = 30
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
    # The store's iterative scan returns rows in relaxed order, not strictly by score.
    for row in sorted(found, key=lambda r: -float(r.score)):
        ledger_id = (row.payload or {}).get("ledger_id")
        if isinstance(ledger_id, int) and ledger_id not in seen:
            seen.add(ledger_id)
            hits.append(Hit(memory_id=ledger_id, score=float(row.score)))
    return hits


def standardise(hits: list[Hit]) -> tuple[dict[int, float], float]:
    """Each hit's z-score within its list, and the score of a fact the list lacks (the
    list's lowest). A list without spread (one hit, or all tied) scores its hits 1, others 0."""
    if not hits:
        return {}, 0.0
    mean = sum(h.score for h in hits) / len(hits)
    spread = math.sqrt(sum((h.score - mean) ** 2 for h in hits) / len(hits))
    if spread == 0:
        return {h.memory_id: 1.0 for h in hits}, 0.0
    z = {h.memory_id: (h.score - mean) / spread for h in hits}
    return z, min(z.values())


def fuse(dense: list[Hit], words: list[Hit], *, dense_share: float = DENSE_SHARE) -> list[Hit]:
    """``dense_share`` of the cosine's z-score plus the rest of the idf coverage's, each within
    the query's own candidates; a fact one half lacks gets that half's lowest, ties go newer.

    z-scores put both on one scale whatever the query: a cosine's level varies with the
    query's phrasing, coverage's spread with how many rare words it has.
    """
    by_dense, dense_floor = standardise(dense)
    by_words, words_floor = standardise(words)
    scores = {
        pk: dense_share * by_dense.get(pk, dense_floor)
        + (1 - dense_share) * by_words.get(pk, words_floor)
        for pk in by_dense.keys() | by_words.keys()
    }
    order = sorted(scores.items(), key=lambda kv: (-kv[1], -kv[0]))
    return [Hit(memory_id=pk, score=score) for pk, score in order]


def search(*, query: str, company_key: str | None, limit: int) -> list[Hit]:
    """Hybrid candidates, best first (more than ``limit``). Raises SemanticUnavailable."""
    depth = max(DEPTH, limit * _OVERFETCH + _EXTRA)
    embedding: Future = guarded(lambda client: _encoder.submit(embed_query, client, query))
    words = lexical.search(query=query, company_key=company_key, limit=depth)
    dense = guarded(
        lambda client: nearest(client, embedding.result(), company_key=company_key, depth=depth)
    )
    return fuse(dense, words)
