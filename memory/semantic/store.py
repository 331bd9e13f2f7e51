"""Ledger rows into the vector collection (one ``vector_store.insert`` a batch), and bookkeeping."""

import hashlib
import re
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from django.db import connection
from django.utils import timezone
from psycopg import sql

from memory import text as textmod
from memory.models import Memory
from memory.semantic import encoder, extraction
from memory.semantic.client import Client
from memory.semantic.config import GLOBAL_SENTINEL, MEM0_USER

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_LABEL = re.compile(r"[^:\n]{1,40}: ")
# Sentence vectors a fact may add: a 2,000-character fact of one-word sentences must not
# flood the collection (the lexical half still finds words past the cap).
MAX_SENTENCES = 20


def payload(memory: Memory, text: str | None = None) -> dict[str, Any]:
    """The metadata mem0 keeps beside each vector: enough to map a hit back to the ledger."""
    data = text or memory.text
    stamp = datetime.now(UTC).isoformat()
    return {
        "data": data,
        "hash": hashlib.md5(data.encode()).hexdigest(),
        "created_at": stamp,
        "updated_at": stamp,
        "user_id": MEM0_USER,
        "ledger_id": memory.pk,
        "kind": memory.kind,
        "company": memory.company_key or GLOBAL_SENTINEL,
    }


def embed_texts(client: Client, texts: list[str]) -> Any:
    """One passage-side vector per text: a float32 array (local model) or lists (endpoint)."""
    return encoder.embed_passages(client, texts)


def _insert(client: Client, vectors: Any, payloads: list[dict[str, Any]]) -> list[str]:
    # float32 arrays go to PostgreSQL in pgvector's binary format (client.new_pool);
    # lists would be formatted and parsed back as text, a tenth of the CPU per row.
    import numpy as np  # loaded with the model; never on a basic-mode start-up

    ids = [str(uuid.uuid4()) for _ in payloads]
    arrays = [np.asarray(v, dtype=np.float32) for v in vectors]
    client.store.insert(vectors=arrays, payloads=payloads, ids=ids)
    return ids


def insert_rows(
    client: Client, memories: Sequence[Memory], vectors: Any
) -> list[tuple[Memory, str]]:
    """Write each row's vector, and one per sentence of a multi-sentence row, in one mem0
    ``vector_store.insert``; (row, whole-text vector id) pairs."""
    # A question about one sentence of a long fact matches that sentence better than the
    # whole text, whose vector averages every sentence; recall counts a fact at its best row.
    pieces = [(m, s) for m in memories for s in sentences(m.text)]
    extra = list(embed_texts(client, [s for _, s in pieces])) if pieces else []
    payloads = [payload(m) for m in memories] + [payload(m, s) for m, s in pieces]
    ids = _insert(client, [*vectors, *extra], payloads)
    return list(zip(memories, ids[: len(memories)], strict=True))


def sentences(text: str) -> list[str]:
    """A fact's sentences (split after . ! or ?) when it has two or more, else []; a leading
    "label: " (a speaker, a company) stays on each, as it says whom the sentence is about."""
    # Each once: a fact indexed twice is told apart by a repeated (fact, text) pair.
    found = list(dict.fromkeys(s for s in _SENTENCE_END.split(text.strip()) if textmod.tokens(s)))
    if len(found) < 2:
        return []
    label = _LABEL.match(found[0])
    return found[:1] + [label.group(0) + s if label else s for s in found[1:MAX_SENTENCES]]


def extract_and_add(client: Client, memory: Memory) -> list[str]:
    """Index the LLM's statements of the fact; [] when there are none (index it verbatim)."""
    texts = extraction.extract(
        client.memory.llm, memory.text, plan=client.llm_budget, cooldown=client.config.cooldown
    )
    if not texts:
        return []
    texts = list(dict.fromkeys(texts))  # a statement said twice is one vector
    return _insert(client, embed_texts(client, texts), [payload(memory, t) for t in texts])


def mark_indexed(pairs: Sequence[tuple[Memory, str]]) -> None:
    """Record each row's vector id and when it was indexed (the ledger's bookkeeping)."""
    # executemany, not bulk_update, whose CASE with a branch per row grows quadratically.
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
) -> None:
    """Remove every vector of these ledger rows (extraction may have made several)."""
    if not ledger_ids:
        return
    query = sql.SQL("DELETE FROM {} WHERE payload->>'ledger_id' = ANY(%s)").format(
        sql.Identifier(client.config.collection)
    )
    _execute(client, query, ([str(i) for i in ledger_ids],), maintenance=maintenance)


def counts(client: Client, *, maintenance: bool = False) -> tuple[int, int, int]:
    """(vector rows, distinct ledger rows, rows repeating another's ledger row and text)."""
    # A fact has several vectors (a sentence each, or extracted statements), never two of one
    # text: a repeat is a row indexed twice.
    query = sql.SQL(
        "SELECT count(*), count(DISTINCT payload->>'ledger_id'),"
        " count(*) - count(DISTINCT (payload->>'ledger_id', payload->>'data')) FROM {}"
    ).format(sql.Identifier(client.config.collection))
    rows, ledger_rows, repeats = _execute(client, query, maintenance=maintenance)[0]
    return int(rows), int(ledger_rows), int(repeats)
