"""Semantic mode's ranking: the dense half (nearest vectors in the store, scoped in the store
query, to the question without the names that are its candidates' subjects) fused with the
lexical half (memory.lexical, on the ledger, so a fact is found the moment its write commits),
then each fact lifted by the facts written beside it in its company, and by being written when
the question says or being about whom it names (memory.semantic.cues), the dense half's best
keeping a place when the lexical half is weak. The constants are in memory.semantic.tuning;
docs/semantic-index.md has the design and the measurements.
"""

import math
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from django.db import connection
from psycopg import sql

from memory import lexical
from memory.keyword import Hit
from memory.semantic import cues, tuning
from memory.semantic.client import Client
from memory.semantic.config import GLOBAL_SENTINEL, MEM0_USER
from memory.semantic.encoder import embed_query
from memory.semantic.guard import guarded

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
    return _best_per_fact((float(r.score), (r.payload or {}).get("ledger_id")) for r in found)


def nearest_many(
    client: Client,
    vectors: Sequence[object],
    *,
    company_key: str | None,
    depth: int,
    per_side: bool = False,
) -> list[list[Hit]]:
    """``nearest`` for each vector, from one statement: an HNSW scan per vector, in the scope
    ``scope_filters`` gives mem0's search, and one round trip for all of a posting's pieces.
    ``per_side`` (with a company) scans the company's facts and the unscoped ones apart, for
    ``depth`` of each in one list."""
    if not vectors:
        return []
    # mem0's store searches one vector a call: forty round trips for a posting's forty pieces.
    scan = sql.SQL(
        "SELECT vector <=> q.v AS distance, payload->'ledger_id' AS ledger_id FROM {}"
        " WHERE payload->>'user_id' = %s{} ORDER BY distance LIMIT %s"
    )
    table = sql.Identifier(client.config.collection)
    if company_key is None:
        scans = [scan.format(table, sql.SQL(""))]
        params: list = [MEM0_USER, depth]
    elif per_side:
        side = sql.SQL(" AND payload->>'company' = %s")
        scans = [sql.SQL("({})").format(scan.format(table, side))] * 2
        params = [MEM0_USER, company_key, depth, MEM0_USER, GLOBAL_SENTINEL, depth]
    else:
        scans = [scan.format(table, sql.SQL(" AND payload->>'company' = ANY(%s)"))]
        params = [MEM0_USER, [company_key, GLOBAL_SENTINEL], depth]
    asked = sql.SQL(", ").join([sql.SQL("(%s, %s::vector)")] * len(vectors))
    query = sql.SQL(
        "SELECT q.n, GREATEST(0, 1 - r.distance), r.ledger_id FROM (VALUES {}) AS q(n, v)"
        " CROSS JOIN LATERAL ({}) AS r"
    ).format(asked, sql.SQL(" UNION ALL ").join(scans))
    pairs = [x for n, vector in enumerate(vectors) for x in (n, vector)]
    with client.pool.connection() as conn:
        # Never prepared: a generic plan may scan the scope in full instead of the HNSW index
        # (200 ms at 100k facts), where each call's own plan takes the index.
        rows = conn.execute(query, [*pairs, *params], prepare=False).fetchall()
    found: list[list[tuple[float, object]]] = [[] for _ in vectors]
    for n, score, ledger_id in rows:
        found[n].append((float(score), ledger_id))
    return [_best_per_fact(candidates) for candidates in found]


