import sys
from typing import Any

from django.core.management.base import CommandError, CommandParser

from memory import services
from memory.management.base import KaraniCommand
from memory.models import Kind

STDIN_TTY = (
    "remember -: reads the fact from standard input; pipe it in: echo 'fact' | karani remember -"
)


class Command(KaraniCommand):
    help = (
        "Teach karani a fact (- reads it from standard input). "
        "An exact duplicate only touches the existing fact."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("text", help="the fact, in one or two plain sentences; - for stdin")
        parser.add_argument("--kind", default=Kind.NOTE, help=f"one of: {', '.join(Kind.values)}")
        parser.add_argument("--company", help="scope the fact to a company (default: global)")
        parser.add_argument("--ref", help="an external reference, e.g. qualification:123")
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        text = opts["text"]
        if text == "-":
            if sys.stdin is None or sys.stdin.isatty():
                raise CommandError(STDIN_TTY)
            text = sys.stdin.read()
        result = services.remember(
            text=text, kind=opts["kind"], company=opts["company"], ref=opts["ref"], actor="cli"
        )
        message = (
            f"remembered fact {result.id}"
            if result.created
            else f"already known: fact {result.id}, seen {result.seen_count} times"
        )
        self.emit(opts, result.to_dict(), message)
