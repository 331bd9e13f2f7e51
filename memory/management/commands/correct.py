from typing import Any

from django.core.management.base import CommandParser

from memory import services
from memory.management.base import KaraniCommand


class Command(KaraniCommand):
    help = "Correct a fact: the old row is soft-deleted and a new row supersedes it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("id", type=int, help="the id of the fact to correct")
        parser.add_argument("text", help="the corrected fact")
        parser.add_argument("--reason", required=True, help="why the old text was wrong")
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        new = services.correct(id=opts["id"], text=opts["text"], reason=opts["reason"], actor="cli")
        if new.pk == opts["id"]:
            text = f"fact {new.pk} already says that; nothing changed"
            self.emit(opts, {"id": new.pk, "supersedes": None, "changed": False}, text)
            return
        text = f"corrected fact {opts['id']}: fact {new.pk} supersedes it"
        self.emit(opts, {"id": new.pk, "supersedes": opts["id"], "changed": True}, text)
