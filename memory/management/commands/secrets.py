from typing import Any

from django.core.management.base import CommandError, CommandParser

from memory import selectors, services
from memory.management.base import KaraniCommand


class Command(KaraniCommand):
    help = (
        "List every stored text the secrets screen flags (table, id, field, kind; never the "
        "value); exits 1 when there are any. --redact replaces each credential in place."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--redact",
            action="store_true",
            help="replace each flagged span with [redacted: <kind>], audit it, leave no copy",
        )
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        found = [f.to_dict() for f in selectors.stored_credentials()]
        if opts["redact"] and found:
            record = services.redact(actor="cli")
            left = [f.to_dict() for f in selectors.stored_credentials()]
            payload = {"redacted": found, "audit_id": record.pk if record else None, "left": left}
            lines = [self._line(f, "redacted") for f in found]
            lines.append(f"redacted {len(found)} stored texts (audit record {payload['audit_id']})")
            self.emit(opts, payload, "\n".join(lines))
            if left:
                raise CommandError(f"{len(left)} stored texts are still flagged after redaction")
            return
        if opts["json"]:
            self.write_json({"flagged": found})
        elif found:
            self.stdout.write("\n".join(self._line(f, "flagged") for f in found))
        else:
            self.stdout.write("no stored text holds a credential")
        if found:
            # Exit 1 with a one-line reason, as every karani failure does.
            raise CommandError(
                f"{len(found)} stored texts hold credentials; "
                "`karani secrets --redact` removes them"
            )

    @staticmethod
    def _line(finding: dict[str, Any], verb: str) -> str:
        kinds = ", ".join(finding["kinds"])
        return f"{verb}: {finding['table']} id {finding['id']} field {finding['field']}: {kinds}"
