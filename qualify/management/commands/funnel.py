from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser
from rich.console import Console
from rich.table import Table

from qualify import funnel, funnel_chart
from qualify.management.base import QualifyCommand


class Command(QualifyCommand):
    help = (
        "Per prompt version: qualified -> applied -> screen -> interview -> offer, with step "
        "conversion rates; then the memory arm against the holdout arm, with 95% intervals."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print JSON")
        parser.add_argument("--chart", type=Path, metavar="FILE", help="write a .png or .svg chart")

    def handle(self, *args: Any, **opts: Any) -> None:
        chart: Path | None = opts["chart"]
        fmt = chart.suffix.lower().lstrip(".") if chart else None
        if fmt not in (None, "png", "svg"):
            raise CommandError(f"--chart must end in .png or .svg, not {chart.name!r}")
        result = funnel.compute()
        if chart is not None:
            try:
                chart.write_bytes(funnel_chart.render(result, fmt=fmt))
            except OSError as exc:
                raise CommandError(f"cannot write {chart}: {exc.strerror}") from None
        if opts["json"]:
            self.write_json(funnel.to_dict(result))
            return
        console = Console(file=self.stdout, width=140, color_system=None)
        console.print(_versions_table(result))
        if not result.versions:
            self.stdout.write("no qualifications yet")
        for key, what in funnel.NOT_COUNTED.items():
            self.stdout.write(f"not counted: {result.not_counted[key]} {what}")
        arms = result.arms
        if arms.status == "off":
            self.stdout.write("holdout comparison: off (no randomised decisions yet)")
        else:
            console.print(_arms_table(arms))
            if arms.status != "ok":
                self.stdout.write(
                    f"{funnel.NOT_ENOUGH}: no conclusion below {funnel.MIN_SAMPLE} "
                    "per arm in a step's denominator"
                )
        if chart is not None:
            self.stdout.write(f"chart written to {chart}")


def _versions_table(result: funnel.Funnel) -> Table:
    table = Table(title="funnel by prompt version", title_justify="left")
    for column in ("prompt version", "decisions", "with memory", "errors", *funnel.STEPS):
        table.add_column(column, overflow="fold")
    for r in result.versions:
        cells = [str(n) if rate is None else f"{n} ({rate:.0%})" for n, rate in r.cells]
        table.add_row(
            r.prompt_version, str(r.decisions), str(r.with_memory_facts), str(r.errors), *cells
        )
    return table


def _rate(interval: Any, n: int) -> str:
    if interval is None:
        return f"- (n={n})"
    return f"{interval.estimate:.0%} [{interval.low:.0%}, {interval.high:.0%}] n={n}"


def _arms_table(arms: funnel.ArmComparison) -> Table:
    period = f"{arms.first:%Y-%m-%d} to {arms.last:%Y-%m-%d}" if arms.first and arms.last else ""
    table = Table(
        title=f"memory arm vs holdout arm, 95% intervals ({period})", title_justify="left"
    )
    for column in ("step", "memory arm", "holdout arm", "difference", "conclusion"):
        table.add_column(column, overflow="fold")
    for s in arms.steps:
        d = s.difference
        diff = "-" if d is None else f"{d.estimate:+.0%} [{d.low:+.0%}, {d.high:+.0%}]"
        memory, held = _rate(s.memory, s.memory_n), _rate(s.holdout, s.holdout_n)
        table.add_row(s.step, memory, held, diff, s.conclusion)
    return table
