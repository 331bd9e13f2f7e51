"""The ``karani`` console script: ``karani CMD ...`` is ``python manage.py CMD ...``.

It works from any directory because it never relies on the current directory to find the
settings module; the data directory comes from ``KARANI_DATA_DIR`` (see settings).
"""

import os
import sys


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "karani_site.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    args = list(sys.argv if argv is None else argv)
    args[0] = "karani"
    try:
        execute_from_command_line(args)
    except ImproperlyConfigured as exc:
        # A bad environment variable is the user's to fix: say which, without a traceback.
        sys.stderr.write(f"karani: configuration error: {exc}\n")
        sys.exit(2)


if __name__ == "__main__":
    main()
