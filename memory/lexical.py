"""Idf-weighted word coverage over the ledger's full-text index: the lexical half of semantic
mode's hybrid recall. Unlike keyword recall (one point per shared word), a rare name outweighs
a common word; a fact's score is the share of the query's idf mass it holds, 0 to 1:

    score(fact) = sum of idf(w) over query words w in the fact / sum of idf(w) over all of them
    idf(w) = ln(1 + (N - df(w) + 0.5) / (df(w) + 0.5))     (BM25's idf, never negative)

on the ledger's ``terms``, with N and df over every live fact (a frequent word's df estimated
from PostgreSQL's statistics on a large ledger); the scope only filters which facts are
returned. BM25's length normalisation lost on the development data (docs/semantic-index.md);
tests/test_semantic_full_text.py holds the ranking in plain Python. Candidates come from the
full-text index, so a fact is found the moment its write commits, whatever the semantic
index is doing.
"""

import math
import threading
from collections.abc import Callable
from itertools import accumulate
from typing import Any

from django.db import connection

from memory import clock
from memory import text as textmod
from memory.keyword import MATCH, WORD_MATCH, Hit, scope_filter, word_param

# N moves slowly and the idf barely notices: counting every live fact on each recall would
# cost more than the ranking itself.
STATS_SECONDS = 60.0
# Likewise a common word's df: a few hundred writes move its idf by under a percent, and
# counting one costs a read of thousands of facts (the largest part of a cold recall).
COMMON_STATS_SECONDS = 900.0

# A word held by more live facts than this draws no candidates of its own (it still counts
# in every candidate's score): reading a common word's postings was most of a query's cost.
COMMON_POSTINGS = 2000
# Past this many candidates, first ask for the best-scoring few: about TIER_TARGET times the
# limit, picked among up to MAX_TIER_WORDS words (every subset of them is weighed).
TIERED_ABOVE = 1000
TIER_TARGET = 8
MAX_TIER_WORDS = 8
# From this many live facts, PostgreSQL's own statistics (ANALYZE's most common elements of
# term_vec) give the df of a word they put above ESTIMATED_POSTINGS: counting one reads that
# many facts, and a sample of 30,000 rows estimates it within a few percent.
ESTIMATE_ABOVE = 20_000
ESTIMATED_POSTINGS = 500
MAX_CACHED_WORDS = 50_000
SCALE = 1_000_000_000
_stats_lock = threading.Lock()
_stats: dict[str, tuple[float, int]] = {}
_df: dict[tuple[str, str], tuple[float, int]] = {}  # (database, word): (good until, df)
_shares: dict[str, tuple[float, dict[str, float]]] = {}  # database: (read at, word: share)


def idf(count: int, df: int) -> float:
    # A cached N below a fresh df (facts written since) must not make a weight negative.
    return math.log(1 + max(count - df, 0) / (df + 0.5) + 0.5 / (df + 0.5))


def _per_database(store: dict, seconds: float, sql: str, read: Callable[[Any], Any]) -> Any:
    """``read(cursor)`` after ``sql``, kept per database for ``seconds``."""
    key = connection.settings_dict["NAME"]
    now = clock.monotonic()
    cached = store.get(key)
    if cached and now - cached[0] < seconds:
        return cached[1]
    with connection.cursor() as cursor:
        cursor.execute(sql)
        value = read(cursor)
    with _stats_lock:
        store[key] = (now, value)
    return value


def _live_count() -> int:
    """Live facts, cached per database for STATS_SECONDS."""
    return _per_database(
        _stats,
        STATS_SECONDS,
        "SELECT count(*) FROM memories WHERE deleted_at IS NULL",
        lambda cursor: int(cursor.fetchone()[0]),
    )


def forget_stats() -> None:
    """Drop the cached N and document frequencies (tests load a ledger and rank at once)."""
    with _stats_lock:
        _stats.clear()
        _df.clear()
        _shares.clear()


def _shares_of(cursor: Any) -> dict[str, float]:
    row = cursor.fetchone()
    # The frequencies list ends with a few summary numbers: zip stops at the last word.
    return dict(zip(row[0], row[1], strict=False)) if row and row[0] else {}


def common_shares() -> dict[str, float]:
    """The share of facts holding each of the ledger's most common words, as PostgreSQL's
    last ANALYZE of ``term_vec`` estimated it from a sample (empty before the first)."""
    return _per_database(
        _shares,
        COMMON_STATS_SECONDS,
        "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats"
        " WHERE schemaname = current_schema() AND tablename = 'memories'"
        " AND attname = 'term_vec'",
        _shares_of,
    )


