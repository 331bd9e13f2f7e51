from typing import Any

from django.core.management.base import CommandParser

from memory import selectors, validation
from memory import text as textmod
from memory.management.base import KaraniCommand


class Command(KaraniCommand):
    help = "Recall the facts most relevant to a query, best first."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("query", help="a few words naming what you need to know")
        parser.add_argument("--company", help="only this company's facts plus global ones")
        parser.add_argument(
            "--limit", type=int, default=validation.DEFAULT_LIMIT, help="1-100 (default 5)"
        )
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        result = selectors.recall(query=opts["query"], company=opts["company"], limit=opts["limit"])
        if opts["json"]:
            self.write_json(result.to_dict())
            return
        if not result.results and not textmod.tokens(opts["query"]):
            self.stdout.write(
                f"no matching facts: every word of {opts['query']!r} is a stopword, which recall "
                "ignores; ask with the words that carry the meaning"
            )
            return
        # rich takes a tenth of a second to import: only when there is a table to draw.
        from rich.console import Console
        from rich.table import Table

        note = " (fallback: semantic index unavailable)" if result.fallback else ""
        table = Table(title=f"recall · mode {result.mode}{note}", title_justify="left")
        for column in ("id", "score", "kind", "company", "text", "last seen"):
            table.add_column(column, overflow="fold")
        for fact in result.results:
            table.add_row(
                str(fact.id),
                f"{fact.score:.3g}",
                fact.kind,
                fact.company or "-",
                fact.text,
                f"{fact.last_seen_at:%Y-%m-%d}",
            )
        Console(file=self.stdout, width=120, color_system=None).print(table)
        if not result.results:
            self.stdout.write("no matching facts")
