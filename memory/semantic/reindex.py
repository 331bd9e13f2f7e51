"""Rebuild the index from the ledger, or catch up pending rows: verbatim, never through an LLM."""

import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from itertools import islice
from typing import Any

from django.db.models.functions import Length

from memory.models import Memory
from memory.semantic import identity, schema, store
from memory.semantic.breaker import breaker
from memory.semantic.client import Client
from memory.semantic.guard import guarded, mark_everything_pending

BATCH_SIZE = 64
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class ReindexReport:
    pending_only: bool
    written: int
    removed: int
    ledger_live: int
    index_rows: int
    index_ledger_rows: int
    index_repeats: int
    pending_left: int
    seconds: float

    @property
    def matches(self) -> bool:
        """Every live row is in the index, none twice, and nothing else is (a fact has one
        vector per sentence or extracted statement, so vectors and facts differ in number)."""
        return self.ledger_live == self.index_ledger_rows and not self.index_repeats

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "matches": self.matches}


def pending_count() -> int:
    """Live rows not yet indexed, plus deleted rows whose vector is still to be removed."""
    return (
        Memory.objects.filter(indexed_at__isnull=True).count()
        + Memory.all_objects.filter(deleted_at__isnull=False, vector_id__isnull=False).count()
    )


@contextmanager
def encoder_threads(client: Client) -> Iterator[int]:
    """Every core for the local encoder while a batch job runs: a batch splits well across
    cores, unlike one query (KARANI_EMBEDDER_THREADS). Yields the thread count used."""
    if client.config.embedder_is_remote:
        yield 0
        return
    import torch  # optional (the memory extra)

    before = torch.get_num_threads()
    threads = max(before, os.cpu_count() or 1)
    torch.set_num_threads(threads)
    try:
        yield threads
    finally:
        torch.set_num_threads(before)


def _replay(client: Client, queryset: Any, *, batch_size: int, progress: Progress | None) -> int:
    done = 0
    total = queryset.count()

    def finish(inflight: Future | None) -> None:
        # The ledger bookkeeping stays on this thread (Django connections are per-thread);
        # only the vector insert runs beside the encoder.
        nonlocal done
        if inflight is not None:
            store.mark_indexed(inflight.result())
            done += len(inflight.result())
            if progress:
                progress(done, total)

    # In order of text length: a batch is padded to its longest text, so batching similar
    # lengths together is what the encoder itself does when handed every text at once.
    rows = (
        queryset.order_by(Length("text"), "id")
        .only("id", "text", "kind", "company_key")
        .iterator(chunk_size=2000)
    )
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="karani-reindex") as pool:
        inflight: Future | None = None
        while batch := list(islice(rows, batch_size)):
            vectors = store.embed_texts(client, [m.text for m in batch])
            finish(inflight)
            inflight = pool.submit(store.insert_rows, client, batch, vectors)
        finish(inflight)
    return done


def _full(client: Client) -> tuple[Any, int]:
    """Empty the collection; (the rows to replay, stale vectors removed)."""
    # Drop and recreate: also recovers a collection created with the wrong dimension.
    client.store.delete_col()
    client.store.create_col()
    identity.record(client)  # the configured embedder builds the new collection
    schema.drop_search_indexes(client.store, client.config)  # rebuilt once at the end
    mark_everything_pending()
    return Memory.objects.all(), 0


def _pending(client: Client) -> tuple[Any, int]:
    """Remove stale vectors; (the rows to replay, stale vectors removed)."""
    stale = list(
        Memory.all_objects.filter(deleted_at__isnull=False, vector_id__isnull=False).values_list(
            "pk", flat=True
        )
    )
    store.delete_ledger_ids(client, stale, maintenance=True)
    Memory.all_objects.filter(pk__in=stale).update(vector_id=None, indexed_at=None)
    todo = Memory.objects.filter(indexed_at__isnull=True)
    # A pending row may already have a vector (the insert landed, the bookkeeping did not):
    # remove it first so a catch-up never duplicates.
    store.delete_ledger_ids(client, list(todo.values_list("pk", flat=True)), maintenance=True)
    return todo, len(stale)


def reindex(
    *, pending_only: bool = False, batch_size: int = BATCH_SIZE, progress: Progress | None = None
) -> ReindexReport:
    """Full rebuild (idempotent) or pending catch-up. Raises SemanticUnavailable."""
    started = time.perf_counter()
    breaker.reset()  # an operator asked: try now, whatever the cool-down says

    def run(client: Client) -> ReindexReport:
        todo, removed = (_pending if pending_only else _full)(client)
        with encoder_threads(client):
            written = _replay(client, todo, batch_size=batch_size, progress=progress)
        schema.ensure_indexes(client.store, client.config, analyze=True, maintenance=True)
        rows, ledger_rows, repeats = store.counts(client, maintenance=True)
        return ReindexReport(
            pending_only=pending_only,
            written=written,
            removed=removed,
            ledger_live=Memory.objects.count(),
            index_rows=rows,
            index_ledger_rows=ledger_rows,
            index_repeats=repeats,
            pending_left=pending_count(),
            seconds=time.perf_counter() - started,
        )

    return guarded(run, use_breaker=False)
