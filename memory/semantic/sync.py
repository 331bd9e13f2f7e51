"""Keeping the index in step with ledger writes, after each commit.

A row the index could not take keeps ``indexed_at`` null (pending); a deleted row that still
has a ``vector_id`` has a vector to remove. ``reindex --pending`` catches up both.
"""

from collections.abc import Sequence

from memory.models import Memory
from memory.semantic import store
from memory.semantic.client import Client
from memory.semantic.guard import guarded

BATCH_SIZE = 64


def index_rows(client: Client, memories: Sequence[Memory]) -> None:
    """Write these rows to the index and record it in the ledger."""
    if client.config.infer:
        verbatim = []
        for memory in memories:
            ids = store.extract_and_add(client, memory)
            if ids:
                store.mark_indexed([(memory, ids[0])])
            else:
                # Extraction did not fit, failed or kept nothing: the fact goes in as written,
                # now, so no row waits for a reindex because of the LLM.
                verbatim.append(memory)
        memories = verbatim
    for start in range(0, len(memories), BATCH_SIZE):
        batch = list(memories[start : start + BATCH_SIZE])
        vectors = store.embed_texts(client, [m.text for m in batch])
        store.mark_indexed(store.insert_rows(client, batch, vectors))


def added(memory_ids: Sequence[int]) -> None:
    """Index new live rows; on any failure they stay pending (logged once by the guard)."""
    ids = list(memory_ids)
    # Chunked: a restore hands over every row at once, beyond SQLite's variable limit.
    for start in range(0, len(ids), 1000):
        chunk = ids[start : start + 1000]
        rows = list(Memory.objects.filter(pk__in=chunk).order_by("pk"))
        if rows:
            guarded(lambda client, rows=rows: index_rows(client, rows))


def removed(memory_ids: Sequence[int]) -> None:
    """Drop soft-deleted rows from the index; on failure their vector_id says "remove me"."""
    ids = list(
        Memory.all_objects.filter(pk__in=list(memory_ids), deleted_at__isnull=False).values_list(
            "pk", flat=True
        )
    )
    if ids:
        guarded(lambda client: _remove(client, ids))


def _remove(client: Client, ids: list[int]) -> None:
    store.delete_ledger_ids(client, ids)
    Memory.all_objects.filter(pk__in=ids, deleted_at__isnull=False).update(
        vector_id=None, indexed_at=None
    )
