"""Deterministic keyword recall (basic mode, and the semantic index's fallback).

Score = distinct query words found in the fact, plus ``COMPANY_BOOST`` when the fact's
company is named in the query. Ties go to the most recently seen fact, then the highest id,
so the same ledger and query always give the same order. The database's own full-text index
finds the facts carrying each word (docs/keyword-recall.md); counting them is the score.
"""

from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING

from django.db import connection
from django.db.models.query import RawQuerySet

from memory import text as textmod
from memory.models import Memory

if TYPE_CHECKING:
    import numpy as np

COMPANY_BOOST = 1
# Company names are matched as runs of up to this many words in the query.
_MAX_COMPANY_WORDS = 8
_MAX_QUERY_PIECES = 64
_KEYS_PER_LOOKUP = 900
_EDGE_PUNCT = ".,;:!?\"'()[]{}<>«»“”‘’"

# What recall shows of a fact, in this order.
ROW_FIELDS = ("id", "text", "kind", "company", "ref", "created_at", "last_seen_at")

# The live facts carrying one word, per database: a GIN index over the words' tsvector on
# PostgreSQL (migration 0013), the FTS5 table on SQLite (migration 0012).
WORD_MATCH = {
    "postgresql": "SELECT id FROM memories WHERE deleted_at IS NULL AND term_vec @@ %s::tsquery",
    "sqlite": "SELECT rowid AS id FROM memories_fts WHERE memories_fts MATCH %s",
}
# The facts holding a full-text query, and its OR and AND. On PostgreSQL a condition on the
# fact itself: given a subquery, the planner may sort every fact by score and walk the list.
MATCH = {
    "postgresql": ("m.term_vec @@ %s::tsquery", " | ", " & "),
    "sqlite": (f"m.id IN ({WORD_MATCH['sqlite']})", " OR ", " AND "),
}
# Up to this many distinct words, PostgreSQL first ranks only the facts scoring 2 or more.
_MAX_PAIRED_WORDS = 8


@dataclass(frozen=True)
class Hit:
    memory_id: int
    score: float
    # ROW_FIELDS of the live fact, when the ranking already read them.
    row: tuple | None = None


def company_candidates(query: str, sizes: range = range(1, _MAX_COMPANY_WORDS + 1)) -> set[str]:
    """Every run of up to eight query words (of ``sizes`` words), as a company key: what the
    query may name."""
    pieces = textmod.company_key(query).split(" ")[:_MAX_QUERY_PIECES]
    candidates: set[str] = set()
    for size in sizes:
        for start in range(len(pieces) - size + 1):
            run = " ".join(pieces[start : start + size])
            candidates.add(run)
            candidates.add(run.strip(_EDGE_PUNCT))
    candidates.discard("")
    return candidates


def _names(query: str, key: str) -> bool:
    """Whether the query names ``key``: only the runs of its length can."""
    size = key.count(" ") + 1
    return size <= _MAX_COMPANY_WORDS and key in company_candidates(query, range(size, size + 1))


def named_company_keys(query: str, scope_key: str | None) -> list[str]:
    """Company keys (of live facts, within scope) that the query names word for word."""
    return _named_many([query], scope_key)[0]


def _named_many(queries: list[str], scope_key: str | None) -> list[list[str]]:
    """``named_company_keys`` for every query, with one look-up for all of them."""
    if scope_key is not None:
        return [[scope_key] if _names(q, scope_key) else [] for q in queries]
    runs = [company_candidates(q) for q in queries]
    keys = sorted(set().union(*runs))
    if not keys:
        return [[] for _ in queries]
    known: set[str] = set()
    # Plain SQL: composing this through the ORM cost more than running it. A long posting's
    # runs number in the tens of thousands, past what an older SQLite lets one statement bind.
    with connection.cursor() as cursor:
        for start in range(0, len(keys), _KEYS_PER_LOOKUP):
            chunk = keys[start : start + _KEYS_PER_LOOKUP]
            cursor.execute(
                "SELECT DISTINCT company_key FROM memories"
                f" WHERE deleted_at IS NULL AND company_key IN {_in_list(chunk)}",
                chunk,
            )
            known.update(key for (key,) in cursor.fetchall())
    return [sorted(known & r) for r in runs]


def word_param(token: str) -> str:
    """One word as a literal the vendor's full-text match reads as that word and nothing else."""
    if connection.vendor == "sqlite":
        return '"' + token.replace('"', '""') + '"'
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def _in_list(values: list[str]) -> str:
    return "(" + ", ".join(["%s"] * len(values)) + ")"


def scope_filter(company_key: str | None) -> tuple[str, list]:
    """The condition keeping a company's facts and the global ones, with its parameters."""
    if company_key is None:
        return "", []
    return " AND (m.company_key = %s OR m.company_key IS NULL)", [company_key]


