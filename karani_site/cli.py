"""The ``karani`` console script: ``karani CMD ...`` is ``python manage.py CMD ...``.

It works from any directory because it never relies on the current directory to find the
settings module; the data directory comes from ``KARANI_DATA_DIR`` (see settings).
Every failure it reports itself (bad configuration, unknown command) is one line on stderr.
"""

import os
import sys
from difflib import get_close_matches


def run(argv: list[str]) -> None:
    """Run a management command line; ``argv[0]`` is the program name shown in messages."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "karani_site.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import ManagementUtility, get_commands

    prog = os.path.basename(argv[0])

    class Utility(ManagementUtility):
        def fetch_command(self, subcommand: str):  # type: ignore[no-untyped-def]
            # Django prints two lines for an unknown command; karani's contract is one. With
            # broken settings, Django's own path re-raises the configuration error instead.
            if settings.configured and subcommand not in get_commands():
                close = get_close_matches(subcommand, get_commands(), n=1)
                hint = f"; did you mean {close[0]}?" if close else ""
                sys.stderr.write(
                    f"{prog}: unknown command {subcommand!r}{hint} (see {prog} help)\n"
                )
                sys.exit(1)
            return super().fetch_command(subcommand)

    try:
        Utility(argv).execute()
    except ImproperlyConfigured as exc:
        # A bad environment variable is the user's to fix: say which, without a traceback.
        message = " ".join(str(exc).split("\n"))
        sys.stderr.write(f"{prog}: configuration error: {message}\n")
        sys.exit(2)


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv if argv is None else argv)
    args[0] = "karani"
    run(args)


if __name__ == "__main__":
    main()
