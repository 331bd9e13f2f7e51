"""Reads for outside pipelines (the API and MCP doors): a posting's working context, what was
decided on it, and the funnel, each through the same code qualify's own commands use."""

from typing import Any

from django.db.models import Prefetch

from qualify import funnel, holdout, inputs, preparation
from qualify.models import DecisionFact, FactPart, Outcome, Posting, Qualification
from qualify.outcomes import posting_named


def working_context(
    *, external_id: str | None = None, limit: int | None = None, **fields: Any
) -> preparation.WorkingContext:
    """The block for a posting (``fields``: company, title, role_category, ... or task).

    With ``external_id`` the holdout arm is the one the posting has, or will have once its
    decision is recorded: drawn from the same key (``holdout.key_of``)."""
    subject = inputs.clean_subject(fields)
    limit = inputs.clean_limit(limit)
    key = None
    if external_id is not None and external_id != "":
        external_id = inputs.clean_external_id(external_id)
        posting = Posting.objects.filter(external_id=external_id).first()
        key = holdout.key_of(posting) if posting is not None else external_id
    return preparation.build_working_context(subject, key=key, limit=limit)


def funnel_report() -> dict[str, Any]:
    """What ``karani funnel --json`` prints: every prompt version recorded, the arms compared."""
    return funnel.to_dict(funnel.compute())


def posting_history(*, external_id: str) -> dict[str, Any]:
    """What was decided on the posting ``external_id`` names and what followed: its verdicts
    newest first (``live`` false once re-judged), each with the facts it was given and why,
    and its outcomes in the order they happened. A restarted pipeline asks before judging."""
    posting = posting_named(inputs.clean_external_id(external_id))
    facts = Prefetch(
        "decision_facts", queryset=DecisionFact.objects.filter(part=FactPart.BLOCK).order_by("pk")
    )
    verdicts = (
        Qualification.all_objects.decided()
        .filter(posting=posting)
        .prefetch_related(facts)
        .order_by("-created_at", "-pk")
    )
    outcomes = Outcome.objects.filter(posting=posting).order_by("occurred_at", "pk")
    return {
        "external_id": posting.external_id,
        "posting_id": posting.pk,
        "company": posting.company.name,
        "title": posting.title,
        "decisions": [
            {
                "id": q.pk,
                "live": q.deleted_at is None,
                "verdict": q.verdict,
                "fit_score": q.fit_score,
                "prompt_version": q.prompt_version,
                "arm": q.arm,
                "reasons": q.reasons,
                "model": q.model_name,
                "decided_at": q.created_at,
                "facts": [{"id": f.memory_id, "why": f.why} for f in q.decision_facts.all()],
            }
            for q in verdicts
        ],
        "outcomes": [
            {
                "id": o.pk,
                "stage": o.stage,
                "note": o.note,
                "occurred_at": o.occurred_at,
                "qualification_id": o.qualification_id,
            }
            for o in outcomes
        ],
    }