def document_frequencies(words: list[str]) -> list[int]:
    """How many live facts hold each word; cached per word like N (a common word longer).
    Past ESTIMATE_ABOVE facts on PostgreSQL, a frequent word's count is its sampled share."""
    db = connection.settings_dict["NAME"]
    now = clock.monotonic()
    known = {w: _df.get((db, w)) for w in words}
    fresh = [w for w, hit in known.items() if not hit or now >= hit[0]]
    if fresh and connection.vendor == "postgresql" and (count := _live_count()) >= ESTIMATE_ABOVE:
        shares = common_shares()
        for word in list(fresh):
            estimate = round(shares.get(word, 0.0) * count)
            if estimate > ESTIMATED_POSTINGS:
                known[word] = (now + COMMON_STATS_SECONDS, estimate)
                fresh.remove(word)
                with _stats_lock:
                    _df[(db, word)] = known[word]
    if fresh:
        match = WORD_MATCH[connection.vendor]
        sql = " UNION ALL ".join(
            f"SELECT {i} AS word, count(*) AS df FROM ({match}) AS m{i}" for i in range(len(fresh))
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [word_param(w) for w in fresh])
            counted = dict(cursor.fetchall())
        with _stats_lock:
            if len(_df) > MAX_CACHED_WORDS:
                _df.clear()
            for i, word in enumerate(fresh):
                df = int(counted.get(i, 0))
                lifetime = COMMON_STATS_SECONDS if df > COMMON_POSTINGS else STATS_SECONDS
                known[word] = (now + lifetime, df)
                # A word no fact holds yet is counted again next time: the fact that brings
                # it must be found the moment it is written.
                if df:
                    _df[(db, word)] = known[word]
    return [known[w][1] for w in words]


def search(*, query: str, company_key: str | None, limit: int) -> list[Hit]:
    """Top ``limit`` live facts in scope by the share of the query's idf they hold, best first,
    ties to the newer fact. Candidates hold one of the query's uncommon words (in at most
    COMMON_POSTINGS live facts), or its rarest word when every word is common."""
    words = textmod.tokens(query)[: textmod.MAX_QUERY_TOKENS]
    dfs = document_frequencies(words) if words else []
    held = {w: d for w, d in zip(words, dfs, strict=True) if d > 0}
    if not held:
        return []
    count = _live_count()
    mass = sum(idf(count, d) for d in dfs)
    # Whole units: a sum of integers is the same in any order, so facts holding the same
    # words tie exactly and the tie-break decides, on every database.
    units = {w: round(idf(count, d) / mass * SCALE) for w, d in held.items()}
    drawing = [w for w, d in held.items() if d <= COMMON_POSTINGS] or [min(held, key=held.get)]
    if sum(held[w] for w in drawing) > TIERED_ABOVE:
        share = {w: min(d / max(count, 1), 1.0) for w, d in held.items()}
        tier = _top_tier(units, share, drawing, TIER_TARGET * limit / max(count, 1))
        hits = _ranked(units, tier, company_key, limit) if tier else []
        if len(hits) >= limit:
            return hits
    return _ranked(units, [[w] for w in drawing], company_key, limit)


def _top_tier(
    units: dict[str, int], share: dict[str, float], drawing: list[str], wanted: float
) -> list[list[str]] | None:
    """The candidates scoring at least the highest floor that a ``wanted`` share of facts
    reaches (the words taken as independent), as the smallest word sets reaching it; None
    when that is every candidate. Each candidate outside scores below each one inside."""
    if len(units) > MAX_TIER_WORDS:
        return None
    sets: dict[frozenset[str], int] = {}
    expected = []
    for mask in range(1, 1 << len(units)):
        chosen = frozenset(w for i, w in enumerate(units) if mask >> i & 1)
        if not chosen.isdisjoint(drawing):
            sets[chosen] = sum(units[w] for w in chosen)
            odds = math.prod(share[w] if w in chosen else 1 - share[w] for w in units)
            expected.append((sets[chosen], odds))
    expected.sort(reverse=True)
    reached = accumulate(odds for _, odds in expected)
    floor = next(
        (score for (score, _), r in zip(expected, reached, strict=True) if r >= wanted), -1
    )
    if floor <= expected[-1][0]:
        return None
    return [
        [w for w in units if w in chosen]
        for chosen, score in sets.items()
        if score >= floor and all(sets.get(chosen - {w}, -1) < floor for w in chosen)
    ]


def _ranked(
    units: dict[str, int], sets: list[list[str]], company_key: str | None, limit: int
) -> list[Hit]:
    """Live facts in scope holding every word of one of ``sets``, by summed units."""
    match, either, both = MATCH[connection.vendor]
    position = "strpos" if connection.vendor == "postgresql" else "instr"
    terms, params = [], []
    for word, unit in units.items():
        terms.append(f"CASE WHEN {position}(' ' || m.terms || ' ', %s) > 0 THEN %s ELSE 0 END")
        params += [f" {word} ", unit]
    if len(sets) == 1 and len(sets[0]) == len(units):
        # Every candidate holds every word: a constant score, so the newest come first
        # straight from the primary key, not from sorting every candidate.
        terms, params = [str(sum(units.values()))], []
    params.append(either.join(f"({both.join(map(word_param, words))})" for words in sets))
    scope, scope_params = scope_filter(company_key)
    sql = (
        f"SELECT m.id, ({' + '.join(terms)}) AS score FROM memories m"
        f" WHERE {match} AND m.deleted_at IS NULL{scope}"
        " ORDER BY score DESC, m.id DESC LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, *scope_params, limit])
        rows = cursor.fetchall()
    return [Hit(memory_id=pk, score=int(score) / SCALE) for pk, score in rows]
