"""The funnel per prompt version, and the memory arm against the holdout arm (docs/qualify.md).

A posting reached a stage when it has a live outcome at that stage or a later one.
"""

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Count, Max, Min, Q

from qualify import stats
from qualify.conf import settings
from qualify.models import PROGRESS, Arm, Outcome, Qualification, Verdict

STEPS = ("qualified", *PROGRESS)
# Per arm, in the step's denominator: below this a rate's interval is too wide to act on.
MIN_SAMPLE = 30
NOT_ENOUGH = "not enough data yet"
# What the funnel leaves out, and why: said wherever the funnel is shown (CLI, API, admin).
NOT_COUNTED = {
    "on_rejected_decisions": "outcome(s) recorded on a rejected decision: the funnel follows "
    "the postings the pipeline qualified, and a rejected posting applied to anyway says "
    "nothing about how well it chose",
    "on_replaced_decisions": "outcome(s) recorded on a verdict later replaced (re-judged under "
    "a new prompt version): they belong to the version that was live when they happened, "
    "and the funnel counts live verdicts only",
}


def over(step: str) -> str:
    """What a step's rate is over: decisions for "qualified", else the step before."""
    return "decisions" if step == "qualified" else STEPS[STEPS.index(step) - 1]


@dataclass
class Tally:
    decisions: int = 0  # verdicts (qualified + rejected)
    with_memory_facts: int = 0  # verdicts whose prompt carried at least one memory fact
    errors: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STEPS, 0))

    def add(self, other: "Tally") -> None:
        self.decisions += other.decisions
        self.with_memory_facts += other.with_memory_facts
        self.errors += other.errors
        self.counts = {step: n + other.counts[step] for step, n in self.counts.items()}

    def base(self, step: str) -> int:
        return self.decisions if step == "qualified" else self.counts[over(step)]


@dataclass
class VersionFunnel(Tally):
    prompt_version: str = ""

    @property
    def rates(self) -> dict[str, float | None]:
        """Step conversion: each stage over the one before it (None when that one is 0)."""
        bases = {step: self.base(step) for step in PROGRESS}
        return {s: round(self.counts[s] / n, 4) if n else None for s, n in bases.items()}

    @property
    def cells(self) -> list[tuple[int, float | None]]:
        """Each step's count with its conversion rate (None for the first step)."""
        rates = self.rates
        return [(self.counts[step], rates.get(step)) for step in STEPS]

    def to_dict(self) -> dict[str, Any]:
        return {"prompt_version": self.prompt_version, **asdict(self), "rates": self.rates}


@dataclass(frozen=True)
class StepComparison:
    step: str
    memory: stats.Interval | None  # the step's rate in each arm, with its Wilson interval
    holdout: stats.Interval | None
    memory_n: int
    holdout_n: int
    difference: stats.Interval | None  # memory minus holdout, Newcombe's interval
    conclusion: str

    def to_dict(self) -> dict[str, Any]:
        def rate(interval: stats.Interval | None, n: int) -> dict[str, Any]:
            return {"n": n, **(interval.to_dict() if interval else {"estimate": None})}

        return {
            "step": self.step,
            "over": over(self.step),
            "memory": rate(self.memory, self.memory_n),
            "holdout": rate(self.holdout, self.holdout_n),
            "difference": self.difference.to_dict() if self.difference else None,
            "conclusion": self.conclusion,
        }


def compare_step(step: str, memory: Tally, held: Tally) -> StepComparison:
    m_n, h_n = memory.base(step), held.base(step)
    m_rate = stats.wilson(memory.counts[step], m_n)
    h_rate = stats.wilson(held.counts[step], h_n)
    diff = stats.newcombe(memory.counts[step], m_n, held.counts[step], h_n)
    if min(m_n, h_n) < MIN_SAMPLE or diff is None:
        conclusion = f"{NOT_ENOUGH} (need {MIN_SAMPLE} per arm; have {m_n} and {h_n})"
    elif diff.low > 0:
        conclusion = "higher with memory"
    elif diff.high < 0:
        conclusion = "lower with memory"
    else:
        conclusion = "no clear difference"
    return StepComparison(step, m_rate, h_rate, m_n, h_n, diff, conclusion)


