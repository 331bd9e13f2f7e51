"""Idf-weighted word coverage over the ledger's own full-text index: the lexical half of
semantic mode's hybrid recall.

Unlike keyword recall (memory.keyword: one point per shared word, the deterministic
fallback), a word here weighs what it tells apart: a rare name outweighs a common word. A
fact's score is the share of the query's idf mass it holds:

    score(fact) = sum of idf(w) over query words w in the fact / sum of idf(w) over all of them
    idf(w) = ln(1 + (N - df(w) + 0.5) / (df(w) + 0.5))     (BM25's idf, never negative)

on the ledger's ``terms`` (each fact's distinct content words, memory.text.tokens), with N
and df over every live fact; the scope only filters which facts are returned. The score is
0 to 1 whatever the query, which is what the hybrid adds to a cosine. BM25's length
normalisation was measured and left out: it ranked long facts holding the words lower, and
lost on the development data (docs/semantic-index.md). tests/test_semantic_full_text.py
holds the same ranking in plain Python as the reference both databases must match.

The query has the shape of keyword recall's: one index lookup per query word (the partial
GIN index on PostgreSQL, FTS5 on SQLite; migration 0012), weighted, summed per fact. It
reads the ledger, so a fact is found the moment its write commits, whatever the semantic
index is doing.
"""

import math
import threading
import time

from django.db import connection

from memory import text as textmod
from memory.keyword import Hit

# N moves slowly and the idf barely notices: counting every live fact on each recall would
# cost more than the ranking itself.
STATS_SECONDS = 60.0

SCALE = 1_000_000_000
_stats_lock = threading.Lock()
_stats: dict[str, tuple[float, int]] = {}

# The live facts carrying one word, as keyword recall finds them.
_WORD_MATCH = {
    "postgresql": (
        "SELECT id FROM memories WHERE deleted_at IS NULL"
        " AND string_to_array(terms, ' ') @> ARRAY[%s]::text[]"
    ),
    "sqlite": "SELECT rowid AS id FROM memories_fts WHERE memories_fts MATCH %s",
}


def query_words(query: str) -> list[str]:
    return textmod.tokens(query)[: textmod.MAX_QUERY_TOKENS]


def idf(count: int, df: int) -> float:
    # A cached N below a fresh df (facts written since) must not make a weight negative.
    return math.log(1 + max(count - df, 0) / (df + 0.5) + 0.5 / (df + 0.5))


def _live_count() -> int:
    """Live facts, cached per database for STATS_SECONDS."""
    key = connection.settings_dict["NAME"]
    now = time.monotonic()
    cached = _stats.get(key)
    if cached and now - cached[0] < STATS_SECONDS:
        return cached[1]
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memories WHERE deleted_at IS NULL")
        count = int(cursor.fetchone()[0])
    with _stats_lock:
        _stats[key] = (now, count)
    return count


def forget_stats() -> None:
    """Drop the cached N (tests load a ledger and rank at once)."""
    with _stats_lock:
        _stats.clear()


def _word_param(word: str) -> str:
    if connection.vendor == "sqlite":
        # One quoted FTS5 phrase, so no word is read as an operator.
        return '"' + word.replace('"', '""') + '"'
    return word


def weights(words: list[str]) -> list[float]:
    """Each word's idf, from one statement counting the live facts that hold it."""
    match = _WORD_MATCH[connection.vendor]
    sql = " UNION ALL ".join(
        f"SELECT {i} AS word, count(*) AS df FROM ({match}) AS m{i}" for i in range(len(words))
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [_word_param(w) for w in words])
        df = dict(cursor.fetchall())
    count = _live_count()
    return [idf(count, int(df.get(i, 0))) for i in range(len(words))]


def search(*, query: str, company_key: str | None, limit: int) -> list[Hit]:
    """Top ``limit`` live facts by the share of the query's idf they hold, within the scope,
    best first; ties go to the newer fact."""
    words = query_words(query)
    if not words:
        return []
    weight = weights(words)
    mass = sum(weight)
    match = _WORD_MATCH[connection.vendor]
    parts, params = [], []
    for word, w in zip(words, weight, strict=True):
        parts.append(f"SELECT id, %s AS w FROM ({match}) AS one")
        # Whole units: a sum of integers is the same in any order, so facts holding the same
        # words tie exactly and the tie-break decides, on every database.
        params += [round(w / mass * SCALE), _word_param(word)]
    scope = ""
    if company_key is not None:
        scope = " AND (m.company_key = %s OR m.company_key IS NULL)"
        params.append(company_key)
    sql = (
        f"SELECT m.id, hits.score FROM (SELECT id, SUM(w) AS score FROM"
        f" ({' UNION ALL '.join(parts)}) AS words GROUP BY id) AS hits"
        f" JOIN memories m ON m.id = hits.id WHERE m.deleted_at IS NULL{scope}"
        " ORDER BY hits.score DESC, m.id DESC LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, limit])
        rows = cursor.fetchall()
    return [Hit(memory_id=pk, score=int(score) / SCALE) for pk, score in rows]
