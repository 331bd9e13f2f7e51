"""Outcomes: a stage an application reached, recorded as an event, then its memory fact."""

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import timezone

from memory import services as memory
from qualify.credentials import refusal
from qualify.errors import QualifyError
from qualify.models import Outcome, Posting, Qualification, Stage

log = logging.getLogger("karani.qualify")

MAX_NOTE_CHARS = 500
_OUTCOME_TEXT = {
    Stage.APPLIED: "Applied to {title} at {company}",
    Stage.SCREEN: "Screen for {title} at {company}",
    Stage.INTERVIEW: "Interview for {title} at {company}",
    Stage.OFFER: "Offer for {title} at {company}",
    Stage.REJECTED: "Rejected by {company} for {title}",
    Stage.WITHDRAWN: "Withdrew from {title} at {company}",
}


def remember_after(label: str, **fact: Any) -> str | None:
    """Write an event's memory fact; a failure is logged and returned, never raised, because
    a memory outage must not undo or block the event already recorded."""
    try:
        memory.remember(actor="qualify", **fact)
    except Exception as exc:
        reason = f"{type(exc).__name__}: {str(exc).strip()[:200]}"
        log.warning("%s not written (%s)", label, reason)
        return reason
    return None


@dataclass(frozen=True)
class Recorded:
    outcome: Outcome
    fact_error: str | None = None


def record_outcome(
    *, posting_id: int, stage: str, note: str = "", occurred_at: datetime | None = None
) -> Recorded:
    """Record a stage event for a posting, then its outcome fact (best effort)."""
    if stage not in Stage.values:
        raise QualifyError(f"unknown stage {stage!r}; use one of: {', '.join(Stage.values)}")
    note = " ".join((note or "").split())
    if len(note) > MAX_NOTE_CHARS:
        raise QualifyError(f"note is longer than {MAX_NOTE_CHARS} characters")
    if refused := refusal("note", note):
        raise QualifyError(refused)
    if occurred_at is not None and occurred_at > timezone.now():
        raise QualifyError("an outcome cannot be in the future")
    posting = Posting.objects.select_related("company").filter(pk=posting_id).first()
    if posting is None:
        raise QualifyError(f"no posting with id {posting_id}")
    qualification = Qualification.objects.decided().filter(posting=posting).first()
    outcome = Outcome.objects.create(
        posting=posting,
        qualification=qualification,
        stage=stage,
        note=note,
        occurred_at=occurred_at or timezone.now(),
    )
    text = _OUTCOME_TEXT[Stage(stage)].format(title=posting.title, company=posting.company.name)
    fact_error = remember_after(
        f"outcome fact for outcome {outcome.pk}",
        text=f"{text}: {note}" if note else text,
        kind=memory.Kind.OUTCOME,
        company=posting.company.name,
        source=memory.Source.OUTCOME,
        fit_score=qualification.fit_score if qualification else None,
        ref=f"outcome:{outcome.pk}",
    )
    return Recorded(outcome=outcome, fact_error=fact_error)
