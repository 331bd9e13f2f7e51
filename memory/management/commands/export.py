import json
from typing import Any

from django.core.management.base import CommandParser

from memory import services
from memory.management.base import KaraniCommand


class Command(KaraniCommand):
    help = "Write every fact, deleted ones included, as JSONL: enough for `import --restore`."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", "-o", help="file to write (default: stdout)")

    def handle(self, *args: Any, **opts: Any) -> None:
        out = open(opts["output"], "w", encoding="utf-8") if opts["output"] else None  # noqa: SIM115
        count = 0
        try:
            for memory in services.iter_all_facts():
                line = json.dumps(services.export_record(memory), ensure_ascii=False)
                if out:
                    out.write(line + "\n")
                else:
                    self.stdout.write(line)
                count += 1
        finally:
            if out:
                out.close()
        if out:
            self.stderr.write(f"exported {count} facts to {opts['output']}")
