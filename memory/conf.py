"""memory's app settings: every ``KARANI_*`` setting the ``memory`` app reads, declared once
(``memory.appsettings``), in the manner of DRF's ``api_settings``.

A host project sets only what it wants to change, as plain module-level names in its own
settings (``KARANI_MEMORY = "mem0"``); the ready-made project, ``karani_site``, fills them from
the environment through these declarations. Values are read from Django's settings on every
access, so ``override_settings`` and pytest-django's ``settings`` fixture apply at once.
"""

import os
from pathlib import Path
from typing import Any

from memory.appsettings import (
    AppSettings,
    Setting,
    choice,
    directory,
    number,
    rate,
    switch,
    text,
    whole,
)


def _data_dir(value: Any) -> Path:
    if value:
        return Path(value)
    # A host project that names no data dir gets the platform's per-user data directory.
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "karani"


def _scanner_cache_dir(value: Any) -> Path:
    return Path(value) if value else settings.KARANI_DATA_DIR / "kingfisher-rules"


# An embedder's side prefix: kept exactly as written (a trailing space matters), one line.
_PREFIX = text(
    r"[^\x00-\x1f\x7f]{0,200}", "at most 200 characters on one line, e.g. 'query: '", strip=False
)
_SECONDS = "a number of seconds from {} to {}"

# The OpenAI-compatible chat endpoint of qualify and of mem0's extraction; "" is none.
# Declared here since memory reads them too; qualify.conf's settings object shares them.
LLM = (
    Setting("KARANI_LLM_BASE_URL", "", text()),
    Setting("KARANI_LLM_MODEL", "local-model", text(r"\S.*", "a model name")),
    Setting("KARANI_LLM_API_KEY", "", text()),
    # Per request; bounded so one hung endpoint cannot stall a batch indefinitely.
    Setting("KARANI_LLM_TIMEOUT", 30.0, number(1, 300, _SECONDS.format(1, 300))),
)

SETTINGS = (
    # Where the breaker's state, mem0's files and the secret scanner's cache live.
    Setting("KARANI_DATA_DIR", None, directory("the per-user data directory"), resolve=_data_dir),
    # The secret scanner's compiled rules (compiled once, then loaded from here).
    Setting(
        "KARANI_SCANNER_CACHE_DIR",
        None,
        directory("KARANI_DATA_DIR/kingfisher-rules"),
        resolve=_scanner_cache_dir,
    ),
    Setting("KARANI_MEMORY", "basic", choice("off", "basic", "mem0")),  # memory.modes
    *LLM,
    # Sizes mem0's extraction prompt when the endpoint's /v1/models does not report its context.
    Setting("KARANI_LLM_CONTEXT", 4096, whole(512)),
    # Off: mem0 mode indexes every fact as written, even with an LLM configured for qualify.
    Setting("KARANI_MEMORY_EXTRACTION", True, switch()),
    # mem0 mode: a write returns after its commit and a worker thread indexes the fact
    # (memory.background); False indexes it before the write returns.
    Setting("KARANI_INDEX_IN_BACKGROUND", True, switch()),
    # The semantic index's own PostgreSQL + pgvector database, never the ledger's; "" leaves
    # mem0 mode on keyword recall.
    Setting("KARANI_VECTOR_DSN", "", text()),
    Setting(
        "KARANI_VECTOR_COLLECTION",
        "karani_memories",
        text(
            r"[a-z_][a-z0-9_]{0,50}",
            "lower-case letters, digits and _ (a PostgreSQL table name, at most 51 characters)",
        ),
    ),
    # "": the bundled model; else a local model directory or an embeddings endpoint's URL.
    Setting("KARANI_EMBEDDER", "", text()),
    Setting("KARANI_EMBEDDER_MODEL", "", text()),
    Setting("KARANI_EMBEDDER_DIMS", 384, whole(1)),
    # torch intra-op threads for the local embedder; 0 = torch's default (all cores).
    Setting("KARANI_EMBEDDER_THREADS", 1, whole(0)),
    # auto: bfloat16 where the CPU computes it natively, else float32.
    Setting(
        "KARANI_EMBEDDER_DTYPE",
        "auto",
        choice("auto", "float32", "bfloat16", use="auto, float32 or bfloat16"),
    ),
    # Asymmetric embedders (docs/embedders.md): text before each question / stored text, and
    # an endpoint's model name per side ("": KARANI_EMBEDDER_MODEL).
    Setting("KARANI_EMBEDDER_QUERY_PREFIX", "", _PREFIX),
    Setting("KARANI_EMBEDDER_PASSAGE_PREFIX", "", _PREFIX),
    Setting("KARANI_EMBEDDER_QUERY_MODEL", "", text()),
    Setting("KARANI_EMBEDDER_PASSAGE_MODEL", "", text()),
    # A dead or hung vector store costs one timeout, then is skipped until the cool-down passes.
    Setting("KARANI_VECTOR_TIMEOUT", 2.0, number(0.1, 60, _SECONDS.format(0.1, 60))),
    Setting("KARANI_VECTOR_COOLDOWN", 30.0, number(0, 3600, _SECONDS.format(0, 3600))),
    # Failed admin logins per client address within the window (seconds): memory.admin.login.
    Setting("KARANI_ADMIN_LOGIN_ATTEMPTS", 10, whole(1)),
    Setting("KARANI_ADMIN_LOGIN_WINDOW", 900, whole(1)),
    # The REST API's throttle rates per user, shared by every worker (memory.api.base).
    Setting("KARANI_API_RECALL_RATE", "600/min", rate()),
    Setting("KARANI_API_WRITE_RATE", "120/min", rate()),
)

settings = AppSettings(SETTINGS)
