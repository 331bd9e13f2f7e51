"""Decisions made by an outside pipeline (the API and MCP doors): the posting, keyed by the
caller's external id, the decision event and its one verdict fact, written in one transaction
by qualify's one writer (qualify.writer), as qualify writes its own."""

from typing import Any

from django.db import IntegrityError, transaction

from memory import selectors as memory_selectors
from memory import services as memory
from memory.errors import FactNotFound
from memory.text import company_key
from qualify import holdout, inputs, writer
from qualify.errors import CompanyMismatch, DecisionConflict, QualifyInputError, UrlTaken
from qualify.models import (
    MAX_FACTS_PER_DECISION,
    MAX_WHY_CHARS,
    Arm,
    Posting,
    Qualification,
    Remote,
    Verdict,
)
from qualify.writer import Decided

__all__ = ["Decided", "record_decision"]

MAX_REASONS_CHARS = 300
MAX_MODEL_CHARS = 200
# Optional posting fields a decision may carry; a known external id keeps its first ones.
POSTING_FIELDS = ("role_category", "location", "remote", "salary", "description", "url")
# Standing preferences a decision may record as shown (the context's "standing" list).
MAX_STANDING = 200
BOTH_FACT_LISTS = "send fact_ids or facts, not both (facts is fact_ids with each fact's why)"
# Identical writers racing: each lost race is retried once it can see the winner's rows.
ATTEMPTS = 3


def _clean_facts(
    fact_ids: Any,
    facts: Any,
    *,
    field: str = "fact_ids",
    most: int = MAX_FACTS_PER_DECISION,
) -> dict[int, str]:
    """fact id -> why, in the order given: ``fact_ids``, or ``facts`` ([{"id", "why"}])."""
    # Two ways to say one thing: one list keeps the cap of 10 a schema's maxItems can state.
    if fact_ids is not None and facts is not None:
        raise QualifyInputError(BOTH_FACT_LISTS, field="facts")
    if fact_ids is not None and not isinstance(fact_ids, list):
        raise QualifyInputError("fact_ids must be a list of fact ids", field="fact_ids")
    if facts is not None and not isinstance(facts, list):
        raise QualifyInputError('facts must be a list of {"id", "why"} objects', field="facts")
    pairs = [(i, "") for i in fact_ids or []]
    for item in facts or []:
        if not isinstance(item, dict) or set(item) - {"id", "why"}:
            name = "facts" if field == "fact_ids" else field
            raise QualifyInputError(f'each of {name} must be {{"id", "why"}}', field=name)
        why = inputs.clean_text(item.get("why"), name="why", limit=MAX_WHY_CHARS)
        pairs.append((item.get("id"), why))
    chosen: dict[int, str] = {}
    for fact_id, why in pairs:
        if isinstance(fact_id, bool) or not isinstance(fact_id, int) or fact_id < 1:
            raise QualifyInputError(
                f"fact id {fact_id!r} is not a positive whole number", field=field
            )
        chosen[fact_id] = why or chosen.get(fact_id, "")
    if len(chosen) > most:
        what = "facts" if field == "fact_ids" else "standing preferences"
        raise QualifyInputError(
            f"{len(chosen)} {what}; a decision carries at most {most}", field=field
        )
    if not chosen:
        return chosen
    known = set(
        memory_selectors.list_facts(status="all").filter(pk__in=chosen).values_list("pk", flat=True)
    )
    if missing := [str(i) for i in chosen if i not in known]:
        # An unknown id, as a path's would be (404): no schema can know which ids exist.
        raise FactNotFound(f"no fact with id {', '.join(missing)} (in {field})")
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
    standing: list[dict[str, Any]] | None = None,
    **posting_fields: Any,
) -> Decided:
    """Record one decision on the posting ``external_id`` names (created on first sight).

    A repeat (same prompt version, verdict and fit score) writes nothing and answers with the
    first, whose reasons and facts stand (its verdict fact is written if missing); another
    prompt version replaces the live verdict; another verdict or score under the same version
    is a DecisionConflict, as are a url another posting holds (UrlTaken) and another company
    than the posting's (CompanyMismatch)."""
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
    # The standing preferences the context showed beside the block (its "standing"): kept as
    # the decision's provenance, outside fact_ids and its cap of 10.
    shown_standing = _clean_facts(None, standing, field="standing", most=MAX_STANDING)

    for _ in range(ATTEMPTS):
        try:
            with transaction.atomic():
                return _write(
                    external_id, company, title, fields, decision, chosen, model, shown_standing
                )
        except IntegrityError:
            # Another writer created this posting first; the next pass finds it, locked.
            continue
    raise DecisionConflict(f"posting {external_id!r} is being decided by other writers; retry")


def _refuse_a_taken_url(url: str) -> None:
    """A url is one live posting's (qualify_posting_one_live_per_url): a second external id
    for it is an answer to give, not a race to retry."""
    other = Posting.objects.filter(url=url).first() if url else None
    if other is None:
        return
    if other.external_id:
        held = f"the posting of external_id {other.external_id!r}"
        advice = "record the decision under that external_id, or without the url"
    else:
        held = f"posting {other.pk}'s (imported without an external_id)"
        advice = "record the decision without the url"
    raise UrlTaken(f"url {url!r} is already {held}; {advice}")


def _write(
    external_id: str,
    company: str,
    title: str,
    fields: dict[str, str],
    decision: dict[str, Any],
    chosen: dict[int, str],
    model: str,
    standing: dict[int, str],
) -> Decided:
    posting = writer.locked_posting(external_id=external_id)
    live = None
    if posting is None:
        _refuse_a_taken_url(fields["url"])
        fields = {**fields, "remote": fields["remote"] or Remote.UNKNOWN}
        posting = writer.new_posting(
            company=company, title=title, external_id=external_id, **fields
        )
    else:
        if company_key(company) != posting.company.name_key:
            raise CompanyMismatch(
                f"posting {external_id!r} is at {posting.company.name!r}, not {company!r}; a "
                "posting's company never changes: record that one under its own external_id"
            )
        live = writer.live_verdict(posting)
    if live is not None:
        if _same(live, decision):
            return writer.repeat(live)
        if live.prompt_version == decision["prompt_version"]:
            raise DecisionConflict(
                f"posting {external_id!r} already has a {live.verdict} verdict (fit "
                f"{live.fit_score}) under prompt version {live.prompt_version!r}; re-judge "
                "under a new prompt version"
            )
    arm = holdout.arm_for(holdout.key_of(posting))
    if arm == Arm.HOLDOUT and (chosen or standing):
        raise QualifyInputError(
            f"posting {external_id!r} is held out from memory: its decision carries no facts",
            field="fact_ids",
        )
    # Re-judged under a new prompt version: the funnel counts the new verdict only.
    values = {**decision, "arm": arm, "fact_count": len(chosen), "model_name": model}
    return writer.write(
        posting=posting, values=values, shown=chosen, replacing=live, standing=standing
    )