def cosines(
    client: Client, vectors: Sequence[object], ledger_ids: Sequence[int]
) -> list[list[float]]:
    """Each vector's cosine with each of these ledger rows' stored vectors (a fact's best over
    its sentence vectors), as a row per vector in ``ledger_ids``' order; 0 for a fact with no
    vector yet. One statement, on the ledger-id index: no nearest-neighbour scan."""
    if not vectors or not ledger_ids:
        return [[0.0] * len(ledger_ids) for _ in vectors]
    asked = sql.SQL(", ").join([sql.SQL("(%s, %s::vector)")] * len(vectors))
    # The cosines are computed before grouping (a materialised CTE): grouped directly, the
    # planner sorts every (piece, vector) row with its vector, tens of megabytes on disk for a
    # ledger of a thousand preferences (219 ms against 32). The id comes as a number, not as
    # JSON that psycopg would parse once per row.
    query = sql.SQL(
        "WITH s AS MATERIALIZED (SELECT q.n, (t.payload->>'ledger_id')::bigint AS ledger_id,"
        " 1 - (t.vector <=> q.v) AS cosine FROM (VALUES {}) AS q(n, v) CROSS JOIN {} AS t"
        " WHERE t.payload->>'user_id' = %s AND t.payload->>'ledger_id' = ANY(%s))"
        " SELECT n, ledger_id, MAX(cosine) FROM s GROUP BY 1, 2"
    ).format(asked, sql.Identifier(client.config.collection))
    pairs = [x for n, vector in enumerate(vectors) for x in (n, vector)]
    with client.pool.connection() as conn:
        rows = conn.execute(
            query, [*pairs, MEM0_USER, [str(i) for i in ledger_ids]], prepare=False
        ).fetchall()
    column = {pk: i for i, pk in enumerate(ledger_ids)}
    found = [[0.0] * len(ledger_ids) for _ in vectors]
    for n, ledger_id, score in rows:
        if ledger_id in column:
            found[n][column[ledger_id]] = float(score)
    return found


def _best_per_fact(candidates: Iterable[tuple[float, object]]) -> list[Hit]:
    hits: list[Hit] = []
    seen: set[int] = set()
    # The store's iterative scan returns rows in relaxed order, not strictly by score.
    for score, ledger_id in sorted(candidates, key=lambda c: -c[0]):
        if isinstance(ledger_id, int) and ledger_id not in seen:
            seen.add(ledger_id)
            hits.append(Hit(memory_id=ledger_id, score=score))
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


def _ordered(scores: dict[int, float]) -> list[Hit]:
    # Best first; ties go to the newer fact.
    order = sorted(scores.items(), key=lambda kv: (-kv[1], -kv[0]))
    return [Hit(memory_id=pk, score=score) for pk, score in order]


def fuse(
    dense: list[Hit],
    words: list[Hit],
    *,
    dense_share: float = tuning.DENSE_SHARE,
    covered: float = tuning.COVERED,
) -> list[Hit]:
    """``dense_share`` of the cosine's z-score plus the rest of the idf coverage's, each within
    the query's own candidates and counted from that half's lowest, which a fact the half
    lacks gets: 0 is a fact neither half found, every candidate scores 0 or more. The
    coverage's share shrinks in proportion when the best coverage is below ``covered`` (0:
    never).

    z-scores put both on one scale whatever the query: a cosine's level varies with the
    query's phrasing, coverage's spread with how many rare words it has.
    """
    by_dense, dense_floor = standardise(dense)
    by_words, words_floor = standardise(words)
    words_share = 1 - dense_share
    if covered and words:
        words_share *= min(1.0, max(h.score for h in words) / covered)
    return _ordered(
        {
            pk: dense_share * (by_dense.get(pk, dense_floor) - dense_floor)
            + words_share * (by_words.get(pk, words_floor) - words_floor)
            for pk in by_dense.keys() | by_words.keys()
        }
    )


