"""BM25 over the ledger's own full-text index: the lexical half of semantic mode's hybrid recall.

Unlike keyword recall (memory.keyword: one point per shared word, the deterministic
fallback), a word here weighs what it tells apart: a rare name outweighs a common word, and
a short fact holding it outweighs a long one. The ranking is FTS5's ``bm25()`` with its
defaults (k1 1.2, b 0.75), on the ledger's ``terms`` (each fact's distinct content words,
memory.text.tokens), so every term frequency is 1:

    score(fact) = sum over query words w in the fact of
                  idf(w) * (k1 + 1) / (1 + k1 * (1 - b + b * words(fact) / average words))
    idf(w) = max(ln((N - df(w) + 0.5) / (df(w) + 0.5)), 1e-6)

N, df and the average are over every live fact (the index's own statistics), and the scope
only filters which facts are returned. SQLite computes it in FTS5 itself; PostgreSQL in one
statement over the GIN index (migration 0012), with N and the average length read at most
every STATS_SECONDS. ``normalised_search`` divides each score by the query's idf mass (the
sum of idf over every query word, held by a fact or not): the share of what the query says
that a fact says, on a scale that means the same for every query (0 to about 1.7), which is
what the hybrid adds to a cosine. tests/test_semantic_full_text.py holds the same ranking
in plain Python as the reference both databases must match. Reads the ledger, so a fact is
found the moment its write commits, whatever the semantic index is doing.
"""

import math
import threading
import time

from django.db import connection

from memory import text as textmod
from memory.keyword import Hit

K1 = 1.2
B = 0.75
# N and the average length move slowly and BM25 barely notices: counting every live fact
# on each recall would cost more than the ranking itself.
STATS_SECONDS = 60.0

_stats_lock = threading.Lock()
_stats: dict[str, tuple[float, int, float]] = {}

_SQLITE = (
    "SELECT m.id, -bm25(memories_fts) AS score FROM memories_fts"
    " JOIN memories m ON m.id = memories_fts.rowid"
    " WHERE memories_fts MATCH %s AND m.deleted_at IS NULL{scope}"
    " ORDER BY score DESC, m.id DESC LIMIT %s"
)
# The candidates (live facts holding any query word) come from the partial GIN index; df is
# counted over them, so it is exact.
_POSTGRES = (
    "WITH cand AS (SELECT id, company_key, string_to_array(terms, ' ') AS words"
    " FROM memories WHERE deleted_at IS NULL AND string_to_array(terms, ' ') && %(words)s::text[]),"
    " df AS (SELECT w.word, count(*) AS n FROM unnest(%(words)s::text[]) AS w(word)"
    " JOIN cand ON cand.words @> ARRAY[w.word] GROUP BY w.word)"
    " SELECT c.id, sum(greatest(ln((%(n)s - df.n + 0.5) / (df.n + 0.5)), 1e-6))"
    " * %(k1p1)s / (1 + %(k1)s * (1 - %(b)s + %(b)s * cardinality(c.words) / %(avg)s)) AS score,"
    " (SELECT sum(greatest(ln((%(n)s - coalesce(d.n, 0) + 0.5) / (coalesce(d.n, 0) + 0.5)),"
    " 1e-6)) FROM unnest(%(words)s::text[]) AS q(word) LEFT JOIN df d ON d.word = q.word) AS mass"
    " FROM cand c JOIN df ON c.words @> ARRAY[df.word]{scope}"
    " GROUP BY c.id, c.words ORDER BY score DESC, c.id DESC LIMIT %(limit)s"
)


def query_words(query: str) -> list[str]:
    return textmod.tokens(query)[: textmod.MAX_QUERY_TOKENS]


def _ledger_stats() -> tuple[int, float]:
    """(live facts, average words per live fact) on PostgreSQL, cached for STATS_SECONDS."""
    key = connection.settings_dict["NAME"]
    now = time.monotonic()
    cached = _stats.get(key)
    if cached and now - cached[0] < STATS_SECONDS:
        return cached[1], cached[2]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*), coalesce(avg(cardinality(string_to_array(terms, ' '))), 0)"
            " FROM memories WHERE deleted_at IS NULL"
        )
        count, average = cursor.fetchone()
    with _stats_lock:
        _stats[key] = (now, int(count), float(average))
    return int(count), float(average)


def forget_stats() -> None:
    """Drop the cached statistics (tests load a ledger and rank at once)."""
    with _stats_lock:
        _stats.clear()


def idf(count: int, df: int) -> float:
    return max(math.log((count - df + 0.5) / (df + 0.5)), 1e-6)


def _fts_phrase(word: str) -> str:
    # One quoted phrase, so no word is read as an FTS5 operator.
    return '"' + word.replace('"', '""') + '"'


def _rank(words: list[str], company_key: str | None, limit: int) -> tuple[list[tuple], float]:
    """(id, BM25) rows, best first, and the query's idf mass."""
    if connection.vendor == "postgresql":
        count, average = _ledger_stats()
        scope = " AND (c.company_key = %(company)s OR c.company_key IS NULL)"
        params = {
            "words": words,
            "n": count,
            "k1p1": K1 + 1,
            "k1": K1,
            "b": B,
            "avg": max(average, 1e-9),
            "company": company_key,
            "limit": limit,
        }
        with connection.cursor() as cursor:
            cursor.execute(_POSTGRES.format(scope=scope if company_key else ""), params)
            rows = cursor.fetchall()
        if rows:
            return [(pk, score) for pk, score, _ in rows], float(rows[0][2])
        return [], sum(idf(count, 0) for _ in words)
    scope = " AND (m.company_key = %s OR m.company_key IS NULL)" if company_key else ""
    with connection.cursor() as cursor:
        cursor.execute(
            _SQLITE.format(scope=scope),
            [" OR ".join(_fts_phrase(w) for w in words)]
            + ([company_key] if company_key else [])
            + [limit],
        )
        rows = cursor.fetchall()
        mass = 0.0
        if rows:  # without a match the mass divides nothing
            # N as FTS5's bm25() just used it (the live facts now), not the cached figure.
            cursor.execute("SELECT count(*) FROM memories WHERE deleted_at IS NULL")
            count = cursor.fetchone()[0]
            for word in words:
                cursor.execute(
                    "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH %s",
                    [_fts_phrase(word)],
                )
                mass += idf(count, cursor.fetchone()[0])
    return rows, mass


def search(*, query: str, company_key: str | None, limit: int) -> list[Hit]:
    """Top ``limit`` live facts for ``query`` by BM25, within the scope, best first."""
    words = query_words(query)
    if not words:
        return []
    rows, _ = _rank(words, company_key, limit)
    return [Hit(memory_id=pk, score=float(score)) for pk, score in rows]


def normalised_search(*, query: str, company_key: str | None, limit: int) -> list[Hit]:
    """``search``, each score divided by the query's idf mass (see the module docstring)."""
    words = query_words(query)
    if not words:
        return []
    rows, mass = _rank(words, company_key, limit)
    return [Hit(memory_id=pk, score=float(score) / mass) for pk, score in rows]
