from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser
from rich.console import Console
from rich.table import Table

from qualify import funnel
from qualify.management.base import QualifyCommand


class Command(QualifyCommand):
    help = (
        "Per prompt version: qualified -> applied -> screen -> interview -> offer, with step "
        "conversion rates and how many decisions had memory facts."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print JSON")
        parser.add_argument("--chart", type=Path, metavar="FILE", help="write a .png or .svg chart")

    def handle(self, *args: Any, **opts: Any) -> None:
        chart: Path | None = opts["chart"]
        if chart is not None and chart.suffix.lower() not in funnel.CHART_FORMATS:
            raise CommandError(f"--chart must end in .png or .svg, not {chart.name!r}")
        rows = funnel.compute()
        if chart is not None:
            try:
                funnel.write_chart(rows, chart)
            except OSError as exc:
                raise CommandError(f"cannot write {chart}: {exc.strerror}") from None
        if opts["json"]:
            self.write_json(funnel.to_dict(rows))
            return
        table = Table(title="funnel by prompt version", title_justify="left")
        for column in ("prompt version", "decisions", "with memory", "errors", *funnel.STEPS):
            table.add_column(column, overflow="fold")
        for r in rows:
            rates = r.rates
            cells = [str(r.counts["qualified"])] + [
                f"{r.counts[s]} ({rates[s]:.0%})" if rates[s] is not None else str(r.counts[s])
                for s in funnel.STEPS[1:]
            ]
            table.add_row(
                r.prompt_version, str(r.decisions), str(r.with_memory_facts), str(r.errors), *cells
            )
        Console(file=self.stdout, width=140, color_system=None).print(table)
        if not rows:
            self.stdout.write("no qualifications yet")
        if chart is not None:
            self.stdout.write(f"chart written to {chart}")
