"""Decisions made by an outside pipeline (the API and MCP doors): the posting, keyed by the
caller's external id, the decision event and its one verdict fact, written as qualify writes
its own. The database's constraints settle races between identical writers."""

import logging
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from memory import selectors as memory_selectors
from memory import services as memory
from qualify import holdout, inputs, verdict_fact
from qualify.errors import DecisionConflict, QualifyInputError
from qualify.models import (
    MAX_FACTS_PER_DECISION,
    MAX_WHY_CHARS,
    Arm,
    DecisionFact,
    Posting,
    Qualification,
    Remote,
    Verdict,
)
from qualify.outcomes import remember_after
from qualify.services import company_named

log = logging.getLogger("karani.qualify")

MAX_REASONS_CHARS = 300
MAX_MODEL_CHARS = 200
# Optional posting fields a decision may carry; a known external id keeps its first ones.
POSTING_FIELDS = ("role_category", "location", "remote", "salary", "description", "url")
# Identical writers racing: each lost race is retried once it can see the winner's rows.
ATTEMPTS = 3


@dataclass(frozen=True)
class Decided:
    qualification: Qualification
    created: bool  # False: an exact repeat, nothing was written
    replaced: int | None = None  # the earlier live verdict this one superseded
    fact_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        q = self.qualification
        return {
            "id": q.pk,
            "created": self.created,
            "external_id": q.posting.external_id,
            "posting_id": q.posting_id,
            "verdict": q.verdict,
            "fit_score": q.fit_score,
            "prompt_version": q.prompt_version,
            "arm": q.arm,
            "fact_ids": list(q.fact_ids),
            "replaced": self.replaced,
            "fact_error": self.fact_error,
        }


def _clean_facts(fact_ids: Any, facts: Any) -> dict[int, str]:
    """fact id -> why, in the order given: ``fact_ids`` and/or ``facts`` ([{"id", "why"}])."""
    if fact_ids is not None and not isinstance(fact_ids, list):
        raise QualifyInputError("fact_ids must be a list of fact ids", field="fact_ids")
    if facts is not None and not isinstance(facts, list):
        raise QualifyInputError('facts must be a list of {"id", "why"} objects', field="facts")
    pairs = [(i, "") for i in fact_ids or []]
    for item in facts or []:
        if not isinstance(item, dict) or set(item) - {"id", "why"}:
            raise QualifyInputError('each of facts must be {"id", "why"}', field="facts")
        why = inputs.clean_text(item.get("why"), name="why", limit=MAX_WHY_CHARS)
        pairs.append((item.get("id"), why))
    chosen: dict[int, str] = {}
    for fact_id, why in pairs:
        if isinstance(fact_id, bool) or not isinstance(fact_id, int) or fact_id < 1:
            raise QualifyInputError(
                f"fact id {fact_id!r} is not a positive whole number", field="fact_ids"
            )
        chosen[fact_id] = why or chosen.get(fact_id, "")
    if len(chosen) > MAX_FACTS_PER_DECISION:
        raise QualifyInputError(
            f"{len(chosen)} facts; a decision carries at most {MAX_FACTS_PER_DECISION}",
            field="fact_ids",
        )
    if not chosen:
        return chosen
    known = set(
        memory_selectors.list_facts(status="all").filter(pk__in=chosen).values_list("pk", flat=True)
    )
    if missing := [str(i) for i in chosen if i not in known]:
        raise QualifyInputError(f"no fact with id {', '.join(missing)}", field="fact_ids")
    return chosen


# What makes a decision a repeat: a retry, or a re-run whose context or wording moved on.
SAME_DECISION = ("prompt_version", "verdict", "fit_score")


def _same(q: Qualification, decision: dict[str, Any]) -> bool:
    return all(getattr(q, name) == decision[name] for name in SAME_DECISION)


