"""Replay: ask the model again, under each prompt version, about postings whose outcome is
known, and score each version's verdicts against what really happened (docs/qualify.md).

Nothing live is written: answers are ``ReplayAnswer`` rows, committed one by one so an
interrupted run resumes. Memory and few-shot examples are as of the original decision, so a
posting's own outcome never leaks into its prompt.
"""

import copy
import threading
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from queue import SimpleQueue
from typing import Any

from django.db.models import Exists, OuterRef
from django.utils import timezone

from qualify import agent, context, llm, prompts, stats, verdict
from qualify.credentials import withheld_error
from qualify.errors import QualifyError
from qualify.few_shot import FewShotPool
from qualify.funnel import MIN_SAMPLE
from qualify.models import Outcome, Posting, Profile, Qualification, ReplayAnswer, ReplayRun
from qualify.preparation import prompt_for
from qualify.services import MAX_ENDPOINT_FAILURES_IN_A_ROW as MAX_FAILURES

# A posting "progressed" when it reached a screen or further; it is a known failure when it
# ended (rejected, withdrawn) without one. Only "applied" so far is not known yet.
PROGRESSED = ("screen", "interview", "offer")
ENDED = ("rejected", "withdrawn")
IN_FLIGHT = 2  # requests out at once: one being answered, the next queued at the endpoint


@dataclass(frozen=True)
class Case:
    posting: Posting
    progressed: bool
    decided_at: datetime  # the original verdict's time: the replay's "as of"


def known_cases(
    *, posting_ids: list[int] | None = None, since: datetime | None = None, limit: int | None = None
) -> list[Case]:
    """Postings with a live verdict and a known outcome, oldest verdict first."""
    outcome = Outcome.objects.filter(posting_id=OuterRef("posting_id"))
    decided = Qualification.objects.decided().filter(
        Exists(outcome.filter(stage__in=PROGRESSED + ENDED)), posting__deleted_at__isnull=True
    )
    if posting_ids is not None:
        decided = decided.filter(posting_id__in=posting_ids)
    if since is not None:
        decided = decided.filter(created_at__gte=since)
    decided = decided.annotate(progressed=Exists(outcome.filter(stage__in=PROGRESSED)))
    rows = decided.select_related("posting__company").order_by("created_at", "id")
    return [Case(q.posting, q.progressed, q.created_at) for q in (rows[:limit] if limit else rows)]


def start_or_resume(
    *, since: datetime | None, limit: int | None, agent_mode: bool, new: bool = False
) -> tuple[ReplayRun, bool]:
    """The newest unfinished run with the same options (resumed), else a new one."""
    if limit is not None and limit < 1:
        raise QualifyError("--limit must be at least 1")
    if since is not None and since > timezone.now():
        raise QualifyError("--since is in the future")
    versions = [prompts.MEMORY_AWARE, prompts.PRE_MEMORY] + [prompts.MEMORY_AGENT] * agent_mode
    if not new:
        unfinished = (
            ReplayRun.objects.filter(finished_at__isnull=True, since=since, limit=limit)
            .order_by("-id")
            .first()
        )
        if unfinished is not None and unfinished.versions == versions:
            return unfinished, True
    cases = known_cases(since=since, limit=limit)
    if not cases:
        raise QualifyError(
            "no postings with a known outcome (a screen or further, or rejected/withdrawn) "
            "to replay"
        )
    run = ReplayRun.objects.create(
        since=since, limit=limit, versions=versions, posting_ids=[c.posting.pk for c in cases]
    )
    return run, False


def pending_work(run: ReplayRun) -> tuple[list[Case], set[tuple[int, str]], int]:
    """The run's cases, the (posting, version) pairs already answered, and the total pairs."""
    by_id = {c.posting.pk: c for c in known_cases(posting_ids=run.posting_ids)}
    cases = [by_id[pk] for pk in run.posting_ids if pk in by_id]
    done = set(run.answers.values_list("posting_id", "prompt_version"))
    return cases, done, len(cases) * len(run.versions)


def _ask(
    client: llm.ChatClient, version: prompts.PromptVersion, case: Case, messages: list
) -> tuple[dict | None, str, list, list[str], float]:
    """criteria (or None), error, facts shown, memory errors, ms waited: as qualify asks."""
    client.elapsed_ms = 0.0
    a = agent.ask(client, messages, case.posting, tools=version.agent, before=case.decided_at)
    return a.criteria, a.error, a.facts, a.memory_errors, client.elapsed_ms


def _asker(client: llm.ChatClient, jobs: SimpleQueue) -> None:
    """Asks job after job in a daemon thread (an interrupted replay never waits for it); each
    thread counts its own waiting time, on the one connection pool."""
    client = copy.copy(client)
    for box, *job in iter(jobs.get, None):
        try:
            box.put(_ask(client, *job))
        except BaseException as exc:  # raised again by the thread that takes the answer
            box.put(exc)


@dataclass
class RunSummary:
    memory_unavailable: int = 0
    stopped: str = ""


