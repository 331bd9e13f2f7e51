"""Deterministic keyword recall over the token index (basic mode, and mem0's fallback).

Score = distinct query words found in the fact, plus ``COMPANY_BOOST`` when the fact's
company is named in the query. Ties go to the most recently seen fact, then the highest id,
so the same ledger and query always give the same order.
"""

from dataclasses import dataclass
from datetime import UTC, datetime

from django.db import connection
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from memory import bitmaps
from memory import text as textmod
from memory.models import Memory, MemoryToken

COMPANY_BOOST = 1
# Company names are matched as runs of up to this many words in the query.
_MAX_COMPANY_WORDS = 8
_MAX_QUERY_PIECES = 64
_EDGE_PUNCT = ".,;:!?\"'()[]{}<>«»“”‘’"


@dataclass(frozen=True)
class Hit:
    memory_id: int
    score: float


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
    """Company keys (of live facts, within scope) that the query names word for word."""
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
    the number of query words, not how common they are; ``search_aggregate`` is the same
    ranking from the token table, kept as the readable reference.
    """
    tokens = textmod.tokens(query)[: textmod.MAX_QUERY_TOKENS]
    candidates = company_candidates(query)
    if company_key is not None:
        named = [company_key] if company_key in candidates else []
    else:
        # Every candidate: a key that no live fact carries has no bits, so the bitmap read
        # itself tells which companies the query names (no query on the memories table).
        named = sorted(candidates)
    ranked = bitmaps.top_k(tokens=tokens, named=named, scope=company_key, limit=limit)
    return [Hit(memory_id=mid, score=float(score)) for mid, score in ranked]


def search_aggregate(*, query: str, company_key: str | None, limit: int) -> list[Hit]:
    """The same ranking from every posting of every query word: simple, exact, O(postings)."""
    tokens = textmod.tokens(query)[: textmod.MAX_QUERY_TOKENS]
    return _aggregate(tokens, named_company_keys(query, company_key), company_key, limit)


def _aggregate(
    tokens: list[str], named: list[str], company_key: str | None, limit: int
) -> list[Hit]:
    ranked: dict[int, tuple[int, datetime, int]] = {}

    if tokens:
        for memory_id, hits, boosted, last_seen in _token_hits(tokens, company_key, named, limit):
            ranked[memory_id] = (hits + (COMPANY_BOOST if boosted else 0), last_seen, memory_id)
    if named:
        # A fact of a named company scores the boost even when it shares no word with the
        # query. Its newest `limit` facts are enough: any of its facts with word hits that
        # could rank was already returned above, with the boost included.
        recent = (
            Memory.objects.filter(company_key__in=named)
            .order_by("-last_seen_at", "-id")
            .values_list("id", "last_seen_at")[:limit]
        )
        for memory_id, last_seen in recent:
            ranked.setdefault(memory_id, (COMPANY_BOOST, last_seen, memory_id))

    order = sorted(ranked.values(), key=lambda r: (r[0], r[1], r[2]), reverse=True)[:limit]
    return [Hit(memory_id=mid, score=float(score)) for score, _, mid in order]


def _token_hits(
    tokens: list[str], company_key: str | None, named: list[str], limit: int
) -> list[tuple[int, int, bool, datetime]]:
    # Aggregate postings first, then join the (few) aggregated ids to the facts for the
    # recency tie-break: the memories table is only touched by primary key.
    tok_ph = ", ".join(["%s"] * len(tokens))
    params: list[object] = list(tokens)
    scope_sql = ""
    if company_key is not None:
        scope_sql = " AND (t.company_key = %s OR t.company_key IS NULL)"
        params.append(company_key)
    boost_sql = "0"
    boost_params: list[object] = []
    if named:
        boost_sql = (
            f"CASE WHEN m.company_key IN ({', '.join(['%s'] * len(named))}) THEN 1 ELSE 0 END"
        )
        boost_params = list(named)
    tokens_table = MemoryToken._meta.db_table
    memories_table = Memory._meta.db_table
    sql = f"""
        SELECT m.id, h.hits, {boost_sql} AS boosted, m.last_seen_at
        FROM (
            SELECT t.memory_id, COUNT(*) AS hits
            FROM {tokens_table} t
            WHERE t.token IN ({tok_ph}){scope_sql}
            GROUP BY t.memory_id
        ) h
        JOIN {memories_table} m ON m.id = h.memory_id
        WHERE m.deleted_at IS NULL
        ORDER BY h.hits + {boost_sql} * {COMPANY_BOOST} DESC, m.last_seen_at DESC, m.id DESC
        LIMIT %s
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [*boost_params, *params, *boost_params, limit])
        rows = cursor.fetchall()
    out = []
    for memory_id, hits, boosted, last_seen in rows:
        if isinstance(last_seen, str):  # SQLite hands raw SQL results back as text...
            last_seen = parse_datetime(last_seen)
        if timezone.is_naive(last_seen):  # ...or as naive UTC datetimes
            last_seen = timezone.make_aware(last_seen, UTC)
        out.append((memory_id, int(hits), bool(boosted), last_seen))
    return out