@dataclass
class ArmComparison:
    memory: Tally
    holdout: Tally
    first: datetime | None  # the randomised decisions' period
    last: datetime | None

    @property
    def steps(self) -> list[StepComparison]:
        return [compare_step(step, self.memory, self.holdout) for step in STEPS]

    @property
    def status(self) -> str:
        if not (self.memory.decisions or self.holdout.decisions):
            return "off"  # no randomised decisions at all
        if min(self.memory.decisions, self.holdout.decisions) < MIN_SAMPLE:
            return NOT_ENOUGH
        return "ok"

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "holdout_fraction": settings.KARANI_MEMORY_HOLDOUT,
            "min_sample_per_arm": MIN_SAMPLE,
            "period": {
                "from": self.first.isoformat() if self.first else None,
                "to": self.last.isoformat() if self.last else None,
            },
            "memory": {"decisions": self.memory.decisions, "counts": dict(self.memory.counts)},
            "holdout": {"decisions": self.holdout.decisions, "counts": dict(self.holdout.counts)},
            "steps": [s.to_dict() for s in self.steps],
        }


@dataclass
class Funnel:
    versions: list[VersionFunnel]
    arms: ArmComparison
    # Live outcomes no step counts, per reason in NOT_COUNTED.
    not_counted: dict[str, int] = field(default_factory=lambda: dict.fromkeys(NOT_COUNTED, 0))


def compute() -> Funnel:
    """Decisions per (version, arm), the steps reached per the same, and the arms' period."""
    cells: dict[tuple[str, str], Tally] = {}
    for r in (
        Qualification.objects.values("prompt_version", "arm")
        .annotate(
            decisions=Count("id", filter=Q(verdict__isnull=False)),
            qualified=Count("id", filter=Q(verdict=Verdict.QUALIFIED)),
            with_memory=Count("id", filter=Q(verdict__isnull=False, fact_count__gt=0)),
            errors=Count("id", filter=Q(verdict__isnull=True)),
        )
        .order_by()
    ):
        tally = Tally(
            decisions=r["decisions"], with_memory_facts=r["with_memory"], errors=r["errors"]
        )
        tally.counts["qualified"] = r["qualified"]
        cells[(r["prompt_version"], r["arm"])] = tally
    reached = {
        step: Count("qualification", distinct=True, filter=Q(stage__in=PROGRESS[i:]))
        for i, step in enumerate(PROGRESS)
    }
    for r in (
        Outcome.objects.filter(
            qualification__verdict=Verdict.QUALIFIED, qualification__deleted_at__isnull=True
        )
        .values("qualification__prompt_version", "qualification__arm")
        .annotate(**reached)
        .order_by()
    ):
        tally = cells[(r["qualification__prompt_version"], r["qualification__arm"])]
        for step in PROGRESS:
            tally.counts[step] = r[step]

    versions: dict[str, VersionFunnel] = {}
    arms = {Arm.MEMORY: Tally(), Arm.HOLDOUT: Tally()}
    for (version, arm), tally in sorted(cells.items()):
        versions.setdefault(version, VersionFunnel(prompt_version=version)).add(tally)
        if arm in arms:
            arms[arm].add(tally)
    period = (
        Qualification.objects.decided()
        .exclude(arm=Arm.NONE)
        .aggregate(first=Min("created_at"), last=Max("created_at"))
    )
    left_out = Outcome.objects.aggregate(
        on_rejected_decisions=Count(
            "id",
            filter=Q(
                qualification__verdict=Verdict.REJECTED, qualification__deleted_at__isnull=True
            ),
        ),
        on_replaced_decisions=Count("id", filter=Q(qualification__deleted_at__isnull=False)),
    )
    return Funnel(
        versions=list(versions.values()),
        arms=ArmComparison(arms[Arm.MEMORY], arms[Arm.HOLDOUT], **period),
        not_counted=left_out,
    )


def to_dict(result: Funnel) -> dict[str, Any]:
    return {
        "steps": list(STEPS),
        "versions": [r.to_dict() for r in result.versions],
        "arms": result.arms.to_dict(),
        "not_counted": [
            {"outcomes": result.not_counted[key], "what": what} for key, what in NOT_COUNTED.items()
        ],
    }
