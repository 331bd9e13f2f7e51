"""Semantic recall through mem0's embedder, vector store and scoring, scoped in the store
query, mapped to the ledger.

Hits carry ledger ids; the caller materialises them from LIVE rows only, so a stale index
(a vector whose fact was since forgotten) can never resurrect a deleted fact. We ask the
store for more than ``limit`` so that dropping such stale hits still leaves enough.
"""

import logging
from concurrent.futures import ThreadPoolExecutor

from psycopg import sql

from memory import keyword
from memory.semantic.client import Client
from memory.semantic.config import GLOBAL_SENTINEL, MEM0_USER
from memory.semantic.encoder import embed_query
from memory.semantic.guard import guarded
from memory.semantic.store import TSV_COLUMN

logger = logging.getLogger("karani.memory")

# Shipped choice, measured by bench/semantic_quality.py (README, "Semantic index").
FUSE_WITH_KEYWORD = False
# Reciprocal rank fusion's damping constant (Cormack et al. 2009): 60 is the usual value and
# keeps one list's top rank from drowning the other's.
RRF_K = 60
_OVERFETCH = 2
_EXTRA = 10
# One full-text query per recall runs here, beside the query embedding (semantic_hits).
_full_text = ThreadPoolExecutor(max_workers=2, thread_name_prefix="karani-fulltext")


def scope_filters(company_key: str | None) -> dict:
    """The company's facts plus global ones, never another company's: enforced by the store."""
    filters: dict = {"user_id": MEM0_USER}
    if company_key is not None:
        filters["company"] = {"in": [company_key, GLOBAL_SENTINEL]}
    return filters


def full_text_scores(
    client: Client, *, lemmatized: str, top_k: int, filters: dict
) -> list[tuple[str, float]] | None:
    """mem0's ``keyword_search``, on karani's stored tsvector: (vector id, score), best first.

    Same tsquery (``plainto_tsquery('simple', ...)`` of the lemmatised query), same score
    (``ts_rank_cd`` of the same tsvector: the ``text_tsv`` column is mem0's expression,
    stored), same filters (mem0's own _build_filter_conditions, so scope semantics stay
    mem0's), same LIMIT. What differs is the cost: mem0 re-parses each matching row's JSON
    payload and rebuilds its tsvector to rank it, 120-240 ms for a query of common words at
    100k vectors; and it returns each payload, which the BM25 blend does not read.
    No tie-break on ``id``, on purpose: mem0 keeps, among rows of exactly equal score at the
    LIMIT, those the plan yields first (heap order, for both queries' bitmap scans of the same
    table), and so does this query. With ``ORDER BY score DESC, id`` the kept tied rows
    differed in 13 (10k) and 28 (100k) of the bench's 200 queries, and those rows decide which
    vector candidates get mem0's BM25 boost: recall's top 5 then differed from mem0's in 8
    and 9 of 200; without it, 200 of 200 identical (bench/semantic_latency.py's collections).
    Like mem0's, returns None on any error: the vector query (same store, same pool)
    reports it; the pool's statement timeout bounds a hang.
    """
    from mem0.vector_stores.pgvector import _build_filter_conditions

    if not client.full_text_column:  # a collection from before the column: mem0's own query
        found = client.store.keyword_search(query=lemmatized, top_k=top_k, filters=filters)
        return None if found is None else [(str(r.id), float(r.score)) for r in found]
    try:
        conditions, params = _build_filter_conditions(filters)
        clause = sql.SQL("".join(f" AND {c}" for c in conditions))
        query = sql.SQL(
            "SELECT id, ts_rank_cd({tsv}, plainto_tsquery('simple', %s)) AS score FROM {col} "
            "WHERE {tsv} @@ plainto_tsquery('simple', %s){clause} ORDER BY score DESC LIMIT %s"
        ).format(
            tsv=sql.Identifier(TSV_COLUMN),
            col=sql.Identifier(client.config.collection),
            clause=clause,
        )
        with client.pool.connection() as conn:
            rows = conn.execute(query, (lemmatized, lemmatized, *params, top_k)).fetchall()
    except Exception as exc:
        # mem0's contract, kept: the full-text half is optional, the vector query reports.
        logger.debug("full-text query failed: %s", exc)
        return None
    return [(str(vector_id), float(score)) for vector_id, score in rows]


def semantic_hits(client: Client, *, query: str, company_key: str | None, limit: int) -> list:
    """mem0's ranking (vector similarity, with its BM25 blend as a tie-breaker), best first, as
    ledger hits; several vectors of one ledger row (extraction can make them) count once.

    This is ``Memory.search`` taken apart, through mem0's own vector store and scoring
    functions and the same query vector as mem0's embedder (encoder.embed_query: the local
    model's own pipeline without encode()'s batch overhead), so the ranking is the same
    (bench/semantic_quality.py compares both), but cheaper: ``Memory.search`` runs its
    full-text query only after embedding the query and the vector query, one after the
    other, then builds a pydantic item per hit.
    Here the full-text query (full_text_scores: mem0's keyword_search on a stored tsvector;
    I/O: PostgreSQL works in its own process) runs on a second
    pooled connection while this thread embeds the query (CPU), so it costs nothing on the
    critical path (bench/semantic_latency.py times both paths). mem0's entity boost needs
    spaCy, which karani does not install; without it ``Memory.search`` skips it too.
    """
    from mem0.utils.lemmatization import lemmatize_for_bm25
    from mem0.utils.scoring import get_bm25_params, normalize_bm25, score_and_rank

    filters = scope_filters(company_key)
    top_k = limit * _OVERFETCH + _EXTRA
    # Memory.search fetches max(4 x top_k, 60) nearest vectors to blend; the blend is a
    # tie-breaker (BM25 squashed by a sigmoid, half weight), so the top_k nearest are the
    # pool that matters. Fetching 80 scoped rows cost ~2x fetching 20 at 100k vectors.
    candidates = top_k
    lemmatized = lemmatize_for_bm25(query)
    words = _full_text.submit(
        full_text_scores, client, lemmatized=lemmatized, top_k=candidates, filters=filters
    )
    try:
        vector = embed_query(client, query)
        nearest = client.store.search(
            query=query, vectors=vector, top_k=candidates, filters=filters
        )
    finally:
        # None on any error (the vector query reports it); a hung store is bounded by the
        # pool's statement timeout either way.
        matched = words.result()
    midpoint, steepness = get_bm25_params(query, lemmatized=lemmatized)
    bm25 = {
        vector_id: normalize_bm25(score, midpoint, steepness)
        for vector_id, score in matched or []
        if score and score > 0
    }
    ranked = score_and_rank(
        semantic_results=[
            {"id": str(r.id), "score": r.score, "payload": r.payload} for r in nearest
        ],
        bm25_scores=bm25,
        entity_boosts={},
        threshold=0.0,
        top_k=top_k,
    )
    hits: list[keyword.Hit] = []
    seen: set[int] = set()
    for item in ranked:
        ledger_id = (item.get("payload") or {}).get("ledger_id")
        if not isinstance(ledger_id, int) or ledger_id in seen:
            continue
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
