"""Deterministic keyword recall (basic mode, and the semantic index's fallback).

Score = distinct query words found in the fact, plus ``COMPANY_BOOST`` when the fact's
company is named in the query. Ties go to the most recently seen fact, then the highest id,
so the same ledger and query always give the same order. The database's own full-text index
finds the facts carrying each word (docs/keyword-recall.md); counting them is the score.
"""

from dataclasses import dataclass
from itertools import combinations

from django.db import connection

from memory import text as textmod
from memory.models import Memory

COMPANY_BOOST = 1
# Company names are matched as runs of up to this many words in the query.
_MAX_COMPANY_WORDS = 8
_MAX_QUERY_PIECES = 64
_EDGE_PUNCT = ".,;:!?\"'()[]{}<>«»“”‘’"

# What recall shows of a fact, in this order.
ROW_FIELDS = ("id", "text", "kind", "company", "ref", "created_at", "last_seen_at")

# The live facts carrying one word, per database: a GIN index over the words' tsvector on
# PostgreSQL (migration 0013), the FTS5 table on SQLite (migration 0012).
WORD_MATCH = {
    "postgresql": "SELECT id FROM memories WHERE deleted_at IS NULL AND term_vec @@ %s::tsquery",
    "sqlite": "SELECT rowid AS id FROM memories_fts WHERE memories_fts MATCH %s",
}
# Up to this many distinct words, PostgreSQL first ranks only the facts scoring 2 or more.
_MAX_PAIRED_WORDS = 8


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


def word_param(token: str) -> str:
    """One word as a literal the vendor's full-text match reads as that word and nothing else."""
    if connection.vendor == "sqlite":
        return '"' + token.replace('"', '""') + '"'
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def _in_list(values: list[str]) -> str:
    return "(" + ", ".join(["%s"] * len(values)) + ")"


def _postgres_query(
    tokens: list[str], named: list[str], scope: str | None, columns: str, strong: bool
) -> tuple[str, list]:
    # One pass over the GIN index's candidates, scoring each row as it is read. ``strong``
    # keeps only rows scoring 2 or more (two words, or a word and a named company), so a
    # query of common words reads a fraction of the rows when that fraction fills the limit.
    words = sorted(set(tokens))
    score, params, where, where_params = "0", [], [], []
    if words:
        score = "length(m.term_vec) - length(ts_delete(m.term_vec, %s::text[]))"
        params.append(words)
        any_word = " | ".join(word_param(w) for w in words)
        pairs = (f"({word_param(a)} & {word_param(b)})" for a, b in combinations(words, 2))
        where.append("m.term_vec @@ %s::tsquery")
        where_params.append(" | ".join(pairs) if strong else any_word)
    if named:
        score += f" + COALESCE(m.company_key IN {_in_list(named)}, false)::int"
        params += named
        if strong:
            where.append(f"(m.company_key IN {_in_list(named)} AND m.term_vec @@ %s::tsquery)")
            where_params += [*named, any_word]
        elif not strong:
            where.append(f"m.company_key IN {_in_list(named)}")
            where_params += named
    scope_sql = ""
    if scope is not None:
        scope_sql = " AND (m.company_key = %s OR m.company_key IS NULL)"
        where_params.append(scope)
    sql = (
        f"SELECT {columns}, {score} AS score FROM memories m"
        f" WHERE m.deleted_at IS NULL AND ({' OR '.join(where)}){scope_sql}"
        " ORDER BY score DESC, m.last_seen_at DESC, m.id DESC LIMIT %s"
    )
    return sql, params + where_params


def _sqlite_query(
    tokens: list[str], named: list[str], scope: str | None, columns: str
) -> tuple[str, list]:
    # One FTS5 lookup per word; a fact's score is how many of the lookups found it.
    parts = [WORD_MATCH["sqlite"]] * len(tokens)
    params: list = [word_param(t) for t in tokens]
    if named:
        # One more point for each fact of a company the query names.
        parts.append(
            f"SELECT id FROM memories WHERE deleted_at IS NULL AND company_key IN {_in_list(named)}"
        )
        params += named
    scope_sql = ""
    if scope is not None:
        scope_sql = " AND (m.company_key = %s OR m.company_key IS NULL)"
        params.append(scope)
    sql = (
        f"SELECT {columns}, hits.score FROM (SELECT id, COUNT(*) AS score"
        f" FROM ({' UNION ALL '.join(parts)}) AS words GROUP BY id) AS hits"
        f" JOIN memories m ON m.id = hits.id WHERE m.deleted_at IS NULL{scope_sql}"
        " ORDER BY hits.score DESC, m.last_seen_at DESC, m.id DESC LIMIT %s"
    )
    return sql, params


def search(*, query: str, company_key: str | None, limit: int) -> list[Hit]:
    """Top ``limit`` live facts for ``query`` within the scope, best first.

    tests/test_ledger_recall_equivalence holds the readable reference: the same ranking
    computed in Python from every fact.
    """
    tokens = textmod.tokens(query)[: textmod.MAX_QUERY_TOKENS]
    # Which runs of the query are companies the ledger knows (one indexed look-up when
    # unscoped), so the ranking compares each candidate with a name or two, not every run.
    named = named_company_keys(query, company_key)
    if not tokens and not named:
        return []
    columns = ", ".join(f"m.{name}" for name in ROW_FIELDS)
    if connection.vendor == "postgresql":
        # Every fact scoring 2 or more outranks every fact scoring 1, so when the strong
        # ones fill the limit they are the answer; otherwise rank every candidate.
        paired = 2 <= len(set(tokens)) <= _MAX_PAIRED_WORDS
        plans = [_postgres_query(tokens, named, company_key, columns, strong=True)] * paired
        plans.append(_postgres_query(tokens, named, company_key, columns, strong=False))
    else:
        plans = [_sqlite_query(tokens, named, company_key, columns)]
    for sql, params in plans:
        # raw() runs the database's own query and still converts each column as the ORM would.
        facts = list(Memory.all_objects.raw(sql, [*params, limit]))
        if len(facts) >= limit:
            break
    return [
        Hit(
            memory_id=fact.pk,
            score=float(fact.score),
            row=tuple(getattr(fact, name) for name in ROW_FIELDS),
        )
        for fact in facts
    ]


def index_missing() -> str | None:
    """Why keyword recall cannot work on this ledger (its index is gone), or None."""
    probe = {
        "postgresql": "SELECT to_regclass('memories_live_words') IS NOT NULL",
        "sqlite": "SELECT count(*) > 0 FROM sqlite_master WHERE name = 'memories_fts'",
    }[connection.vendor]
    with connection.cursor() as cursor:
        cursor.execute(probe)
        present = cursor.fetchone()[0]
    return None if present else "the full-text index is missing: run `karani migrate`"
