"""Which memory mode is in force, and what recall reports about it."""

import importlib.util
import logging

from memory.conf import settings

log = logging.getLogger("karani.memory")

OFF, BASIC, MEM0 = "off", "basic", "mem0"


def current() -> str:
    return settings.KARANI_MEMORY


def warn_if_unavailable() -> None:
    """Start-up check, without importing mem0: one warning when mem0 mode cannot work."""
    if current() != MEM0:
        return
    if not settings.KARANI_VECTOR_DSN:
        log.warning(
            "KARANI_MEMORY=mem0 but KARANI_VECTOR_DSN is not set; recall will fall back to "
            "keyword until it points at a PostgreSQL database with pgvector"
        )
    elif importlib.util.find_spec("mem0") is None:
        log.warning(
            "KARANI_MEMORY=mem0 but the memory extra is not installed "
            "(pip install torch==2.13.0, then pip install -e '.[memory]'); recall falls back"
        )
