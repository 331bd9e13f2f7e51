"""The qualify pipeline's one door. A decision and its verdict fact are written in one
transaction (qualify.writer), the fact in a savepoint, so a memory outage never rolls back,
blocks or fails the decision."""

import logging
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from django.db import IntegrityError, transaction

from qualify import agent, context, llm, text, verdict, writer
from qualify.credentials import first_refusal, withheld_error
from qualify.errors import QualifyError
from qualify.few_shot import FewShotPool
from qualify.models import (
    MAX_WHY_CHARS,
    PROFILE_TEXT_FIELDS,
    Mode,
    Posting,
    Profile,
    Qualification,
)
from qualify.outcomes import Recorded, record_outcome
from qualify.postings import PostingRowError
from qualify.postings import clean as clean_posting
from qualify.preparation import prepare_prompt
from qualify.writer import company_named

log = logging.getLogger("karani.qualify")

# The door's names that live in their own modules.
__all__ = ["QualifyError", "Recorded", "company_named", "prepare_prompt", "record_outcome"]

# A dead LLM is not worth timeout x postings of waiting (memory failures never count).
MAX_ENDPOINT_FAILURES_IN_A_ROW = 3


@dataclass
class ImportReport:
    created: int = 0
    duplicates: int = 0
    rejected: list[tuple[int, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "created": self.created,
            "duplicates": self.duplicates,
            "rejected": len(self.rejected),
            "rejects": [{"line": n, "error": e} for n, e in self.rejected],
        }


def import_postings(*, records: Iterable[tuple[int, Any]]) -> ImportReport:
    """Import ``(line, record)`` pairs; a bad row is reported with its line, and a posting
    whose URL is already live counts as a duplicate (re-importing a file adds nothing)."""
    report = ImportReport()
    for line_no, record in records:
        try:
            fields = clean_posting(record)
        except PostingRowError as exc:
            report.rejected.append((line_no, str(exc)))
            continue
        if fields["url"] and Posting.objects.filter(url=fields["url"]).exists():
            report.duplicates += 1
            continue
        company = fields.pop("company")
        try:
            with transaction.atomic():
                Posting.objects.create(company=company_named(company), **fields)
            report.created += 1
        except IntegrityError:  # the same URL imported concurrently
            report.duplicates += 1
    return report


def set_profile(
    *,
    summary: str | None = None,
    preferences: str | None = None,
    dealbreakers: list[str] | None = None,
) -> Profile:
    """Update the current candidate profile (or create the first one)."""
    profile = Profile.current() or Profile(summary="")
    if profile.pk is None and not (summary or "").strip():
        raise QualifyError("the first profile needs a summary (--summary)")
    given = {"summary": summary, "preferences": preferences, "dealbreakers": dealbreakers}
    for name, value in given.items():
        if value is None:
            continue
        value, refused = text.policed(name, value)
        if refused:
            raise QualifyError(refused)
        if name == "summary" and not value:
            raise QualifyError("summary is empty")
        setattr(profile, name, value)
    refused = first_refusal({n: getattr(profile, n) for n in PROFILE_TEXT_FIELDS})
    if refused:
        raise QualifyError(refused)
    profile.save()
    return profile


@dataclass(frozen=True)
class Qualified:
    """One qualification as recorded, plus what happened around it (for the summary)."""

    qualification: Qualification
    memory_error: str | None = None  # recall failed: the block was empty
    fact_error: str | None = None  # the verdict fact was not written


def qualify_posting(
    *,
    posting: Posting,
    profile: Profile,
    client: llm.ChatClient,
    agent_mode: bool = False,
    pool: FewShotPool | None = None,
) -> Qualified:
    """Ask the model about one posting and record the result (a verdict or an error)."""
    prepared = prepare_prompt(posting=posting, profile=profile, agent_mode=agent_mode, pool=pool)
    version = prepared.version
    client.elapsed_ms = 0.0
    standing = {f.id: f.why[:MAX_WHY_CHARS] for f in prepared.standing}
    asked = agent.ask(client, prepared.messages, posting, tools=version.agent, shown=set(standing))
    # Single mode recalled while preparing; agent mode recalls through its tool.
    facts = prepared.facts or asked.facts
    memory_error = prepared.memory_error or next(iter(asked.memory_errors), None)
    decision = verdict.decide(asked.criteria) if asked.criteria is not None else None
    shown = {f.id: f.why[:MAX_WHY_CHARS] for f in facts}
    values = {
        # No decision: the model's defaults (no verdict, no score, no reasons).
        **(asdict(decision) if decision else {}),
        "criteria": asked.criteria or {},
        "prompt_version": version.name,
        "mode": Mode.AGENT if version.agent else Mode.SINGLE,
        "arm": prepared.arm,
        "fact_ids": [f.id for f in facts],
        "fact_count": len(facts),
        "model_name": client.config.model[:200],
        "latency_ms": round(client.elapsed_ms),
        "error": withheld_error(asked.error)[:500],
    }
    try:
        with transaction.atomic():
            locked = writer.locked_posting(pk=posting.pk)
            if locked is None:
                raise QualifyError(f"posting {posting.pk} was deleted meanwhile; skipped")
            if decision and writer.live_verdict(locked) is not None:
                raise QualifyError(
                    f"posting {posting.pk} got a verdict from another run meanwhile; skipped"
                )
            done = writer.write(
                posting=locked, values=values, shown=shown, profile=profile, standing=standing
            )
    except IntegrityError:
        raise QualifyError(
            f"posting {posting.pk} got a verdict from another run meanwhile; skipped"
        ) from None
    return Qualified(
        qualification=done.qualification, memory_error=memory_error, fact_error=done.fact_error
    )


def pending_postings(*, posting_id: int | None = None, limit: int | None = None) -> list[Posting]:
    """Live postings without a live verdict (an earlier error is retried), oldest first."""
    if posting_id is not None:
        posting = Posting.objects.select_related("company").filter(pk=posting_id).first()
        if posting is None:
            raise QualifyError(f"no posting with id {posting_id}")
        done = Qualification.objects.decided().filter(posting=posting).first()
        if done is not None:
            raise QualifyError(
                f"posting {posting_id} already has a verdict (qualification {done.pk})"
            )
        return [posting]
    if limit is not None and limit < 1:
        raise QualifyError("--limit must be at least 1")
    decided = Qualification.objects.decided().values("posting_id")
    queryset = Posting.objects.exclude(pk__in=decided).select_related("company").order_by("id")
    return list(queryset[:limit] if limit else queryset)


@dataclass
class Batch:
    """Everything checked before the first LLM call."""

    postings: list[Posting]
    profile: Profile
    client: llm.ChatClient


def prepare_batch(*, posting_id: int | None = None, limit: int | None = None) -> Batch:
    """Check configuration and inputs; raises before any request is made."""
    config = llm.LLMConfig.from_settings()  # missing endpoint: LLMNotConfigured, one line
    profile = Profile.current()
    if profile is None:
        raise QualifyError(
            "no candidate profile: set one with `profile set --summary ...` or in the admin"
        )
    postings = pending_postings(posting_id=posting_id, limit=limit)
    return Batch(postings=postings, profile=profile, client=llm.ChatClient(config))


@dataclass
class BatchSummary:
    total: int = 0
    qualified: int = 0
    rejected: int = 0
    errors: int = 0
    skipped: int = 0
    with_memory: int = 0
    memory_unavailable: int = 0
    facts_not_written: int = 0
    last_error: str = ""
    stopped: str = ""


def run_batch(
    batch: Batch, *, agent_mode: bool = False, on_progress: Callable[[], None] | None = None
) -> BatchSummary:
    """Qualify every posting of the batch. Memory failures never stop it."""
    summary = BatchSummary(total=len(batch.postings))
    failures_in_a_row = 0
    pool = FewShotPool.load() if context.memory_enabled() and batch.postings else None
    for posting in batch.postings:
        done = None
        # Decided by another batch since the list was made (the constraint settles races).
        if not Qualification.objects.decided().filter(posting_id=posting.pk).exists():
            try:
                done = qualify_posting(
                    posting=posting,
                    profile=batch.profile,
                    client=batch.client,
                    agent_mode=agent_mode,
                    pool=pool,
                )
            except QualifyError as exc:
                log.warning("%s", exc)
        if on_progress:
            on_progress()
        if done is None:
            summary.skipped += 1
            continue
        q = done.qualification
        if q.error:
            summary.errors += 1
            summary.last_error = q.error
        elif q.verdict == "qualified":
            summary.qualified += 1
        else:
            summary.rejected += 1
        summary.with_memory += q.fact_count > 0
        summary.memory_unavailable += done.memory_error is not None
        summary.facts_not_written += done.fact_error is not None
        failures_in_a_row = failures_in_a_row + 1 if llm.endpoint_failed(q.error) else 0
        if failures_in_a_row >= MAX_ENDPOINT_FAILURES_IN_A_ROW:
            summary.stopped = (
                f"stopped after {failures_in_a_row} endpoint failures in a row ({q.error})"
            )
            break
    return summary