def run(
    replay: ReplayRun,
    *,
    client: llm.ChatClient,
    on_answer: Callable[[ReplayAnswer], None] | None = None,
) -> RunSummary:
    """Answer every pending (posting, version) pair, in order, with up to IN_FLIGHT requests
    out at once; prompts are prepared and answers written while the model answers."""
    profile = Profile.current()
    if profile is None:
        raise QualifyError("no candidate profile: set one with `profile set --summary ...`")
    cases, done, _total = pending_work(replay)
    summary = RunSummary()
    pool = FewShotPool.load() if context.memory_enabled() else None
    jobs, in_flight = SimpleQueue(), deque()
    failures_in_a_row, room = 0, 1  # ahead once an answer shows the endpoint is quick

    def take() -> None:
        """Waits for the oldest answer in flight and writes it."""
        nonlocal failures_in_a_row, room
        case, version, prepared, box = in_flight.popleft()
        asked = box.get()
        if isinstance(asked, BaseException):
            raise asked
        criteria, error, tool_facts, tool_errors, waited_ms = asked
        shown = withheld_error(error)
        decision = verdict.decide(criteria) if criteria is not None else None
        memory_error = prepared.memory_error or (tool_errors[0] if tool_errors else "")
        answer = ReplayAnswer.objects.create(
            run=replay,
            posting=case.posting,
            prompt_version=version.name,
            verdict=decision.verdict if decision else None,
            fit_score=decision.fit_score if decision else None,
            criteria=criteria or {},
            progressed=case.progressed,
            fact_ids=[f.id for f in (prepared.facts or tool_facts)],
            memory_error=withheld_error(memory_error)[:300],
            error=shown[:500],
            latency_ms=round(waited_ms),
        )
        summary.memory_unavailable += bool(memory_error)
        failures_in_a_row = failures_in_a_row + 1 if llm.endpoint_failed(error) else 0
        # Never a request that could follow the failure that stops the run, and one at a time
        # when answers are slow: a request queued at the endpoint waits against its timeout.
        quick = waited_ms <= client.config.timeout * 500
        room = min(IN_FLIGHT if quick else 1, MAX_FAILURES - failures_in_a_row)
        if failures_in_a_row >= MAX_FAILURES:
            summary.stopped = (
                f"stopped after {failures_in_a_row} endpoint failures in a row ({shown}); "
                "run `replay` again to resume"
            )
        if on_answer:
            on_answer(answer)

    versions = [prompts.VERSIONS[n] for n in replay.versions]
    pairs = [(c, v) for c in cases for v in versions if (c.posting.pk, v.name) not in done]
    for _ in range(IN_FLIGHT):
        threading.Thread(target=_asker, args=(client, jobs), daemon=True).start()
    try:
        for case, version in pairs:
            prepared = prompt_for(
                version, posting=case.posting, profile=profile, pool=pool, before=case.decided_at
            )
            # Agent mode asks on this thread, where its recall tool reads the database.
            while in_flight and (version.agent or len(in_flight) >= room):
                take()
            if summary.stopped:
                break
            in_flight.append((case, version, prepared, box := SimpleQueue()))
            if version.agent:
                box.put(_ask(client, version, case, prepared.messages))
                take()
            else:
                jobs.put((box, version, case, prepared.messages))
        while in_flight:
            take()
    finally:
        for _ in range(IN_FLIGHT):
            jobs.put(None)
    replay.finished_at = None if summary.stopped else timezone.now()
    replay.stopped = summary.stopped[:500]
    replay.save(update_fields=["finished_at", "stopped"])
    return summary


# --- the report ----------------------------------------------------------------------------


def _rate(successes: int, n: int) -> dict[str, Any]:
    interval = stats.wilson(successes, n)
    return {"n": n, **(interval.to_dict() if interval else {"estimate": None})}


def report(replay: ReplayRun) -> dict[str, Any]:
    """Per version: precision and recall with Wilson 95% intervals; postings where the
    versions disagree."""
    answers = list(
        replay.answers.select_related("posting__company").order_by("posting_id", "prompt_version")
    )
    versions: dict[str, dict[str, Any]] = {}
    by_posting: dict[int, dict[str, ReplayAnswer]] = {}
    for name in replay.versions:
        mine = [a for a in answers if a.prompt_version == name]
        decided = [a for a in mine if a.verdict is not None]
        seen = Counter((a.verdict, a.progressed) for a in decided)
        tp, fp = seen["qualified", True], seen["qualified", False]
        fn, tn = seen["rejected", True], seen["rejected", False]
        versions[name] = {
            "answered": len(mine),
            "errors": len(mine) - len(decided),
            "memory_unavailable": sum(1 for a in mine if a.memory_error),
            "confusion": {"tp": tp, "fp": fp, "fn": fn, "tn": tn},
            "precision": _rate(tp, tp + fp),
            "recall": _rate(tp, tp + fn),
            "enough_data": min(tp + fp, tp + fn) >= MIN_SAMPLE,
        }
    for a in answers:
        if a.verdict is not None:
            by_posting.setdefault(a.posting_id, {})[a.prompt_version] = a
    disagreements = []
    for mine in by_posting.values():
        if len({a.verdict for a in mine.values()}) > 1:
            one = next(iter(mine.values()))
            disagreements.append(
                {
                    "posting": one.posting_id,
                    "title": one.posting.title,
                    "company": one.posting.company.name,
                    "progressed": one.progressed,
                    "verdicts": {name: a.verdict for name, a in sorted(mine.items())},
                }
            )
    return {
        "run": replay.pk,
        "finished": replay.finished_at is not None,
        "stopped": replay.stopped,
        "postings": len(replay.posting_ids),
        "min_sample": MIN_SAMPLE,
        "versions": versions,
        "disagreements": disagreements,
    }
