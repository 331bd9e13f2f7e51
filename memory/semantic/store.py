"""Writing ledger rows into the vector collection, and reading its bookkeeping.

The verbatim path (no LLM) never calls mem0's one-row ``add``: it embeds a batch with
mem0's embedder and writes it with one ``vector_store.insert``, the rows mem0's own search
reads (see MEM0.md, "Bulk path"). With KARANI_LLM_BASE_URL set, each row is first offered
to extraction (memory.semantic.extraction), whose statements go in by the same insert.
"""

import hashlib
import logging
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from django.db import connection
from django.utils import timezone
from psycopg import sql

from memory.models import Memory
from memory.semantic.client import Client
from memory.semantic.config import GLOBAL_SENTINEL, MEM0_USER

log = logging.getLogger("karani.memory")


def payload(memory: Memory, text: str | None = None) -> dict[str, Any]:
    """The metadata mem0 keeps beside each vector: enough to map a hit back to the ledger."""
    from mem0.utils.lemmatization import lemmatize_for_bm25

    data = text or memory.text
    stamp = datetime.now(UTC).isoformat()
    return {
        "data": data,
        "hash": hashlib.md5(data.encode()).hexdigest(),
        "created_at": stamp,
        "updated_at": stamp,
        # mem0's keyword half of search reads this field.
        "text_lemmatized": lemmatize_for_bm25(data),
        "user_id": MEM0_USER,
        "ledger_id": memory.pk,
        "kind": memory.kind,
        "company": memory.company_key or GLOBAL_SENTINEL,
    }


def embed_texts(client: Client, texts: list[str]) -> Any:
    """One vector per text: a float32 array (local model) or lists (remote endpoint)."""
    model = getattr(client.memory.embedding_model, "model", None)
    if model is None:  # a remote (OpenAI-compatible) embedder: mem0's own batch call
        return client.memory.embedding_model.embed_batch(texts, "add")
    # mem0's embed_batch is this call with sentence-transformers' default batch of 32 and a
    # conversion to lists; the whole chunk in one forward pass (texts of similar length:
    # reindex sorts them) keeps the encoder busier, and insert_rows wants arrays.
    return model.encode(texts, batch_size=len(texts), convert_to_numpy=True)


def insert_rows(
    client: Client, memories: Sequence[Memory], vectors: Any
) -> list[tuple[Memory, str]]:
    """Write through mem0's ``vector_store.insert``, vectors as float32 arrays.

    Our pool's connections send arrays in pgvector's binary format (client.vector_adapters);
    as Python lists, psycopg formatted 384 floats per row as text and PostgreSQL parsed them
    back: ~0.7 ms of this process's CPU per row, a tenth of that as arrays
    (a 2,048-row probe: 1.40 s vs 0.11 s), taken from the encoder during a reindex.
    """
    import numpy as np

    ids = [str(uuid.uuid4()) for _ in memories]
    arrays = [np.asarray(v, dtype=np.float32) for v in vectors]
    client.store.insert(vectors=arrays, payloads=[payload(m) for m in memories], ids=ids)
    return list(zip(memories, ids, strict=True))


def extract_and_add(client: Client, memory: Memory) -> list[str]:
    """Index the LLM's statements of the fact (memory.semantic.extraction); their vector ids.

    [] when extraction gave nothing to store: the caller then indexes the fact verbatim.
    """
    import numpy as np

    from memory.semantic import extraction

    texts = extraction.extract(client, memory.text)
    if not texts:
        return []
    vectors = embed_texts(client, texts)
    ids = [str(uuid.uuid4()) for _ in texts]
    client.store.insert(
        vectors=[np.asarray(v, dtype=np.float32) for v in vectors],
        payloads=[payload(memory, text) for text in texts],
        ids=ids,
    )
    return ids


