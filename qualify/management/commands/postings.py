from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from qualify import services
from qualify.management.base import QualifyCommand
from qualify.postings import read_records


class Command(QualifyCommand):
    help = "Manage job postings. `postings import FILE`: import a .json, .jsonl or .csv file."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION", help="import")
        imp = sub.add_parser(
            "import", help="import postings; bad rows are reported by line, the rest imported"
        )
        imp.add_argument("file", type=Path, help="a JSON Lines file, one posting per line")
        imp.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        path: Path = opts["file"]
        if not path.is_file():
            raise CommandError(f"no such file: {path}")
        report = services.import_postings(records=read_records(path))
        if opts["json"]:
            self.write_json(report.to_dict())
            return
        self.stdout.write(
            f"created {report.created}, duplicates {report.duplicates}, "
            f"rejected {len(report.rejected)}"
        )
        for line_no, error in report.rejected:
            self.stderr.write(f"line {line_no}: {error}")