def neighbours(memory_ids: list[int], *, company_key: str | None) -> dict[int, list[int]]:
    """Each live fact's neighbours, for the facts in the scope: the live facts of its company
    (or the global ones) written just before and just after it; both ways, so a neighbour of
    one lists that one too. A neighbour is in its fact's company, so in the scope."""
    if not memory_ids:
        return {}

    # Written so no index serves it: given a plain IS NULL, PostgreSQL reads the live-company
    # index (ordered by last seen) over every fact of the company, and SQLite its deleted_at
    # index over every fact in between, instead of probing (company_key, id) once.
    live = "COALESCE(m.deleted_at IS NULL, FALSE)"

    def beside(compare: str, order: str) -> str:
        # One index probe on (company_key, id) per fact and side; NULL needs IS NULL.
        pick = (
            f"SELECT m.id FROM memories m WHERE m.company_key {{}} AND m.id {compare} c.id"
            f" AND {live} ORDER BY m.id {order} LIMIT 1"
        )
        return (
            f"CASE WHEN c.company_key IS NULL THEN ({pick.format('IS NULL')})"
            f" ELSE ({pick.format('= c.company_key')}) END"
        )

    marks = ", ".join(["%s"] * len(memory_ids))
    params: list = list(memory_ids)
    scope = ""
    if company_key is not None:
        scope = " AND (c.company_key = %s OR c.company_key IS NULL)"
        params.append(company_key)
    sql = (
        f"SELECT c.id, {beside('<', 'DESC')}, {beside('>', 'ASC')} FROM memories c"
        f" WHERE c.id IN ({marks}) AND c.deleted_at IS NULL{scope}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    found: dict[int, list[int]] = {}
    for pk, *sides in rows:
        for other in filter(None, sides):
            found.setdefault(pk, []).append(other)
            found.setdefault(other, []).append(pk)
    return found


def with_context(
    fused: list[Hit], beside: dict[int, list[int]], *, share: float = tuning.NEIGHBOUR_SHARE
) -> list[Hit]:
    """Each fact's fused score plus ``share`` of its best neighbour's; a neighbour no half
    found joins the candidates when it gains anything."""
    scores = {h.memory_id: h.score for h in fused}
    lifted = dict(scores)
    for pk, others in beside.items():
        gain = share * max(scores.get(other, 0.0) for other in others)
        if gain > 0:
            lifted[pk] = scores.get(pk, 0.0) + gain
    return _ordered(lifted)


def with_cues(hits: list[Hit], query: str, **shares: float) -> list[Hit]:
    """Each fact's score plus what it gains from the date and subject ``query`` names
    (memory.semantic.cues, at its shares unless given)."""
    gained = cues.gains(hits, query, **shares)
    return _ordered({h.memory_id: h.score + gained.get(h.memory_id, 0.0) for h in hits})


def keeping_dense(
    ranked: list[Hit],
    dense: list[Hit],
    words: list[Hit],
    *,
    keep: int = tuning.DENSE_KEPT,
    within: int = 5,
) -> list[Hit]:
    """``ranked`` with the dense half's best ``keep`` facts among its first ``within`` when
    the lexical half is weak (its best fact holds under ``COVERED`` of the question's idf
    mass): a question sharing no word with its fact is the dense half's alone to find, and
    the lexical half's and the cues' lifts must not push it out. A missing fact takes the
    last of those places held by a fact the dense half did not keep."""
    if not keep or (words and max(h.score for h in words) >= tuning.COVERED):
        return ranked
    kept = [h.memory_id for h in dense[:keep]]
    head = ranked[:within]
    for pk in kept:
        if pk not in {h.memory_id for h in head}:
            # It takes the place, and the score, of the fact it displaces.
            last = head[-1].score if head else 0.0
            if len(head) == within:
                head.remove(next(h for h in reversed(head) if h.memory_id not in kept))
            head.append(Hit(memory_id=pk, score=last))
    placed = {h.memory_id for h in head}
    return head + [h for h in ranked if h.memory_id not in placed]


def _embedding(text: str) -> Future:
    return guarded(lambda client: _encoder.submit(embed_query, client, text))


def search(*, query: str, company_key: str | None, limit: int) -> list[Hit]:
    """Hybrid candidates, best first (more than ``limit``). Raises SemanticUnavailable."""
    depth = max(DEPTH, limit * _OVERFETCH + _EXTRA)
    # A question writing names waits for the lexical half: its candidates tell whether a name
    # says whom the question is about, which the subject lift weighs, and the dense half then
    # embeds only what is asked. Any other question is embedded while the lexical half runs.
    early = None if cues.names(query) else _embedding(query)
    words = lexical.search(query=query, company_key=company_key, limit=depth)
    embedding = early or _embedding(cues.about(query, words))
    dense = guarded(
        lambda client: nearest(client, embedding.result(), company_key=company_key, depth=depth)
    )
    fused = fuse(dense, words)
    # Only a strong fact lifts a neighbour into the top few: the best ones' neighbours do.
    head = [h.memory_id for h in fused[: limit * _OVERFETCH + _EXTRA]]
    lifted = with_context(fused, neighbours(head, company_key=company_key))
    # ``depth`` is still well over ``limit``: room for stale candidates, fewer rows to fetch.
    return keeping_dense(with_cues(lifted, query), dense, words)[:depth]