def mark_indexed(pairs: Sequence[tuple[Memory, str]]) -> None:
    """Record each row's vector id and when it was indexed (the ledger's bookkeeping).

    One parameterised UPDATE run per row (executemany), not bulk_update: bulk_update builds
    a CASE with a branch per row, which costs the ORM and the database time quadratic in the
    batch. Reindex waits for this between batches, on the encoder's thread: 5.5 s of a 10k
    reindex's 41 s with bulk_update, on an SQLite ledger (bench/semantic_reindex.py).
    """
    if not pairs:
        return
    now = timezone.now()
    for memory, vector_id in pairs:
        memory.vector_id, memory.indexed_at = vector_id, now
    stamp = connection.ops.adapt_datetimefield_value(now)
    with connection.cursor() as cur:
        cur.executemany(
            f"UPDATE {Memory._meta.db_table} SET vector_id = %s, indexed_at = %s WHERE id = %s",
            [(vector_id, stamp, memory.pk) for memory, vector_id in pairs],
        )


def _execute(
    client: Client, query: sql.Composable, params: Sequence[Any] = (), *, maintenance: bool = False
) -> list[tuple]:
    # Bookkeeping SQL on our own pool, against our own collection: mem0's store API has no
    # "delete where" or "count distinct". ``maintenance`` (reindex) lifts the pool's
    # statement timeout: counting or scanning 100k+ JSON payloads takes longer than a query may.
    with client.pool.connection() as conn, conn.cursor() as cur:
        if maintenance:
            cur.execute("SET LOCAL statement_timeout = 0")
        cur.execute(query, params)
        return cur.fetchall() if cur.description else []


def delete_ledger_ids(
    client: Client, ledger_ids: Sequence[int], *, maintenance: bool = False
) -> int:
    """Remove every vector of these ledger rows (extraction may have made several)."""
    if not ledger_ids:
        return 0
    client.store._ensure_collection()
    query = sql.SQL("DELETE FROM {} WHERE payload->>'ledger_id' = ANY(%s) RETURNING 1").format(
        sql.Identifier(client.config.collection)
    )
    return len(_execute(client, query, ([str(i) for i in ledger_ids],), maintenance=maintenance))


def counts(client: Client, *, maintenance: bool = False) -> tuple[int, int]:
    """(vector rows, distinct ledger rows) in the collection."""
    client.store._ensure_collection()
    query = sql.SQL("SELECT count(*), count(DISTINCT payload->>'ledger_id') FROM {}").format(
        sql.Identifier(client.config.collection)
    )
    rows, ledger_rows = _execute(client, query, maintenance=maintenance)[0]
    return int(rows), int(ledger_rows)


