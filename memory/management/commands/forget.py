from typing import Any

from django.core.management.base import CommandParser

from memory import services
from memory.management.base import KaraniCommand


class Command(KaraniCommand):
    help = "Soft-delete a fact. It stays in the ledger as history, with the reason."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("id", type=int, help="the id of the fact to forget")
        parser.add_argument("--reason", required=True, help="why this fact should go")
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        memory = services.forget(id=opts["id"], reason=opts["reason"], actor="cli")
        self.emit(opts, {"id": memory.pk, "deleted": True}, f"forgot fact {memory.pk}")
