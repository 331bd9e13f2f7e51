"""New facts indexed off the write's path (KARANI_INDEX_IN_BACKGROUND): one worker thread per
process embeds what the ledger committed, so a write returns after its commit.

Recall's lexical half finds a fact the moment its write commits, so only the dense half waits
for the worker. What the worker cannot index stays pending (``indexed_at`` null) for
``karani reindex --pending``, as an inline write's failure does (ADR 0009, ADR 0011). Every karani
command waits for the worker before it returns (memory.management.base), so a command's writes
are indexed when it exits; a server's process waits at exit too.
"""

import atexit
import logging
import os
import queue
import threading
from collections.abc import Callable, Sequence

from django.db import connection

log = logging.getLogger("karani.memory")

Indexer = Callable[[list[int]], None]


class _Worker:
    def __init__(self, index: Indexer) -> None:
        self.index = index
        self.pending: queue.Queue[list[int]] = queue.Queue()
        self.pid = os.getpid()
        self.thread = threading.Thread(target=self._run, name="karani-indexer", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            batches = [self.pending.get()]
            # Whatever queued meanwhile goes in the same forward pass of the embedder.
            while True:
                try:
                    batches.append(self.pending.get_nowait())
                except queue.Empty:
                    break
            try:
                self.index([pk for batch in batches for pk in batch])
            except Exception:
                log.warning("background indexing failed; the rows stay pending", exc_info=True)
            finally:
                # This thread's own connection; the next batch may come long after.
                connection.close()
                for _ in batches:
                    self.pending.task_done()


_lock = threading.Lock()
_worker: _Worker | None = None


def submit(memory_ids: Sequence[int], index: Indexer) -> None:
    """Hand ``memory_ids`` to this process's worker, which calls ``index`` with them."""
    global _worker
    with _lock:
        # A forked child (a gunicorn worker) inherits the parent's object, not its thread.
        if _worker is None or _worker.pid != os.getpid():
            _worker = _Worker(index)
    _worker.pending.put(list(memory_ids))


def flush() -> None:
    """Wait until everything handed over so far is indexed or left pending."""
    worker = _worker
    if worker is not None and worker.pid == os.getpid():
        worker.pending.join()


atexit.register(flush)
