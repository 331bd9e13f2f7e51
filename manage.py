#!/usr/bin/env python
"""Django's command-line utility for karani."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "karani_site.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        # A bad environment variable is the user's to fix: say which, without a traceback.
        sys.stderr.write(f"karani: configuration error: {exc}\n")
        sys.exit(2)


if __name__ == "__main__":
    main()
