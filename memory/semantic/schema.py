"""The vector collection's table and indexes: mem0's table and HNSW index, without mem0's
keyword index (karani never runs mem0's keyword search), plus the indexes and statistics
karani's scoped search and deletes rely on."""

from typing import Any

from psycopg import sql

from memory.semantic import mem0_adapter
from memory.semantic.config import SemanticConfig


def ensure(store: Any, cfg: SemanticConfig) -> None:
    """First use of a store: the table, and every index (a dropped table comes back here)."""
    mem0_adapter.ensure_collection(store)
    ensure_indexes(store, cfg)


def ensure_indexes(
    store: Any, cfg: SemanticConfig, *, analyze: bool = False, maintenance: bool = False
) -> None:
    """Recreate the HNSW index if dropped, plus the scope's index and stats.

    Without statistics on the scope's payload fields the planner picks a sequential scan
    over every vector (docs/semantic-index.md). Building takes as long as it takes, so the
    statement timeout is lifted; waiting on a lock stays bounded outside ``maintenance``.
    """
    col = cfg.collection
    hnsw = mem0_adapter.index_name(col, mem0_adapter.HNSW_INDEX_SUFFIX)
    keyword = mem0_adapter.index_name(col, mem0_adapter.KEYWORD_INDEX_SUFFIX)
    statements = [
        sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} USING hnsw (vector vector_cosine_ops)").format(
            sql.Identifier(hnsw), sql.Identifier(col)
        ),
        # mem0's create_col builds it; every write would keep it up to date for nothing.
        sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(keyword)),
        sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} ((payload->>'company'))").format(
            sql.Identifier(f"{col}_company_idx"), sql.Identifier(col)
        ),
        # forget/correct delete by ledger id, which would otherwise scan every payload.
        sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} ((payload->>'ledger_id'))").format(
            sql.Identifier(f"{col}_ledger_idx"), sql.Identifier(col)
        ),
        sql.SQL("CREATE STATISTICS IF NOT EXISTS {} ON (payload->>'user_id') FROM {}").format(
            sql.Identifier(f"{col}_user_stats"), sql.Identifier(col)
        ),
    ]
    if analyze:
        statements.append(sql.SQL("ANALYZE {}").format(sql.Identifier(col)))
    with store.connection_pool.connection() as conn:
        conn.execute("SET LOCAL statement_timeout = 0")
        if not maintenance:
            lock_ms = max(100, round(cfg.timeout * 1000))
            conn.execute(sql.SQL("SET LOCAL lock_timeout = {}").format(sql.Literal(lock_ms)))
        else:
            # An HNSW graph that does not fit maintenance_work_mem spills and builds slowly.
            conn.execute("SET LOCAL maintenance_work_mem = '256MB'")
        for statement in statements:
            conn.execute(statement)


def drop_search_indexes(store: Any, cfg: SemanticConfig) -> None:
    """Drop the HNSW index (and mem0's keyword one) before a bulk load: one rebuild costs far
    less than keeping it up to date row by row."""
    with store.connection_pool.connection() as conn:
        for suffix in (mem0_adapter.HNSW_INDEX_SUFFIX, mem0_adapter.KEYWORD_INDEX_SUFFIX):
            name = mem0_adapter.index_name(cfg.collection, suffix)
            conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(name)))
