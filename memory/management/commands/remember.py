from typing import Any

from django.core.management.base import CommandParser

from memory import services
from memory.management.base import KaraniCommand
from memory.models import Kind


class Command(KaraniCommand):
    help = "Teach karani a fact. An exact duplicate only touches the existing fact."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("text", help="the fact, in one or two plain sentences")
        parser.add_argument("--kind", default=Kind.NOTE, help=f"one of: {', '.join(Kind.values)}")
        parser.add_argument("--company", help="scope the fact to a company (default: global)")
        parser.add_argument("--ref", help="an external reference, e.g. qualification:123")
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        result = services.remember(
            text=opts["text"], kind=opts["kind"], company=opts["company"], ref=opts["ref"]
        )
        if opts["json"]:
            self.write_json(result.to_dict())
        elif result.created:
            self.stdout.write(f"remembered fact {result.id}")
        else:
            self.stdout.write(f"already known: fact {result.id}, seen {result.seen_count} times")
