import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from memory import selectors, services
from memory.management.base import KaraniCommand


def _records(path: Path, bad: list[tuple[int, str]]) -> Iterator[tuple[int, Any]]:
    # Read bytes and decode line by line: one line of broken UTF-8 is a reject like any
    # other bad line, not the end of the import.
    with path.open("rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8-sig" if line_no == 1 else "utf-8")
            except UnicodeDecodeError:
                bad.append((line_no, "not UTF-8 text"))
                continue
            if not line.strip():
                continue
            try:
                yield line_no, json.loads(line)
            except json.JSONDecodeError as exc:
                bad.append((line_no, f"not valid JSON ({exc.msg})"))
            except RecursionError:
                bad.append((line_no, "JSON nested too deeply"))


class Command(KaraniCommand):
    help = (
        "Import facts from a JSONL file (one object per line: text, kind, company, ref, "
        "created_at). Bad lines are reported and skipped, and the exit status is 1 unless "
        "--allow-partial. --restore loads an `export` file into an empty ledger."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "file",
            type=Path,
            help="a JSON Lines file, one fact per line (an export, with --restore)",
        )
        parser.add_argument("--restore", action="store_true", help="restore an export file")
        parser.add_argument(
            "--allow-partial",
            action="store_true",
            help="exit 0 even when some lines were rejected (the good lines go in either way)",
        )
        parser.add_argument(
            "--if-empty",
            action="store_true",
            help="import only into an empty ledger; otherwise touch nothing (scripts/dev's demo)",
        )
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        path: Path = opts["file"]
        if not path.is_file():
            raise CommandError(f"no such file: {path}")
        if opts["if_empty"] and selectors.list_facts(status="all").exists():
            # Importing again would touch every fact and change what recall ranks as recent.
            self.emit(opts, {"skipped": True}, "the ledger has facts already: nothing imported")
            return
        bad: list[tuple[int, str]] = []
        if opts["restore"]:
            records = list(_records(path, bad))
            if bad:  # restore is all-or-nothing: refuse before anything is written
                raise CommandError(f"line {bad[0][0]}: {bad[0][1]}")
            count = services.restore_facts(records=records)
            self.emit(opts, {"restored": count}, f"restored {count} facts")
            return
        report = services.import_facts(records=_records(path, bad), actor="import")
        report.rejected = sorted(report.rejected + bad)
        summary = (
            f"created {report.created}, touched {report.touched}, rejected {len(report.rejected)}"
        )
        self.emit(opts, report.to_dict(), summary)
        if not opts["json"]:
            for line_no, error in report.rejected:
                self.stderr.write(f"line {line_no}: {error}")
        if report.rejected and not opts["allow_partial"]:
            # A script that imports and moves on must notice; the good lines are in already.
            count = len(report.rejected)
            raise CommandError(
                f"{count} line{'s' if count != 1 else ''} rejected, the rest imported "
                "(--allow-partial accepts a partial import)"
            )