def _postgres_select(
    columns: str, score: tuple[str, list], match: tuple[str, list], scope: str | None
) -> tuple[str, list]:
    """Live facts in scope meeting ``match``, scored, best first; the caller gives the limit."""
    scope_sql, scope_params = scope_filter(scope)
    sql = (
        f"SELECT {columns}, {score[0]} AS score FROM memories m"
        f" WHERE m.deleted_at IS NULL AND ({match[0]}){scope_sql}"
        " ORDER BY score DESC, m.last_seen_at DESC, m.id DESC LIMIT %s"
    )
    return sql, [*score[1], *match[1], *scope_params]


def _postgres_rank(
    tokens: list[str], named: list[str], scope: str | None, columns: str, limit: int
) -> list[Memory]:
    # Each candidate the GIN index finds is scored as it is read: the number of query words
    # ts_delete takes out of its vector, plus the company point.
    words = sorted(set(tokens))
    any_word = " | ".join(word_param(w) for w in words)
    company = f"m.company_key IN {_in_list(named)}"
    # The score, and what makes a candidate: any of the words, or a named company.
    score_sql, score_params, held, held_params = "0", [], [], []
    if words:
        score_sql = "length(m.term_vec) - length(ts_delete(m.term_vec, %s::text[]))"
        score_params = [words]
        held.append("m.term_vec @@ %s::tsquery")
        held_params.append(any_word)
    if named:
        score_sql += f" + COALESCE({company}, false)::int"
        score_params += named
        held.append(company)
        held_params += named
    score = (score_sql, score_params)
    candidates = (" OR ".join(held), held_params)
    if not 2 <= len(words) <= _MAX_PAIRED_WORDS:
        return list(_raw(*_postgres_select(columns, score, candidates, scope), limit))
    # Facts scoring 2 or more (two of the words, or one and a named company) outrank all
    # others; when they fill the limit they are the answer, and a query of common words
    # reads the few facts holding several of its words, not the many holding one.
    pairs = " | ".join(f"({word_param(a)} & {word_param(b)})" for a, b in combinations(words, 2))
    arms = [_postgres_select(columns, score, ("m.term_vec @@ %s::tsquery", [pairs]), scope)]
    if named:
        both = (f"{company} AND m.term_vec @@ %s::tsquery", [*named, any_word])
        arms.append(_postgres_select(columns, score, both, scope))
    # One statement per arm inside a UNION, so the planner takes an index for each.
    strong_sql = " UNION ".join(f"({sql})" for sql, _ in arms)
    strong_params = [p for _, params in arms for p in [*params, limit]]
    strong = list(
        _raw(
            f"SELECT * FROM ({strong_sql}) AS strong"
            " ORDER BY score DESC, last_seen_at DESC, id DESC LIMIT %s",
            strong_params,
            limit,
        )
    )
    if len(strong) >= limit:
        return strong
    # Every other candidate scores exactly 1, so the rest of the ranking is by recency alone.
    recent_sql, recent_params = _postgres_select(columns, ("1", []), candidates, scope)
    seen = {fact.pk for fact in strong}
    recent = [f for f in _raw(recent_sql, recent_params, limit) if f.pk not in seen]
    return strong + recent[: limit - len(strong)]


def _raw(sql: str, params: list, limit: int) -> RawQuerySet:
    # raw() runs the database's own query and still converts each column as the ORM would.
    return Memory.all_objects.raw(sql, [*params, limit])


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
    scope_sql, scope_params = scope_filter(scope)
    sql = (
        f"SELECT {columns}, hits.score FROM (SELECT id, COUNT(*) AS score"
        f" FROM ({' UNION ALL '.join(parts)}) AS words GROUP BY id) AS hits"
        f" JOIN memories m ON m.id = hits.id WHERE m.deleted_at IS NULL{scope_sql}"
        " ORDER BY hits.score DESC, m.last_seen_at DESC, m.id DESC LIMIT %s"
    )
    return sql, [*params, *scope_params]


def search(*, query: str, company_key: str | None, limit: int) -> list[Hit]:
    """Top ``limit`` live facts for ``query`` within the scope, best first (the same ranking
    in plain Python: tests/test_ledger_recall_equivalence.py)."""
    tokens = textmod.tokens(query)[: textmod.MAX_QUERY_TOKENS]
    # Which runs of the query are companies the ledger knows (one indexed look-up when
    # unscoped), so the ranking compares each candidate with a name or two, not every run.
    named = named_company_keys(query, company_key)
    if not tokens and not named:
        return []
    columns = ", ".join(f"m.{name}" for name in ROW_FIELDS)
    if connection.vendor == "postgresql":
        facts = _postgres_rank(tokens, named, company_key, columns, limit)
    else:
        facts = list(_raw(*_sqlite_query(tokens, named, company_key, columns), limit))
    return [
        Hit(
            memory_id=fact.pk,
            score=float(fact.score),
            row=tuple(getattr(fact, name) for name in ROW_FIELDS),
        )
        for fact in facts
    ]


