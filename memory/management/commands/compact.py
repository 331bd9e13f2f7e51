import json
from typing import Any

from django.core.management.base import CommandParser

from memory import services
from memory.management.base import KaraniCommand


class Command(KaraniCommand):
    help = (
        "Store the keyword index term by term (PostgreSQL CLUSTER): faster recall after a bulk"
        " import. Locks the index while it runs."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print the result as JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        result = services.compact_index()
        if opts["json"]:
            self.stdout.write(json.dumps(result))
        elif result["clustered"]:
            self.stdout.write(
                f"keyword index compacted: {result['rows']:,} rows,"
                f" {result['bytes'] / 2**20:.1f} MiB, in {result['seconds']:.1f}s"
            )
        else:
            self.stdout.write(
                f"keyword index: {result['rows']:,} rows; nothing to do on SQLite (rows stay"
                " in id order)"
            )
