"""Outcomes: a stage an application reached, recorded as an event, then its memory fact."""

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from memory import services as memory
from qualify import writer
from qualify.errors import PostingNotFound, QualifyError, QualifyInputError
from qualify.inputs import clean_external_id, clean_text
from qualify.models import Outcome, Posting, Stage

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
    created: bool = True  # False: the same stage and note were already recorded

    def to_dict(self) -> dict[str, Any]:
        o = self.outcome
        return {
            **writer.answer_head(o, created=self.created),
            "stage": o.stage,
            "note": o.note,
            "occurred_at": o.occurred_at.isoformat(),
            "qualification_id": o.qualification_id,
            "fact_error": self.fact_error,
        }


def posting_named(external_id: str) -> Posting:
    """The live posting (with its company) that ``external_id`` names; PostingNotFound until
    its decision is recorded."""
    posting = Posting.objects.select_related("company").filter(external_id=external_id).first()
    if posting is None:
        raise PostingNotFound(
            f"no posting with external_id {external_id!r}; record its decision first"
        )
    return posting


def _posting(posting_id: int | None, external_id: str | None) -> Posting:
    if external_id is not None:
        return posting_named(external_id)
    posting = Posting.objects.select_related("company").filter(pk=posting_id).first()
    if posting is None:
        raise QualifyError(f"no posting with id {posting_id}")
    return posting


def record_outcome(
    *,
    posting_id: int | None = None,
    external_id: str | None = None,
    stage: str,
    note: str = "",
    occurred_at: datetime | None = None,
) -> Recorded:
    """Record a stage event for a posting (by id, or by the caller's ``external_id``), then
    its outcome fact (best effort). The same stage and note again, while the first is live,
    writes nothing and returns the first (constraint qualify_outcome_one_live_per_stage)."""
    if (posting_id is None) == (external_id is None):
        raise QualifyError("name the posting by its id or by its external_id")
    if stage not in Stage.values:
        raise QualifyInputError(
            f"unknown stage {stage!r}; use one of: {', '.join(Stage.values)}", field="stage"
        )
    note = clean_text(note, name="note", limit=MAX_NOTE_CHARS)
    if occurred_at is not None and occurred_at > timezone.now():
        raise QualifyInputError("an outcome cannot be in the future", field="occurred_at")
    if external_id is not None:
        external_id = clean_external_id(external_id)
    posting = _posting(posting_id, external_id)
    same = Outcome.objects.select_related("posting").filter(posting=posting, stage=stage, note=note)
    if (earlier := same.first()) is not None:
        return Recorded(outcome=earlier, created=False)
    try:
        with transaction.atomic():
            # The posting's row lock waits out a re-judging, so the outcome is credited to the
            # verdict that is live when it commits (qualify.writer).
            posting = writer.locked_posting(pk=posting.pk, with_company=False) or posting
            qualification = writer.live_verdict(posting)
            outcome = Outcome.objects.create(
                posting=posting,
                qualification=qualification,
                stage=stage,
                note=note,
                occurred_at=occurred_at or timezone.now(),
            )
    except IntegrityError:  # an identical outcome committed meanwhile: it is the answer
        return Recorded(outcome=same.get(), created=False)
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
