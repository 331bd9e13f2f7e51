import json
from typing import Any

from django.core.management.base import CommandParser

from memory import selectors
from memory.management.base import KaraniCommand
from memory.models import Kind, Source


class Command(KaraniCommand):
    help = "List facts, newest first; `--kind preference --global` lists every standing preference."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--kind", choices=Kind.values, help="only facts of this kind")
        parser.add_argument("--source", choices=Source.values, help="only facts written this way")
        scope = parser.add_mutually_exclusive_group()
        scope.add_argument("--company", help="only this company's facts")
        scope.add_argument(
            "--global", dest="unscoped", action="store_true", help="only facts of no company"
        )
        parser.add_argument(
            "--status", choices=selectors.LIST_STATUSES, default="live", help="default: live"
        )
        parser.add_argument("--json", action="store_true", help="print JSON lines")

    def handle(self, *args: Any, **opts: Any) -> None:
        rows = selectors.list_facts(
            kind=opts["kind"],
            company=opts["company"],
            source=opts["source"],
            status=opts["status"],
            unscoped=opts["unscoped"],
        )
        if opts["json"]:
            for m in rows.iterator():
                record = {"id": m.pk, "kind": m.kind, "company": m.company, "text": m.text}
                self.stdout.write(json.dumps(record, ensure_ascii=False))
            return
        facts = list(rows)
        if not facts:
            self.stdout.write("no facts match")
            return
        for m in facts:
            self.stdout.write(f"{m.pk}\t{m.kind}\t{m.company or '-'}\t{m.text}")
        self.stderr.write(f"{len(facts)} facts")
