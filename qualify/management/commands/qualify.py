from dataclasses import asdict
from typing import Any

from django.core.management.base import CommandError, CommandParser

from qualify import services
from qualify.management.base import QualifyCommand


class Command(QualifyCommand):
    help = (
        "Qualify postings that have no verdict yet against the candidate profile, with the "
        "LLM at KARANI_LLM_BASE_URL. A memory outage never stops the batch."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--limit", type=int, help="at most N postings, oldest first")
        parser.add_argument("--posting", type=int, metavar="ID", help="only this posting")
        parser.add_argument("--agent", action="store_true", help="let the model call a recall tool")
        parser.add_argument("--json", action="store_true", help="print the summary as JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        # Everything is checked here, before the first LLM request.
        batch = services.prepare_batch(posting_id=opts["posting"], limit=opts["limit"])
        progress = self.progress("qualifying", disable=opts["json"] or not batch.postings)
        with progress:
            task = progress.add_task("qualify", total=len(batch.postings))
            summary = services.run_batch(
                batch, agent_mode=opts["agent"], on_progress=lambda: progress.advance(task)
            )
        if opts["json"]:
            self.write_json(asdict(summary))
        elif not summary.total:
            self.stdout.write("nothing to qualify: every live posting has a verdict")
        else:
            self.stdout.write(
                f"qualified {summary.qualified}, rejected {summary.rejected}, "
                f"errors {summary.errors}, skipped {summary.skipped} (of {summary.total}); "
                f"{summary.with_memory} with memory facts"
            )
            if summary.memory_unavailable:
                self.stdout.write(
                    f"memory was unavailable for {summary.memory_unavailable}: "
                    "decided without recalled facts"
                )
            if summary.facts_not_written:
                self.stdout.write(
                    f"{summary.facts_not_written} verdict facts were not written to memory "
                    "(see warnings)"
                )
            if summary.errors:
                self.stdout.write(
                    f"last error: {summary.last_error} (errored postings are retried next run)"
                )
        if summary.stopped:
            raise CommandError(summary.stopped)