def ensure_indexes(client: Client, *, analyze: bool = False, maintenance: bool = False) -> bool:
    """What the scoped search needs beyond mem0's table: HNSW, and planner statistics.

    mem0 creates the HNSW and full-text indexes with the table; recreate them if someone (or
    a full reindex: drop_search_indexes) dropped them. Without
    statistics on ``payload->>'company'`` / ``'user_id'`` the planner guesses the scope
    filter keeps 0.5% of rows and picks a sequential scan + sort over every vector (seen at
    10k and 100k rows); the expression index gives it real numbers (and serves small scopes
    exactly), so the HNSW index (with iterative scan) carries the usual query.

    Building a missing index takes as long as it takes, so the pool's statement timeout is
    lifted for this transaction: at first use in a process (an index this version added,
    on a collection an older one built: ~1 s per 100k vectors, once) and in reindex
    (``maintenance``: HNSW over every vector, with more memory). Waiting behind another
    session's lock stays bounded at first use (lock_timeout), like any other hang.

    It also adds karani's stored full-text column and its GIN index, the ones recall's
    full-text query (search.full_text_scores) reads, when the table lacks them: on an empty
    table, or in maintenance (reindex, which an operator runs). On a populated table at first
    use it does not: that is a table rewrite under an exclusive lock (~50 s at 100k vectors),
    and a first recall in a web worker would hang on it past the worker's timeout, be
    killed, roll it back, and the next worker would start again. Returns whether the column
    is there; without it recall uses mem0's own full-text query (slower, same results) and a
    warning says to run `karani reindex` (running processes pick the column up when they
    next connect to the store, e.g. on restart).
    """
    col = client.config.collection
    statements = [
        sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} USING hnsw (vector vector_cosine_ops)").format(
            sql.Identifier(f"{col}_hnsw_idx"), sql.Identifier(col)
        ),
        # mem0's full-text index (its create_col), for the BM25 half of the ranking.
        sql.SQL(
            "CREATE INDEX IF NOT EXISTS {} ON {} "
            "USING gin (to_tsvector('simple', payload->>'text_lemmatized')) "
            "WITH (fastupdate = off)"  # see _full_text_without_pending_list
        ).format(sql.Identifier(f"{col}_text_lemmatized_idx"), sql.Identifier(col)),
        sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} ((payload->>'company'))").format(
            sql.Identifier(f"{col}_company_idx"), sql.Identifier(col)
        ),
        # forget/correct delete by ledger id: without it, a sequential scan of every payload
        # (280 ms at 100k vectors, linear beyond), against the statement timeout.
        sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} ((payload->>'ledger_id'))").format(
            sql.Identifier(f"{col}_ledger_idx"), sql.Identifier(col)
        ),
        sql.SQL("CREATE STATISTICS IF NOT EXISTS {} ON (payload->>'user_id') FROM {}").format(
            sql.Identifier(f"{col}_user_stats"), sql.Identifier(col)
        ),
    ]
    if analyze:
        statements.append(sql.SQL("ANALYZE {}").format(sql.Identifier(col)))
    with client.pool.connection() as conn:
        conn.execute("SET LOCAL statement_timeout = 0")
        if not maintenance:
            lock_ms = max(100, round(client.config.timeout * 1000))
            conn.execute(sql.SQL("SET LOCAL lock_timeout = {}").format(sql.Literal(lock_ms)))
        else:
            # An HNSW build whose graph does not fit maintenance_work_mem (64 MB by default:
            # ~100k 384-dim vectors) spills and is several times slower.
            conn.execute("SET LOCAL maintenance_work_mem = '256MB'")
        has_column = _add_full_text_column(conn, col, rewrite=maintenance)
        if has_column:
            # The index recall's full-text query uses (search.full_text_scores); mem0's own
            # above stays for mem0's keyword_search (Memory.search, the bench's old path).
            statements.append(
                sql.SQL(
                    "CREATE INDEX IF NOT EXISTS {} ON {} USING gin ({}) WITH (fastupdate = off)"
                ).format(
                    sql.Identifier(f"{col}_{TSV_COLUMN}_idx"),
                    sql.Identifier(col),
                    sql.Identifier(TSV_COLUMN),
                )
            )
        for statement in statements:
            conn.execute(statement)
        _full_text_without_pending_list(conn, f"{col}_text_lemmatized_idx")
    if not has_column:
        log.warning(
            "semantic index: collection %s predates the stored full-text column; recall uses"
            " mem0's slower full-text query until `karani reindex` adds it",
            col,
        )
    return has_column


# mem0's full-text expression (its create_col index and keyword_search), verbatim: the stored
# tsvector is the one mem0 computes per row, so karani's query matches and ranks the same.
TSV_COLUMN = "text_tsv"
TSV_EXPRESSION = "to_tsvector('simple', payload->>'text_lemmatized')"
# Rows up to this size keep every value inline (see _add_full_text_column); the largest
# PostgreSQL accepts is 8,160.
TOAST_TUPLE_TARGET = 4080


def add_full_text_column(client: Client) -> None:
    """Add the stored full-text column to the collection table if it lacks it.

    For a table just created (reindex, before the bulk load): cheap, nothing to rewrite.
    On a populated one ensure_indexes does the same in maintenance only.
    """
    with client.pool.connection() as conn:
        _add_full_text_column(conn, client.config.collection, rewrite=True)


def has_full_text_column(conn: Any, col: str) -> bool:
    return (
        conn.execute(
            "SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attname = %s "
            "AND NOT attisdropped",
            (sql.Identifier(col).as_string(conn), TSV_COLUMN),
        ).fetchone()
        is not None
    )