def search_many(
    *, queries: list[str], company_key: str | None, limit: int, per_side: bool = False
) -> list[list[Hit]]:
    """``search`` for each query (hits without their rows), from one read of the live facts
    in scope holding any of their words: a posting's sentences share most of their words, so
    one read and a count per query replace a ranking query per sentence. ``per_side`` (with a
    company) gives each query the company's best ``limit`` and the unscoped best ``limit``,
    in one list, best first (a tie between the two sides to the company's fact)."""
    asked = [textmod.tokens(q)[: textmod.MAX_QUERY_TOKENS] for q in queries]
    named = _named_many(queries, company_key)
    wanted = {w for tokens in asked for w in tokens}
    companies = sorted({key for keys in named for key in keys})
    if not wanted and not companies:
        return [[] for _ in queries]
    held, params = [], []
    # A long posting's words reach nearly every fact in scope, and the full-text test of
    # them all then costs more than reading the scope whole (docs/keyword-recall.md).
    whole_scope = company_key is not None and len(wanted) > textmod.MAX_QUERY_TOKENS
    if whole_scope:
        held.append("TRUE")
    elif wanted:
        match, either, _ = MATCH[connection.vendor]
        held.append(match)
        params.append(either.join(word_param(w) for w in sorted(wanted)))
    if companies:
        held.append(f"m.company_key IN {_in_list(companies)}")
        params += companies
    split = per_side and company_key is not None
    # In recall's tie-break order, so a fact's place in the list breaks a tie in its score;
    # split, each side in its own order, the company's first: two ranges of the live-company
    # index, where one read of the scope sorts it whole (docs/keyword-recall.md).
    scopes = [scope_filter(company_key)]
    if split:
        scopes = [(" AND m.company_key = %s", [company_key]), (" AND m.company_key IS NULL", [])]
    found: list[tuple] = []
    read_so_far: list[int] = []
    with connection.cursor() as cursor:
        for scope_sql, scope_params in scopes:
            cursor.execute(
                "SELECT m.id, m.terms, m.company_key FROM memories m"
                f" WHERE m.deleted_at IS NULL AND ({' OR '.join(held)}){scope_sql}"
                " ORDER BY m.last_seen_at DESC, m.id DESC",
                [*params, *scope_params],
            )
            found += cursor.fetchall()
            read_so_far.append(len(found))
    holding: dict[str, list[int]] = {}
    # Only the companies a query names earn a point: the rest of the scope needs no list.
    of_company: dict[str, list[int]] = {key: [] for key in companies}
    for place, (_, terms, key) in enumerate(found):
        for word in wanted.intersection(terms.split(" ")):
            holding.setdefault(word, []).append(place)
        if key in of_company:
            of_company[key].append(place)
    # Counted in numpy (imported here: a basic-mode start-up never loads it): a long
    # posting's thirty pieces each score most of a large scope.
    import numpy as np

    places = {word: np.array(at, dtype=np.int64) for word, at in holding.items()}
    named_places = {key: np.array(at, dtype=np.int64) for key, at in of_company.items()}
    if split:
        company = np.arange(len(found)) < read_so_far[0]
        sides = [company, ~company]
    else:
        sides = [np.ones(len(found), dtype=bool)]
    results = []
    for tokens, keys in zip(asked, named, strict=True):
        counts = np.zeros(len(found), dtype=np.int64)
        for word in tokens:
            if word in places:
                counts[places[word]] += 1
        for key in keys:
            counts[named_places[key]] += COMPANY_BOOST
        best = sorted(hit for side in sides for hit in _best(counts, side, limit))
        results.append([Hit(found[place][0], float(-n)) for n, place in best])
    return results


def _best(counts: "np.ndarray", side: "np.ndarray", limit: int) -> list[tuple[int, int]]:
    """The top ``limit`` (negated score, place) pairs among the scoring places of ``side``:
    best score first, then the earlier place (the more recently seen, the higher id)."""
    at = (side & (counts > 0)).nonzero()[0]
    if len(at) > limit:
        # One key for both: a higher score, then a lower place.
        key = counts[at] * (len(counts) + 1) - at
        at = at[(-key).argpartition(limit - 1)[:limit]]
    return sorted((-int(counts[place]), int(place)) for place in at)


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
