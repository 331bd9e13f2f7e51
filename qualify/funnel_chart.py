"""The funnel drawn: step counts per prompt version, and the holdout comparison's rates
with their 95% intervals."""

import io
from typing import TYPE_CHECKING

from qualify.funnel import NOT_ENOUGH, STEPS, Funnel, over

if TYPE_CHECKING:
    from matplotlib.axes import Axes


def render(result: Funnel, *, fmt: str) -> bytes:
    # No pyplot: no global state or GUI backend, so it is safe in a web request.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 7.6), dpi=100)
    FigureCanvasAgg(fig)
    top, bottom = fig.subplots(2, 1, height_ratios=[1.1, 1])
    _versions(top, result)
    _arms(bottom, result)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt)
    return buffer.getvalue()


def _versions(ax: "Axes", result: Funnel) -> None:
    """Grouped bars: one group per step, one bar per prompt version, rates on top."""
    rows = result.versions
    width = 0.8 / max(1, len(rows))
    for i, row in enumerate(rows):
        xs = [s + (i - (len(rows) - 1) / 2) * width for s in range(len(STEPS))]
        label = f"{row.prompt_version} ({row.with_memory_facts}/{row.decisions} with memory)"
        bars = ax.bar(xs, [n for n, _ in row.cells], width=width, label=label)
        labels = [str(n) if r is None else f"{n}\n{r:.0%}" for n, r in row.cells]
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


def _arms(ax: "Axes", result: Funnel) -> None:
    """Each step's rate per arm as a point with its Wilson 95% interval."""
    arms = result.arms
    ax.set_xticks(range(len(STEPS)), [f"{s}\n(over {over(s)})" for s in STEPS], fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("rate, 95% interval")
    status = arms.status
    title = "Memory arm vs holdout arm (randomised, same period)"
    if status == "off":
        ax.set_title(title)
        note = "no holdout arm: KARANI_MEMORY_HOLDOUT is 0"
        ax.text(0.5, 0.5, note, ha="center", transform=ax.transAxes)
        return
    ax.set_title(title + (f": {NOT_ENOUGH}" if status != "ok" else ""))
    for offset, name, color in ((-0.12, "memory", "tab:blue"), (0.12, "holdout", "tab:orange")):
        rates = [(i + offset, r) for i, s in enumerate(arms.steps) if (r := getattr(s, name))]
        xs, ys = [x for x, _ in rates], [r.estimate for _, r in rates]
        yerr = [[r.estimate - r.low for _, r in rates], [r.high - r.estimate for _, r in rates]]
        label = f"{name} arm ({getattr(arms, name).decisions} decisions)"
        ax.errorbar(xs, ys, yerr=yerr, fmt="o", capsize=3, color=color, label=label)
    ax.legend(fontsize=8)
