"""Deterministic keyword recall over the term bitmaps (basic mode, and mem0's fallback).

Score = distinct query words found in the fact, plus ``COMPANY_BOOST`` when the fact's
company is named in the query. Ties go to the most recently seen fact, then the highest id,
so the same ledger and query always give the same order.
"""

from dataclasses import dataclass

from memory import bitmaps
from memory import text as textmod
from memory.models import Memory

COMPANY_BOOST = 1
# Company names are matched as runs of up to this many words in the query.
_MAX_COMPANY_WORDS = 8
_MAX_QUERY_PIECES = 64
_EDGE_PUNCT = ".,;:!?\"'()[]{}<>«»“”‘’"


# What recall shows of a fact, in this order. On Postgres the ranking reads these rows along
# with its tie-break (bitmaps.top_k), so services._materialise has nothing left to fetch.
ROW_FIELDS = ("id", "text", "kind", "company", "ref", "created_at", "last_seen_at")


@dataclass(frozen=True)
class Hit:
    memory_id: int
    score: float
    # ROW_FIELDS of the live fact, when the ranking already read them.
    row: tuple | None = None


def company_candidates(query: str) -> set[str]:
    """Every run of up to eight query words, as a company key: what the query may name."""
    pieces = textmod.company_key(query).split(" ")[:_MAX_QUERY_PIECES]
    candidates: set[str] = set()
    for start in range(len(pieces)):
        for end in range(start + 1, min(start + _MAX_COMPANY_WORDS, len(pieces)) + 1):
            run = " ".join(pieces[start:end])
            candidates.add(run)
            candidates.add(run.strip(_EDGE_PUNCT))
    candidates.discard("")
    return candidates


def named_company_keys(query: str, scope_key: str | None) -> list[str]:
    """Company keys (of live facts, within scope) that the query names word for word.

    The readable definition, used by the naive scan (bench/recall_bench.py) and the
    equivalence tests; search() gets the same answer from the bitmap read itself.
    """
    candidates = company_candidates(query)
    if scope_key is not None:
        return [scope_key] if scope_key in candidates else []
    if not candidates:
        return []
    found = (
        Memory.objects.filter(company_key__in=candidates)
        .values_list("company_key", flat=True)
        .distinct()
    )
    return sorted(found)


def search(*, query: str, company_key: str | None, limit: int) -> list[Hit]:
    """Top ``limit`` live facts for ``query`` within the scope, best first.

    Scores every fact at once from the term bitmaps (memory.bitmaps), so the cost follows
    the number of query words, not how common they are. tests/test_ledger_recall_equivalence
    holds the readable reference: the same ranking computed in Python from every fact.
    """
    tokens = textmod.tokens(query)[: textmod.MAX_QUERY_TOKENS]
    candidates = company_candidates(query)
    if company_key is not None:
        named = [company_key] if company_key in candidates else []
    else:
        # Every candidate: a key that no live fact carries has no bits, so the bitmap read
        # itself tells which companies the query names (no query on the memories table).
        named = sorted(candidates)
    ranked = bitmaps.top_k(
        tokens=tokens, named=named, scope=company_key, limit=limit, columns=ROW_FIELDS
    )
    return [Hit(memory_id=mid, score=float(score), row=row) for mid, score, row in ranked]
