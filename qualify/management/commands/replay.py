from datetime import datetime, time
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.utils import timezone
from rich.console import Console
from rich.table import Table

from qualify import llm, replay
from qualify.management.base import QualifyCommand


def _since(value: str) -> datetime:
    """YYYY-MM-DD (midnight, local time zone) or an ISO 8601 date-time."""
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise CommandError(
            f"--since {value!r} is not a date: use YYYY-MM-DD or an ISO 8601 date-time"
        ) from None
    if len(value) == 10:
        parsed = datetime.combine(parsed.date(), time.min)
    return timezone.make_aware(parsed) if timezone.is_naive(parsed) else parsed


class Command(QualifyCommand):
    help = (
        "Ask the model again about postings whose outcome is known, under each prompt "
        "version (memory-aware, pre-memory, agent with --agent), and report precision and "
        "recall against the outcomes. Writes nothing live; an interrupted run resumes."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--since", metavar="DATE", help="only verdicts from this date on")
        parser.add_argument("--limit", type=int, help="at most N postings, oldest verdict first")
        parser.add_argument("--agent", action="store_true", help="also replay agent mode")
        parser.add_argument(
            "--new", action="store_true", help="start a new run instead of resuming one"
        )
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        since = _since(opts["since"]) if opts["since"] else None
        config = llm.LLMConfig.from_settings()  # before anything is written
        run, resumed = replay.start_or_resume(
            since=since, limit=opts["limit"], agent_mode=opts["agent"], new=opts["new"]
        )
        _cases, done, total = replay.pending_work(run)
        if resumed and not opts["json"]:
            self.stdout.write(f"resuming replay run {run.pk}: {len(done)} of {total} answered")
        progress = self.progress("replaying", disable=opts["json"])
        with progress:
            task = progress.add_task("replay", total=total, completed=len(done))
            summary = replay.run(
                run,
                client=llm.ChatClient(config),
                on_answer=lambda _answer: progress.advance(task),
            )
        result = replay.report(run)
        result["memory_unavailable_this_run"] = summary.memory_unavailable
        if opts["json"]:
            self.write_json(result)
        else:
            self._print(result)
        if summary.stopped:
            raise CommandError(summary.stopped)

    def _print(self, result: dict[str, Any]) -> None:
        console = Console(file=self.stdout, width=140, color_system=None)
        table = Table(
            title=f"replay run {result['run']}: {result['postings']} postings with known outcomes",
            title_justify="left",
        )
        for column in (
            "prompt version",
            "answered",
            "errors",
            "precision",
            "recall",
            "tp/fp/fn/tn",
        ):
            table.add_column(column, overflow="fold")
        for name, v in result["versions"].items():
            c = v["confusion"]
            table.add_row(
                name,
                str(v["answered"]),
                str(v["errors"]),
                _rate(v["precision"]),
                _rate(v["recall"]),
                f"{c['tp']}/{c['fp']}/{c['fn']}/{c['tn']}",
            )
        console.print(table)
        if not all(v["enough_data"] for v in result["versions"].values()):
            self.stdout.write(
                f"not enough data yet: fewer than {result['min_sample']} in a precision or "
                "recall denominator; read the intervals, not the estimates"
            )
        if result["memory_unavailable_this_run"]:
            self.stdout.write(
                f"memory was unavailable for {result['memory_unavailable_this_run']} answers: "
                "asked without recalled facts"
            )
        self.stdout.write(f"{len(result['disagreements'])} postings where the versions disagree")
        for d in result["disagreements"]:
            verdicts = ", ".join(f"{k}={v}" for k, v in d["verdicts"].items())
            outcome = "progressed" if d["progressed"] else "did not progress"
            self.stdout.write(
                f"  posting {d['posting']} {d['title']} at {d['company']} ({outcome}): {verdicts}"
            )


def _rate(rate: dict[str, Any]) -> str:
    if rate["estimate"] is None:
        return f"- (n={rate['n']})"
    return f"{rate['estimate']:.0%} [{rate['low']:.0%}, {rate['high']:.0%}] n={rate['n']}"
