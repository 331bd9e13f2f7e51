from typing import Any

from django.core.management.base import CommandParser

from qualify import services
from qualify.management.base import QualifyCommand
from qualify.models import Profile


class Command(QualifyCommand):
    help = "Show or set the candidate profile qualify judges postings against."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(
            dest="action", required=True, metavar="ACTION", help="show or set"
        )
        sub.add_parser("show", help="print the current profile").add_argument(
            "--json", action="store_true", help="print JSON"
        )
        set_ = sub.add_parser("set", help="update the profile (only the options given)")
        set_.add_argument("--summary", help="who the candidate is, what they look for")
        set_.add_argument("--preferences", help="remote, pay, on-call, team...")
        set_.add_argument(
            "--dealbreaker",
            action="append",
            dest="dealbreakers",
            help="repeatable; replaces the list",
        )
        set_.add_argument(
            "--no-dealbreakers", action="store_true", help="clear the dealbreaker list"
        )
        set_.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["action"] == "set":
            dealbreakers = [] if opts["no_dealbreakers"] else opts["dealbreakers"]
            profile = services.set_profile(
                summary=opts["summary"], preferences=opts["preferences"], dealbreakers=dealbreakers
            )
        else:
            profile = Profile.current()
            if profile is None:
                self.stdout.write("no profile yet: `profile set --summary ...`")
                return
        payload = {
            "id": profile.pk,
            "summary": profile.summary,
            "preferences": profile.preferences,
            "dealbreakers": profile.dealbreakers,
            "updated_at": profile.updated_at.isoformat(),
        }
        text = (
            f"summary: {profile.summary}\npreferences: {profile.preferences or '-'}\n"
            f"dealbreakers: {'; '.join(profile.dealbreakers) or '-'}"
        )
        self.emit(opts, payload, text)
