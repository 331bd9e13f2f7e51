"""The ``karani`` console script: ``manage.py`` from any directory, failures in one line."""

import os
import sys
from difflib import get_close_matches

PROG = "karani"

# What `karani --help` lists, in this order. Every other Django command still runs (`karani
# django help` lists them), so scripts that call e.g. `karani check` keep working.
GROUPS: dict[str, tuple[str, ...]] = {
    "Memory": ("remember", "recall", "list", "correct", "forget", "import", "export"),
    "Health and the semantic index": ("doctor", "secrets", "reindex", "infra"),
    "Serving": ("runserver", "mcp", "api-token"),
    "Qualify": ("qualify", "postings", "profile", "outcome", "funnel", "replay"),
    "Set-up": ("migrate", "createsuperuser", "collectstatic"),
}


# The apps whose commands are karani's own (the rest are Django's: `karani django help`).
APPS = ("memory", "qualify")


def _summary(name: str, app: str) -> str:
    # Django loads only once a command runs, so `karani --version` answers without it.
    from django.core.management import load_command_class

    text = " ".join(str(load_command_class(app, name).help).split())
    first = text.split(". ")[0].rstrip(".")
    return first if len(first) <= 90 else first[:87] + "..."


def _print_help() -> None:
    # Django loads only once a command runs, so `karani --version` answers without it.
    import django
    from django.core.management import get_commands

    django.setup()
    commands = get_commands()
    lines = [
        f"usage: {PROG} COMMAND [options]    ({PROG} help COMMAND for a command's options)",
        "",
        "karani: a long-term memory for a job-search pipeline.",
    ]
    grouped = {name for names in GROUPS.values() for name in names}
    # A command an app adds without a place in GROUPS is still listed: the list stays true.
    more = tuple(sorted(n for n, app in commands.items() if app in APPS and n not in grouped))
    for group, names in {**GROUPS, "More": more}.items():
        if not names:
            continue
        lines += ["", f"{group}:"]
        lines += [f"  {n:<16}{_summary(n, commands[n])}" for n in names if n in commands]
    lines += [
        "",
        f"Django's own commands (shell, dbshell, check, ...): {PROG} django help",
        f"{PROG} --version prints karani's version.",
    ]
    sys.stdout.write("\n".join(lines) + "\n")


def run(argv: list[str], *, karani_help: bool = False) -> None:
    """Django's command line (or, with ``karani_help``, karani's own help), failures in one line."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "karani_site.settings")
    # After the settings module is named, and only once a command runs (not for --version).
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import BaseCommand, ManagementUtility, get_commands

    class Utility(ManagementUtility):
        def fetch_command(self, subcommand: str) -> BaseCommand:
            # Django prints two lines for an unknown command; karani's contract is one. With
            # broken settings, Django's own path re-raises the configuration error instead.
            if settings.configured and subcommand not in get_commands():
                close = get_close_matches(subcommand, get_commands(), n=1)
                hint = f"; did you mean {close[0]}?" if close else ""
                sys.stderr.write(
                    f"{PROG}: unknown command {subcommand!r}{hint} (see {PROG} --help)\n"
                )
                sys.exit(1)
            return super().fetch_command(subcommand)

    try:
        if karani_help:
            _print_help()
            return
        utility = Utility(argv)
        utility.prog_name = argv[0]
        utility.execute()
    except ImproperlyConfigured as exc:
        # A bad environment variable is the user's to fix: say which, without a traceback.
        message = " ".join(str(exc).split("\n"))
        sys.stderr.write(f"{PROG}: configuration error: {message}\n")
        sys.exit(2)


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv if argv is None else argv)[1:]
    first = args[0] if args else "--help"
    if first in ("--version", "-V"):
        # Reads the installed package's metadata, which only --version needs.
        from karani_site.version import VERSION

        sys.stdout.write(f"{PROG} {VERSION}\n")
    elif first == "django":
        # Django's full command set and help, as `python manage.py` shows them.
        run([f"{PROG} django", *args[1:]])
    else:
        run([PROG, *args], karani_help=first in ("--help", "-h") or args == ["help"])


if __name__ == "__main__":
    main()
