"""The seam between the ledger and the optional semantic index (KARANI_MEMORY=mem0).

The service calls these after its ledger transaction commits, so an index failure can never
roll back or block a ledger write. In off/basic mode they do nothing. In mem0 mode nothing
here raises: a failing index leaves writes pending and makes ``search`` return None, which
the service turns into a keyword fallback (ADR 0009). mem0 itself is imported lazily, on the
first call, never at Django start-up.
"""

import logging
from collections.abc import Sequence

from memory import modes
from memory.keyword import Hit

log = logging.getLogger("karani.memory")


def added(memory_ids: Sequence[int]) -> None:
    """New live facts exist: index them (or leave them pending when the index is down)."""
    if modes.current() != modes.MEM0 or not memory_ids:
        return
    from memory.semantic import sync
    from memory.semantic.config import SemanticUnavailable

    try:
        sync.added(memory_ids)
    except SemanticUnavailable:
        pass  # already logged once by the breaker; the rows stay pending
    except Exception:
        log.warning("semantic index: could not record indexing; rows stay pending", exc_info=True)


def removed(memory_ids: Sequence[int]) -> None:
    """Facts were soft-deleted: drop them from the index, best effort."""
    if modes.current() != modes.MEM0 or not memory_ids:
        return
    from memory.semantic import sync
    from memory.semantic.config import SemanticUnavailable

    try:
        sync.removed(memory_ids)
    except SemanticUnavailable:
        pass  # recall never returns a deleted fact anyway; reindex drops the stale vector
    except Exception:
        log.warning("semantic index: could not remove deleted rows", exc_info=True)


def search(*, query: str, company_key: str | None, limit: int) -> list[Hit] | None:
    """Semantic candidates (ledger ids, best first, possibly stale), or None to fall back."""
    if modes.current() != modes.MEM0:
        return None
    from memory.semantic import search as semantic
    from memory.semantic.config import SemanticUnavailable

    try:
        return semantic.search(query=query, company_key=company_key, limit=limit)
    except SemanticUnavailable:
        return None
    except Exception:
        log.warning("semantic index: search failed; falling back to keyword", exc_info=True)
        return None
