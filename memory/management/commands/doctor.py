from typing import Any

from django.core.management.base import CommandError, CommandParser
from rich.console import Console
from rich.table import Table

from memory import credentials
from memory.errors import first_line
from memory.management.base import KaraniCommand


class Command(KaraniCommand):
    help = "Show each memory layer's health on one screen; exits 1 when the mode is degraded."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        # The health checks import the LLM client (seconds): `karani help` loads every command.
        from memory.semantic import health

        report = health.diagnose()
        try:
            report.add("secrets screen", True, credentials.describe())
        except Exception as exc:  # the screen cannot load: every write would fail
            report.add("secrets screen", False, first_line(exc))
        if opts["json"]:
            self.write_json({**report.to_dict(), "settings": health.settings_summary()})
        else:
            state = "DEGRADED" if report.degraded else "ok"
            title = f"karani doctor · mode {report.mode} · {state}"
            table = Table(title=title, title_justify="left")
            for column in ("layer", "status", "detail"):
                table.add_column(column, overflow="fold")
            for check in report.checks:
                table.add_row(check.name, "ok" if check.ok else "FAIL", check.detail)
            Console(file=self.stdout, width=120, color_system=None).print(table)
        if report.degraded:
            failing = ", ".join(c.name for c in report.checks if not c.ok)
            raise CommandError(f"mode {report.mode} is degraded: {failing}")