def record_decision(
    *,
    external_id: str,
    company: str,
    title: str,
    verdict: str,
    fit_score: int,
    prompt_version: str,
    reasons: str = "",
    fact_ids: list[int] | None = None,
    facts: list[dict[str, Any]] | None = None,
    model: str = "",
    **posting_fields: Any,
) -> Decided:
    """Record one decision on the posting ``external_id`` names (created on first sight).

    A repeat (same prompt version, verdict and fit score) writes nothing and answers with the
    first, whose reasons and facts stand; another prompt version replaces the live verdict;
    another verdict or score under the same version is a DecisionConflict."""
    if unknown := set(posting_fields) - set(POSTING_FIELDS):
        raise QualifyInputError(f"unknown field(s): {', '.join(sorted(unknown))}")
    external_id = inputs.clean_external_id(external_id)
    company = inputs.clean_text(company, name="company", required=True)
    title = inputs.clean_text(title, name="title", required=True)
    location, remote = inputs.clean_location(
        posting_fields.get("location"), posting_fields.get("remote")
    )
    fields = {
        "role_category": inputs.clean_text(
            posting_fields.get("role_category"), name="role_category"
        ),
        "location": location,
        "remote": remote,
        "salary": inputs.clean_text(posting_fields.get("salary"), name="salary"),
        "description": inputs.clean_text(posting_fields.get("description"), name="description"),
        "url": inputs.clean_url(posting_fields.get("url")),
    }
    if fit_score is None:
        raise QualifyInputError("fit_score is required (0-100)", field="fit_score")
    decision = {
        "verdict": memory.clean_choice(verdict, what="verdict", choices=Verdict.values),
        "fit_score": memory.clean_fit_score(fit_score),
        "prompt_version": inputs.clean_text(
            prompt_version,
            name="prompt_version",
            limit=inputs.MAX_PROMPT_VERSION_CHARS,
            required=True,
        ),
        "reasons": inputs.clean_text(reasons, name="reasons", limit=MAX_REASONS_CHARS),
    }
    model = inputs.clean_text(model, name="model", limit=MAX_MODEL_CHARS)
    chosen = _clean_facts(fact_ids, facts)
    decision["fact_ids"] = list(chosen)

    for _ in range(ATTEMPTS):
        try:
            with transaction.atomic():
                done = _write(external_id, company, title, fields, decision, chosen, model)
            break
        except IntegrityError:
            # Another writer committed this posting or its verdict first; the next pass
            # sees its rows and answers from them.
            continue
    else:
        raise DecisionConflict(f"posting {external_id!r} is being decided by other writers; retry")
    if done.created:
        # After the commit, so no memory failure can undo the decision (and on PostgreSQL a
        # savepoint would cost two more round trips than this one autocommitted write).
        return _verdict_fact(done)
    return done


def _write(
    external_id: str,
    company: str,
    title: str,
    fields: dict[str, str],
    decision: dict[str, Any],
    chosen: dict[int, str],
    model: str,
) -> Decided:
    posting = Posting.objects.select_related("company").filter(external_id=external_id).first()
    live = None
    if posting is None:
        fields = {**fields, "remote": fields["remote"] or Remote.UNKNOWN}
        posting = Posting.objects.create(
            company=company_named(company), title=title, external_id=external_id, **fields
        )
    else:
        live = Qualification.objects.decided().filter(posting=posting).first()
    if live is not None:
        live.posting = posting
        if _same(live, decision):
            return Decided(qualification=live, created=False)
        if live.prompt_version == decision["prompt_version"]:
            raise DecisionConflict(
                f"posting {external_id!r} already has a {live.verdict} verdict (fit "
                f"{live.fit_score}) under prompt version {live.prompt_version!r}; re-judge "
                "under a new prompt version"
            )
    arm = holdout.arm_for(holdout.key_of(posting))
    if arm == Arm.HOLDOUT and chosen:
        raise QualifyInputError(
            f"posting {external_id!r} is held out from memory: its decision carries no facts",
            field="fact_ids",
        )
    if live is not None:
        # Re-judged under a new prompt version: the funnel counts the new verdict only.
        Qualification.objects.filter(pk=live.pk).update(deleted_at=timezone.now())
    q = Qualification.objects.create(
        posting=posting, arm=arm, fact_count=len(chosen), model_name=model, **decision
    )
    DecisionFact.objects.bulk_create(
        DecisionFact(qualification=q, memory_id=fact_id, why=why) for fact_id, why in chosen.items()
    )
    return Decided(qualification=q, created=True, replaced=live.pk if live else None)


def _verdict_fact(done: Decided) -> Decided:
    """The verdict fact (best effort, as qualify's own); a replaced verdict's fact is forgotten
    so memory holds one verdict per posting."""
    q = done.qualification
    posting = q.posting
    if done.replaced is not None:
        for old in memory_selectors.list_facts().filter(ref=f"qualification:{done.replaced}"):
            remember_after_forget(old.pk, reason=f"re-judged as qualification {q.pk}")
    fact_error = remember_after(
        f"verdict fact for qualification {q.pk}",
        text=verdict_fact.compose(
            verdict=q.verdict, fit_score=q.fit_score, criteria={}, posting=posting, profile=None
        ),
        kind=memory.Kind.PREFERENCE,
        company=posting.company.name,
        source=memory.Source.VERDICT,
        fit_score=q.fit_score,
        ref=f"qualification:{q.pk}",
    )
    return Decided(q, created=True, replaced=done.replaced, fact_error=fact_error)


def remember_after_forget(memory_id: int, *, reason: str) -> None:
    try:
        memory.forget(id=memory_id, reason=reason, actor="qualify")
    except Exception as exc:  # the decision stands; a stale verdict fact is only logged
        log.warning("verdict fact %s not forgotten (%s)", memory_id, exc)
