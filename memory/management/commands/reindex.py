from typing import Any

from django.core.management.base import CommandError, CommandParser
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from memory.management.base import KaraniCommand
from memory.semantic.config import SemanticUnavailable


class Command(KaraniCommand):
    help = (
        "Rebuild the semantic index from the ledger (drops the collection, replays every live "
        "fact in batches), or with --pending only catch up rows that could not be indexed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--pending", action="store_true", help="only index pending rows, drop stale vectors"
        )
        parser.add_argument("--batch-size", type=int, help="rows per embedding batch")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        # The index imports the LLM client (seconds): `karani help` loads every command.
        from memory.semantic import reindex as reindexmod

        if opts["batch_size"] is None:
            opts["batch_size"] = reindexmod.BATCH_SIZE
        if not 1 <= opts["batch_size"] <= 1000:
            raise CommandError("--batch-size must be from 1 to 1000")
        console = Console(file=self.stderr, width=100)
        bar = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=console,
            disable=opts["json"],
            transient=False,
        )
        label = "catching up pending rows" if opts["pending"] else "reindexing"
        with bar:
            task = bar.add_task(label, total=None)
            try:
                report = reindexmod.reindex(
                    pending_only=opts["pending"],
                    batch_size=opts["batch_size"],
                    progress=lambda done, total: bar.update(task, completed=done, total=total),
                )
            except SemanticUnavailable as exc:
                raise CommandError(f"semantic index unavailable: {exc}") from None
        if opts["json"]:
            self.write_json(report.to_dict())
        else:
            self.stdout.write(
                f"{'pending' if report.pending_only else 'full'} reindex: {report.written} "
                f"written, {report.removed} stale removed in {report.seconds:.1f}s "
                f"({report.written / report.seconds if report.seconds else 0:.0f} rows/s)\n"
                f"ledger live: {report.ledger_live}   index: {report.index_ledger_rows} facts "
                f"in {report.index_rows} vectors   pending: {report.pending_left}"
            )
        if not report.matches:
            twice = f", {report.index_repeats} vectors twice" if report.index_repeats else ""
            raise CommandError(
                f"index and ledger disagree: {report.index_ledger_rows} facts indexed{twice} "
                f"for {report.ledger_live} live facts; run `karani reindex` (full)"
            )
