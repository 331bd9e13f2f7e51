"""The funnel: per prompt version, how qualified postings convert, and how many decisions
had memory facts.

A qualified posting "reached" a stage when it has a live outcome at that stage or a later
one (applied < screen < interview < offer), so an interview recorded without its screen
still counts as a screen. ``rejected`` and ``withdrawn`` end a posting's progress; they are
not steps. Outcomes count for the verdict that was live when they were recorded.
"""

import io
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db.models import Count, Q

from qualify.models import Outcome, Qualification, Verdict

STEPS = ("qualified", "applied", "screen", "interview", "offer")
PROGRESS = STEPS[1:]


@dataclass
class VersionFunnel:
    prompt_version: str
    decisions: int  # verdicts (qualified + rejected)
    with_memory_facts: int  # verdicts whose prompt carried at least one memory fact
    errors: int
    counts: dict[str, int]

    @property
    def rates(self) -> dict[str, float | None]:
        """Step conversion: each stage over the one before it (None when that one is 0)."""
        out: dict[str, float | None] = {}
        for before, step in itertools.pairwise(STEPS):
            base = self.counts[before]
            out[step] = round(self.counts[step] / base, 4) if base else None
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "prompt_version": self.prompt_version,
            "decisions": self.decisions,
            "with_memory_facts": self.with_memory_facts,
            "errors": self.errors,
            "counts": dict(self.counts),
            "rates": self.rates,
        }


def compute() -> list[VersionFunnel]:
    """One row per prompt version that has recorded anything, by version name."""
    rows: dict[str, VersionFunnel] = {}
    for r in (
        Qualification.objects.values("prompt_version")
        .annotate(
            decisions=Count("id", filter=Q(verdict__isnull=False)),
            qualified=Count("id", filter=Q(verdict=Verdict.QUALIFIED)),
            with_memory=Count("id", filter=Q(verdict__isnull=False, fact_count__gt=0)),
            errors=Count("id", filter=Q(verdict__isnull=True)),
        )
        .order_by("prompt_version")
    ):
        counts = dict.fromkeys(STEPS, 0)
        counts["qualified"] = r["qualified"]
        rows[r["prompt_version"]] = VersionFunnel(
            prompt_version=r["prompt_version"],
            decisions=r["decisions"],
            with_memory_facts=r["with_memory"],
            errors=r["errors"],
            counts=counts,
        )
    live_qualified = Outcome.objects.filter(
        qualification__verdict=Verdict.QUALIFIED, qualification__deleted_at__isnull=True
    )
    for i, step in enumerate(PROGRESS):
        reached = (
            live_qualified.filter(stage__in=PROGRESS[i:])
            .values("qualification__prompt_version")
            .annotate(n=Count("qualification", distinct=True))
            .order_by()
        )
        for r in reached:
            rows[r["qualification__prompt_version"]].counts[step] = r["n"]
    return list(rows.values())


def to_dict(rows: list[VersionFunnel]) -> dict[str, Any]:
    return {"steps": list(STEPS), "versions": [r.to_dict() for r in rows]}


CHART_FORMATS = {".png": "png", ".svg": "svg"}


def render_chart(rows: list[VersionFunnel], *, fmt: str) -> bytes:
    """Grouped bars: one group per step, one bar per prompt version, rates on top."""
    # The Figure API on an explicit Agg canvas, no pyplot: no global state, no GUI backend,
    # safe in a web request and in a headless command.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 4.2), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    width = 0.8 / max(1, len(rows))
    for i, row in enumerate(rows):
        xs = [s + (i - (len(rows) - 1) / 2) * width for s in range(len(STEPS))]
        values = [row.counts[s] for s in STEPS]
        label = f"{row.prompt_version} ({row.with_memory_facts}/{row.decisions} with memory)"
        bars = ax.bar(xs, values, width=width, label=label)
        rates = [None, *row.rates.values()]
        labels = [
            str(v) if r is None else f"{v}\n{r:.0%}" for v, r in zip(values, rates, strict=True)
        ]
        ax.bar_label(bars, labels=labels, fontsize=7, padding=2)
    ax.set_xticks(range(len(STEPS)), list(STEPS))
    ax.set_ylabel("postings")
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_title("Qualify funnel by prompt version (step conversion in %)")
    ax.margins(y=0.25)
    if rows:
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no qualifications yet", ha="center", transform=ax.transAxes)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt)
    return buffer.getvalue()


def write_chart(rows: list[VersionFunnel], path: Path) -> None:
    fmt = CHART_FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(f"chart file must end in .png or .svg, not {path.name!r}")
    path.write_bytes(render_chart(rows, fmt=fmt))
