"""Every call into the semantic index goes through ``guarded`` (ADR 0009): any failure
trips the breaker and becomes ``SemanticUnavailable``, for the caller to fall back."""

import logging
from collections.abc import Callable
from typing import TypeVar

from django.db.models import Q

from memory.conf import settings
from memory.errors import first_line
from memory.models import Memory
from memory.semantic import client as clientmod
from memory.semantic.breaker import breaker
from memory.semantic.config import SemanticUnavailable

log = logging.getLogger("karani.memory")
T = TypeVar("T")


def describe(exc: BaseException) -> str:
    """One line a person can act on."""
    if isinstance(exc, SemanticUnavailable):
        return str(exc)
    name = type(exc).__name__
    if name == "PoolTimeout":
        reason = clientmod.last_connect_error()
        if not reason:
            return "the vector store did not answer in time (KARANI_VECTOR_DSN unreachable or hung)"
        hint = "; create it with the vector extension" if "does not exist" in reason else ""
        return f"could not connect to the vector store (KARANI_VECTOR_DSN): {reason}{hint}"
    if name == "UndefinedTable":
        return (
            "the vector collection is missing (dropped?); it is recreated on the next attempt, "
            "and `karani reindex` refills it"
        )
    if name in {"APIConnectionError", "APITimeoutError", "LLMError"}:
        return f"the extraction LLM (KARANI_LLM_BASE_URL) did not answer: {first_line(exc)}"
    return f"{name}: {first_line(exc)}"


def _collection_dropped(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if type(seen).__name__ == "UndefinedTable":
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def mark_everything_pending() -> None:
    """Every vector is gone: say so in the ledger, for `doctor` and `reindex --pending`."""
    Memory.all_objects.filter(Q(indexed_at__isnull=False) | Q(vector_id__isnull=False)).update(
        indexed_at=None, vector_id=None
    )


def guarded(operation: Callable[[clientmod.Client], T], *, use_breaker: bool = True) -> T:
    """Run ``operation`` against the index. Raises SemanticUnavailable, nothing else."""
    if use_breaker and not breaker.allow():
        raise SemanticUnavailable(f"skipped while the index is down: {breaker.reason}")
    try:
        client = clientmod.get()
        result = operation(client)
    except Exception as exc:
        reason = describe(exc)
        # Whatever broke, the next attempt starts from a fresh pool and re-ensures the
        # collection (mem0's own store never notices a dropped table).
        clientmod.discard_store()
        if _collection_dropped(exc):
            try:
                mark_everything_pending()
            except Exception:
                log.debug("could not mark rows pending after a dropped collection", exc_info=True)
        if isinstance(exc, SemanticUnavailable) and exc.__cause__ is None:
            log.debug("semantic index: %s", reason)
        else:
            log.debug("semantic index failure", exc_info=True)
        breaker.trip(reason, cooldown=float(settings.KARANI_VECTOR_COOLDOWN))
        raise SemanticUnavailable(reason) from exc
    breaker.succeeded()
    return result
