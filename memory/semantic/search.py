"""Semantic recall through mem0's search, scoped in the store query, mapped to the ledger.

Hits carry ledger ids; the caller materialises them from LIVE rows only, so a stale index
(a vector whose fact was since forgotten) can never resurrect a deleted fact. We ask the
store for more than ``limit`` so that dropping such stale hits still leaves enough.
"""

from memory import keyword
from memory.semantic.client import Client
from memory.semantic.config import GLOBAL_SENTINEL, MEM0_USER
from memory.semantic.guard import guarded

# Shipped choice, measured by bench/semantic_quality.py (README, "Semantic index").
FUSE_WITH_KEYWORD = False
# Reciprocal rank fusion's damping constant (Cormack et al. 2009): 60 is the usual value and
# keeps one list's top rank from drowning the other's.
RRF_K = 60
_OVERFETCH = 2
_EXTRA = 10


def scope_filters(company_key: str | None) -> dict:
    """The company's facts plus global ones, never another company's: enforced by the store."""
    filters: dict = {"user_id": MEM0_USER}
    if company_key is not None:
        filters["company"] = {"in": [company_key, GLOBAL_SENTINEL]}
    return filters


def semantic_hits(client: Client, *, query: str, company_key: str | None, limit: int) -> list:
    found = client.memory.search(
        query,
        filters=scope_filters(company_key),
        top_k=limit * _OVERFETCH + _EXTRA,
        threshold=0.0,
    )
    hits: list[keyword.Hit] = []
    seen: set[int] = set()
    for item in found.get("results", []):
        ledger_id = (item.get("metadata") or {}).get("ledger_id")
        if not isinstance(ledger_id, int) or ledger_id in seen:
            continue  # extraction may store several vectors for one ledger row
        seen.add(ledger_id)
        hits.append(keyword.Hit(memory_id=ledger_id, score=float(item.get("score") or 0.0)))
    return hits


def fuse(*ranked: list[keyword.Hit]) -> list[keyword.Hit]:
    """Reciprocal rank fusion: each list adds 1 / (RRF_K + rank) for the facts it ranks."""
    scores: dict[int, float] = {}
    for hits in ranked:
        for rank, hit in enumerate(hits, start=1):
            scores[hit.memory_id] = scores.get(hit.memory_id, 0.0) + 1.0 / (RRF_K + rank)
    order = sorted(scores.items(), key=lambda kv: (-kv[1], -kv[0]))
    return [keyword.Hit(memory_id=mid, score=score) for mid, score in order]


def search(
    *, query: str, company_key: str | None, limit: int, fused: bool = FUSE_WITH_KEYWORD
) -> list[keyword.Hit]:
    """Ranked candidates (more than ``limit``). Raises SemanticUnavailable."""
    hits = guarded(
        lambda client: semantic_hits(client, query=query, company_key=company_key, limit=limit)
    )
    if not fused:
        return hits
    words = keyword.search(query=query, company_key=company_key, limit=limit * _OVERFETCH + _EXTRA)
    return fuse(hits, words)
