"""The one door for writes to memory: remember, forget, correct, redact, and bulk
import/export.

Keyword-only; everything is validated before the database is touched (ADR 0004).
"""

from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from memory import index, redaction
from memory.credentials import find_secrets
from memory.errors import FactAlreadyDeleted, FactAlreadyLive, FactNotFound

# Kind and Source are part of the door's vocabulary: callers (qualify) name them as
# services.Kind / services.Source and never import memory.models.
from memory.ledger import RememberResult, index_on_commit, write_fact
from memory.models import Kind, Memory, Redaction, Source
from memory.transfer import (
    EXPORT_FIELDS,
    ImportReport,
    export_record,
    import_facts,
    iter_all_facts,
    restore_facts,
)
from memory.validation import (
    clean_actor,
    clean_choice,
    clean_fit_score,
    clean_id,
    clean_reason,
    clean_text,
    refuse_secrets,
    validate_fact,
)

__all__ = [
    "EXPORT_FIELDS",
    "ImportReport",
    "Kind",
    "RememberResult",
    "Source",
    "clean_choice",
    "clean_fit_score",
    "correct",
    "export_record",
    "find_secrets",
    "forget",
    "import_facts",
    "iter_all_facts",
    "redact",
    "refuse_secrets",
    "remember",
    "restore_facts",
    "validate_fact",
]


def remember(
    *,
    text: str,
    kind: str = Kind.NOTE,
    company: str | None = None,
    source: str = Source.TEACH,
    fit_score: int | None = None,
    ref: str | None = None,
    actor: str = "",
) -> RememberResult:
    """Store a fact, or touch its live twin (same text, kind and company)."""
    fact = validate_fact(
        text=text, kind=kind, company=company, source=source, fit_score=fit_score, ref=ref
    )
    result = write_fact(fact, actor=clean_actor(actor), now=timezone.now())
    if result.created:
        index_on_commit([result.id])
    return result


def _for_update(memory_id: Any) -> Memory:
    try:
        return Memory.all_objects.select_for_update().get(pk=clean_id(memory_id))
    except Memory.DoesNotExist:
        raise FactNotFound(f"no fact with id {memory_id}") from None


def _already_deleted(memory: Memory) -> FactAlreadyDeleted:
    # A corrected fact names its successor: that is the fact the caller meant to change.
    successor = Memory.all_objects.filter(supersedes=memory).values_list("pk", flat=True).first()
    how = "deleted" if successor is None else f"corrected by fact {successor}"
    return FactAlreadyDeleted(
        f"fact {memory.pk} was already {how} on {memory.deleted_at:%Y-%m-%d %H:%M} "
        f"({memory.delete_reason})",
        field="id",
    )


def _soft_delete(memory: Memory, *, reason: str, actor: str, now: datetime) -> None:
    memory.deleted_at = now
    memory.delete_reason = reason
    memory.deleted_by = actor
    # The database drops the row from its keyword index (migration 0012); the fact stays.
    memory.save(update_fields=["deleted_at", "delete_reason", "deleted_by"])


def forget(*, id: int, reason: str, actor: str = "") -> Memory:
    """Soft-delete a live fact with a reason; a retry (same reason and actor) returns the row."""
    reason = clean_reason(reason)
    refuse_secrets(reason, what="reason")
    actor = clean_actor(actor)
    with transaction.atomic():
        memory = _for_update(id)
        if memory.deleted_at is not None:
            # Only a forget repeats a forget: a row a correction replaced stays a refusal.
            replaced = Memory.all_objects.filter(supersedes=memory).exists()
            if (memory.delete_reason, memory.deleted_by) == (reason, actor) and not replaced:
                return memory
            raise _already_deleted(memory)
        _soft_delete(memory, reason=reason, actor=actor, now=timezone.now())
    transaction.on_commit(lambda: index.removed([memory.pk]))
    return memory


def correct(*, id: int, text: str, reason: str, actor: str = "") -> Memory:
    """Replace a live fact by a successor with the new text (kind, company, fit score and ref
    carry over) in one transaction; a retry (same text, reason and actor) returns it. A live
    fact that already holds the text (as stored: normalised) is returned unchanged, nothing
    written: callers tell it apart by its id, the one asked to correct."""
    reason = clean_reason(reason)
    refuse_secrets(reason, what="reason")
    actor = clean_actor(actor)
    new_text = clean_text(text)
    refuse_secrets(new_text)
    now = timezone.now()
    with transaction.atomic():
        old = _for_update(id)
        fact = validate_fact(
            text=new_text,
            kind=old.kind,
            company=old.company,
            source=Source.CORRECTION,
            fit_score=old.fit_score,
            ref=old.ref,
        )
        if old.deleted_at is not None:
            successor = Memory.all_objects.filter(supersedes=old).first()
            if (
                successor is not None
                and successor.fact_key == fact.fact_key
                and (old.delete_reason, old.deleted_by) == (reason, actor)
            ):
                return successor
            raise _already_deleted(old)
        if fact.text == old.text:
            # Already says that: a pipeline re-sending its correction gets the fact, unchanged.
            return old
        _soft_delete(old, reason=reason, actor=actor, now=now)
        result = write_fact(fact, actor=actor, now=now, supersedes=old)
        if not result.created:  # a live twin: raising rolls back the delete and the touch
            raise FactAlreadyLive(
                f"the corrected text is already live as fact {result.id}; forget {old.pk} instead",
                field="text",
            )
    transaction.on_commit(lambda: index.removed([old.pk]))
    index_on_commit([result.id])
    return result.memory


def redact(*, actor: str = "") -> Redaction | None:
    """Replace each credential the screen finds in any stored text by ``[redacted: <kind>]``,
    in place, with an audit record and no copy left behind (ADR 0012); None when nothing was
    flagged."""
    return redaction.redact(actor=clean_actor(actor))
