from typing import Any

from django.core.management.base import CommandParser

from qualify import services
from qualify.management.base import QualifyCommand
from qualify.models import Stage


class Command(QualifyCommand):
    help = (
        "Record a stage a posting reached: applied, screen, interview, offer, rejected, withdrawn."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "posting_id",
            type=int,
            metavar="POSTING_ID",
            help="the posting's id in karani (the admin's postings list shows it)",
        )
        parser.add_argument(
            "stage",
            choices=Stage.values,
            metavar="STAGE",
            help=f"one of: {', '.join(Stage.values)}",
        )
        parser.add_argument("--note", default="", help="a short note (kept with the event)")
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        recorded = services.record_outcome(
            posting_id=opts["posting_id"], stage=opts["stage"], note=opts["note"]
        )
        outcome = recorded.outcome
        payload = {
            "id": outcome.pk,
            "posting": outcome.posting_id,
            "stage": outcome.stage,
            "qualification": outcome.qualification_id,
            "fact_written": recorded.fact_error is None,
            "created": recorded.created,
        }
        said = "recorded" if recorded.created else "already recorded (nothing written):"
        text = f"{said} {outcome.stage} for posting {outcome.posting_id} (#{outcome.pk})"
        self.emit(opts, payload, text)
        if recorded.fact_error and not opts["json"]:
            self.stderr.write(f"outcome fact not written to memory: {recorded.fact_error}")
