#!/usr/bin/env python
"""Django's command-line utility for karani (the same entry as the ``karani`` script)."""

import sys

from karani_site.cli import run

if __name__ == "__main__":
    run(sys.argv)
