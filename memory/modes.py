"""Which memory mode is in force, and what recall reports about it."""

import logging

from django.conf import settings

log = logging.getLogger("karani.memory")

OFF, BASIC, MEM0 = "off", "basic", "mem0"


def current() -> str:
    return settings.KARANI_MEMORY


def warn_if_unavailable(mode: str) -> None:
    """Start-up check: nothing to warn about for off/basic."""
    return None
