"""karani's app settings: every ``KARANI_*`` setting the ``memory`` and ``qualify`` apps read,
with its default, in the manner of DRF's ``api_settings``.

A host project sets only what it wants to change, as plain module-level names in its own
settings (``KARANI_MEMORY = "mem0"``); the ready-made project, ``karani_site``, fills them from
the environment. Values are read from Django's settings on every access, so
``override_settings`` and pytest-django's ``settings`` fixture apply at once.
"""

import os
from pathlib import Path
from typing import Any

from django.conf import settings as django_settings


def _default_data_dir() -> Path:
    # A host project that names no data dir gets the platform's per-user data directory.
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "karani"


DEFAULTS: dict[str, Any] = {
    # Where the breaker's state, mem0's files and the secret scanner's cache live.
    "KARANI_DATA_DIR": None,  # None: _default_data_dir()
    # The secret scanner's compiled rules; None: KARANI_DATA_DIR / "kingfisher-rules".
    "KARANI_SCANNER_CACHE_DIR": None,
    # off | basic | mem0 (memory.modes)
    "KARANI_MEMORY": "basic",
    # Facts per working-context block; never more than 10 whatever is set.
    "KARANI_MEMORY_TOP_K": 5,
    # Share (0-1) of each working-context block kept for the company's own facts; the rest is
    # for the candidate's unscoped facts, and a share one side leaves empty goes to the other.
    "KARANI_CONTEXT_COMPANY_SHARE": 0.4,
    # Share of postings (0-0.5) judged without memory (qualify.holdout).
    "KARANI_MEMORY_HOLDOUT": 0.0,
    # The OpenAI-compatible chat endpoint qualify and mem0's extraction call; "" is none.
    "KARANI_LLM_BASE_URL": "",
    "KARANI_LLM_MODEL": "local-model",
    "KARANI_LLM_API_KEY": "",
    "KARANI_LLM_TIMEOUT": 30.0,
    "KARANI_LLM_CONTEXT": 4096,
    "KARANI_MEMORY_EXTRACTION": True,
    # mem0 mode: a write returns after its commit and a worker thread indexes the fact
    # (memory.background); False indexes it before the write returns.
    "KARANI_INDEX_IN_BACKGROUND": True,
    # The semantic index's own PostgreSQL + pgvector database; "" leaves mem0 mode on keyword.
    "KARANI_VECTOR_DSN": "",
    "KARANI_VECTOR_COLLECTION": "karani_memories",
    "KARANI_EMBEDDER": "",
    "KARANI_EMBEDDER_MODEL": "",
    "KARANI_EMBEDDER_DIMS": 384,
    "KARANI_EMBEDDER_THREADS": 1,
    "KARANI_EMBEDDER_DTYPE": "auto",
    # Asymmetric embedders (docs/embedders.md): text before each question / stored text, and
    # an endpoint's model name per side ("": KARANI_EMBEDDER_MODEL).
    "KARANI_EMBEDDER_QUERY_PREFIX": "",
    "KARANI_EMBEDDER_PASSAGE_PREFIX": "",
    "KARANI_EMBEDDER_QUERY_MODEL": "",
    "KARANI_EMBEDDER_PASSAGE_MODEL": "",
    "KARANI_VECTOR_TIMEOUT": 2.0,
    "KARANI_VECTOR_COOLDOWN": 30.0,
    # Failed admin logins per client address within the window (seconds): memory.admin.login.
    "KARANI_ADMIN_LOGIN_ATTEMPTS": 10,
    "KARANI_ADMIN_LOGIN_WINDOW": 900,
    # The REST API's throttle rates ("N/second|minute|hour|day"); None or "off": unthrottled.
    "KARANI_API_RECALL_RATE": "600/min",
    "KARANI_API_WRITE_RATE": "120/min",
}


class AppSettings:
    """``settings.KARANI_X``: the host's value when it set one, else the default."""

    def __getattr__(self, name: str) -> Any:
        if name not in DEFAULTS:
            raise AttributeError(f"{name} is not a karani setting (see memory.conf.DEFAULTS)")
        value = getattr(django_settings, name, DEFAULTS[name])
        if name == "KARANI_DATA_DIR":
            return Path(value) if value else _default_data_dir()
        return value


settings = AppSettings()
