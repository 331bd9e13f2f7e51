"""Outcomes: a stage an application reached, recorded as an event, then its memory fact.

The fact is best effort, as for verdicts: a memory failure is logged and returned, and the
outcome event stands regardless.
"""

import logging
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from memory import services as memory
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
    if note:
        text = f"{text}: {note}"
    try:
        memory.remember(
            text=text,
            kind=memory.Kind.OUTCOME,
            company=posting.company.name,
            source=memory.Source.OUTCOME,
            fit_score=qualification.fit_score if qualification else None,
            ref=f"outcome:{outcome.pk}",
            actor="qualify",
        )
    except Exception as exc:  # the outcome event stands regardless
        reason = f"{type(exc).__name__}: {str(exc).strip()[:200]}"
        log.warning("outcome fact for outcome %s not written (%s)", outcome.pk, reason)
        return Recorded(outcome=outcome, fact_error=reason)
    return Recorded(outcome=outcome)