def _add_full_text_column(conn: Any, col: str, *, rewrite: bool) -> bool:
    """``text_tsv``: mem0's tsvector, generated and stored by PostgreSQL on every write.

    mem0's keyword_search recomputes ``to_tsvector`` from the JSON payload of every matching
    row to rank it: a query of common words (``frontend engineer``: ~3,900 matches at 100k)
    took 120-240 ms, and recall waits for it. Ranking the stored tsvector skips the JSON
    parse and the tsvector build per row (155 -> 35 ms on the worst query, probe table).
    Generated, so mem0's own INSERTs and UPDATEs (which name id, vector, payload) fill it
    without knowing of it. Adding it to a populated table rewrites the table and rebuilds
    every index under an exclusive lock (49-53 s at 100k vectors, ~8-10 s at 10k, load 2-3;
    once): done only when the catalog lacks it and the table is empty or ``rewrite`` is
    allowed (an operator's reindex), and IF NOT EXISTS for a second process that raced past
    the check. Returns whether the column is there afterwards.
    """
    ident = sql.Identifier(col)
    if has_full_text_column(conn, col):
        return True
    if not rewrite:
        populated = conn.execute(sql.SQL("SELECT EXISTS (SELECT FROM {})").format(ident))
        if populated.fetchone()[0]:
            return False  # a rewrite is reindex's job (see ensure_indexes)
    # A rewrite only happens in maintenance, where ensure_indexes has already raised
    # maintenance_work_mem for the HNSW rebuild it brings; otherwise the table is empty.
    # Keep the vector in the row. A row is ~1.9 KB without the tsvector (1,540-byte vector
    # + ~390-byte payload), just under the 2,032-byte default past which PostgreSQL moves
    # the largest value out of line: the vector (pgvector's storage is external). The
    # tsvector (~270 bytes) tipped every row over (measured: 10,000 of 10,000 rows at 10k,
    # 185 before), and every vector query then fetched each vector it returns or scores
    # from the TOAST table: 10k semantic recall p50 went from ~25 to 88 ms (a scoped exact
    # scan alone: 52 ms). Set before the rewrite so that it lays the rows out with it (3 a
    # page instead of 4).
    conn.execute(
        sql.SQL("ALTER TABLE {} SET (toast_tuple_target = {})").format(
            ident, sql.Literal(TOAST_TUPLE_TARGET)
        )
    )
    conn.execute(
        sql.SQL(
            "ALTER TABLE {} ADD COLUMN IF NOT EXISTS {} tsvector GENERATED ALWAYS AS ({}) STORED"
        ).format(ident, sql.Identifier(TSV_COLUMN), sql.SQL(TSV_EXPRESSION))
    )
    return True


def _full_text_without_pending_list(conn: Any, index: str) -> None:
    """Turn off GIN's fast update on mem0's full-text index, and flush what it queued.

    With fast update (PostgreSQL's default, and how mem0 creates the index) every new row's
    terms go to an unordered pending list that each full-text query scans from end to end,
    until the list reaches gin_pending_list_limit (4 MB) or a vacuum merges it. Every
    recall runs that query: with 5,650 rows pending at 100k vectors its index scan took
    11-14 ms instead of 3-4 ms, and a 10k collection filled one row at a time had all 10k
    pending (17.8 ms p50 for the query instead of ~2). Without it a write puts its terms
    into the index itself (a little more work per row; a full reindex builds the index
    once at the end anyway) and a query never scans a pending list. Same matches, same
    ranks. Checked first so that a process start does not rewrite the catalog every time.
    """
    ident = sql.Identifier(index)
    regclass = ident.as_string(conn)  # quoted, as to_regclass parses it
    options = conn.execute(
        "SELECT reloptions FROM pg_class WHERE oid = to_regclass(%s)", (regclass,)
    ).fetchone()
    if options is None or "fastupdate=off" in (options[0] or []):
        return
    conn.execute(sql.SQL("ALTER INDEX {} SET (fastupdate = off)").format(ident))
    conn.execute("SELECT gin_clean_pending_list(to_regclass(%s))", (regclass,))


def drop_search_indexes(client: Client) -> None:
    """Drop the HNSW and full-text indexes before a bulk load; ensure_indexes rebuilds them.

    Maintaining both row by row made PostgreSQL's share of a 10k reindex about 2.7 ms a row,
    CPU taken from the encoder on a 2-core machine (a reindex ran at 74% of raw encoding);
    one build at the end costs a fraction of that. Searches during a full reindex scan the
    new table exactly: it holds only what has been replayed so far anyway.
    """
    col = client.config.collection
    with client.pool.connection() as conn:
        for suffix in ("hnsw_idx", "text_lemmatized_idx", f"{TSV_COLUMN}_idx"):
            conn.execute(
                sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(f"{col}_{suffix}"))
            )
