"""A BaseCommand whose every failure is one line on stderr and a non-zero exit."""

import json
import os
import re
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from memory import background
from memory.errors import FactNotFound, MemoryInputError, first_line

# SQLite and PostgreSQL wording for a table that migrate has not created.
_MISSING_TABLE = re.compile(r"no such table|relation \S+ does not exist")


# Every failure a karani command reports starts so, whichever command and whichever stage
# (parsing, the service, the database); the console script's own errors too (karani_site.cli).
PREFIX = "karani"

# Django's options for every command: still accepted (scripts pass -v0), but a person reading
# a command's help sees only karani's own.
DJANGO_OPTIONS = frozenset(
    {
        "--version",
        "--verbosity",
        "--settings",
        "--pythonpath",
        "--traceback",
        "--no-color",
        "--force-color",
        "--skip-checks",
    }
)


class _OneLineParser(CommandParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse prints the whole usage block; karani's contract is one line.
        raise CommandError(f"{message} (see {self.prog} --help)")


# As if killed by SIGPIPE: a reader that went away (`| head`) is no error worth a message,
# but a truncated export must not look complete.
EXIT_BROKEN_PIPE = 128 + 13


class KaraniCommand(BaseCommand):
    """Turns service errors and database outages into CommandError (one line, exit 1)."""

    # System checks import the whole API, most of a short command's run time, and could print
    # on stdout, which `karani mcp` keeps for the protocol; migrate and runserver run them.
    requires_system_checks: list[str] = []
    suppressed_base_arguments = DJANGO_OPTIONS
    # Errors whose message is the user's to act on: one line, exit 1, no traceback.
    user_errors: tuple[type[Exception], ...] = (MemoryInputError, FactNotFound)

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.__class__ = _OneLineParser
        return parser

    def run_from_argv(self, argv: list[str]) -> None:
        try:
            super().run_from_argv(argv)
        except CommandError as exc:
            # Django only catches errors raised while handling, not while parsing arguments.
            self._fail(exc)
        except BrokenPipeError:
            # Point stdout at /dev/null so the interpreter's final flush cannot fail again.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(EXIT_BROKEN_PIPE)

    def _fail(self, exc: CommandError) -> None:
        sys.stderr.write(f"{PREFIX}: {exc}\n")
        sys.exit(exc.returncode)

    def execute(self, *args: Any, **options: Any) -> Any:
        try:
            return self._execute(*args, **options)
        except CommandError as exc:
            # From the command line, the one prefix instead of Django's "CommandError:";
            # call_command's callers (and --traceback) get the exception itself.
            if not getattr(self, "_called_from_command_line", False) or options.get("traceback"):
                raise
            self._fail(exc)

    def _execute(self, *args: Any, **options: Any) -> Any:
        try:
            try:
                return super().execute(*args, **options)
            finally:
                # Its facts are indexed before the command returns: at interpreter exit the
                # index's libraries can no longer load.
                background.flush()
        except self.user_errors as exc:
            raise CommandError(str(exc)) from None
        except DatabaseError as exc:
            first = first_line(exc)
            if _MISSING_TABLE.search(first):
                # A fresh KARANI_DATA_DIR or database: the fix is one command away.
                first += "; the ledger is not set up yet, run `karani migrate`"
            raise CommandError(f"database error: {first}") from None

    def write_json(self, payload: Any) -> None:
        self.stdout.write(json.dumps(payload, ensure_ascii=False, default=str))

    def emit(self, opts: dict[str, Any], payload: Any, text: str) -> None:
        """``payload`` as JSON under --json, else ``text``."""
        if opts["json"]:
            self.write_json(payload)
        else:
            self.stdout.write(text)
