import json
import os
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from memory import services
from memory.management.base import KaraniCommand


class Command(KaraniCommand):
    help = "Write every fact, deleted ones included, as JSONL: enough for `import --restore`."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", "-o", type=Path, help="file to write (default: stdout)")

    def handle(self, *args: Any, **opts: Any) -> None:
        path: Path | None = opts["output"]
        if path is None:
            for memory in services.iter_all_facts():
                self.stdout.write(json.dumps(services.export_record(memory), ensure_ascii=False))
            return
        # Written beside the target and renamed at the end: a failed export never leaves a
        # truncated file where a complete one is expected.
        partial = path.with_name(f".{path.name}.partial")
        try:
            with partial.open("w", encoding="utf-8") as out:
                count = 0
                for memory in services.iter_all_facts():
                    out.write(json.dumps(services.export_record(memory), ensure_ascii=False))
                    out.write("\n")
                    count += 1
            os.replace(partial, path)
        except OSError as exc:
            partial.unlink(missing_ok=True)
            raise CommandError(f"cannot write {path}: {exc.strerror or exc}") from None
        self.stderr.write(f"exported {count} facts to {path}")
