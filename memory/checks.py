"""A system check of the ``KARANI_*`` values a project sets (``manage.py check``).

karani_site parses its environment and refuses bad values at start-up; a host project writes
them straight into its settings module, so this check refuses them instead, one line each.
"""

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.apps import AppConfig, apps
from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning
from django.utils.module_loading import import_string

from memory.conf import DEFAULTS

RATE = re.compile(r"(?i)off|[1-9][0-9]*/(s|sec|second|m|min|minute|h|hour|d|day)")


def _whole(low: int) -> tuple[Callable[[Any], bool], str]:
    test = lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= low  # noqa: E731
    return test, f"a whole number of at least {low}"


def _number(low: float, high: float, use: str = "") -> tuple[Callable[[Any], bool], str]:
    def test(value: Any) -> bool:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        return number and math.isfinite(value) and low <= value <= high

    return test, use or f"a number from {low:g} to {high:g}"


def _choice(*choices: str) -> tuple[Callable[[Any], bool], str]:
    return (lambda v: v in choices), "one of: " + ", ".join(choices)


def _text(pattern: str = "", use: str = "a string") -> tuple[Callable[[Any], bool], str]:
    return (lambda v: isinstance(v, str) and re.fullmatch(pattern or ".*", v) is not None), use


# An embedder's side prefix: kept exactly as written (a trailing space matters), no control
# characters.
PREFIX, PREFIX_USE = r"[^\x00-\x1f\x7f]{0,200}", "at most 200 printable characters"

RULES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "KARANI_DATA_DIR": (
        lambda v: v is None or (isinstance(v, str | Path) and str(v) != ""),
        "a directory path (str or Path), or None for the per-user data directory",
    ),
    "KARANI_SCANNER_CACHE_DIR": (
        lambda v: v is None or (isinstance(v, str | Path) and str(v) != ""),
        "a directory path (str or Path), or None for KARANI_DATA_DIR/kingfisher-rules",
    ),
    "KARANI_MEMORY": _choice("off", "basic", "mem0"),
    "KARANI_CONTEXT_COMPANY_SHARE": _number(0, 1, "a fraction from 0 to 1 (e.g. 0.4)"),
    "KARANI_MEMORY_TOP_K": _whole(1),
    "KARANI_MEMORY_HOLDOUT": _number(0, 0.5, "a fraction from 0 to 0.5 (e.g. 0.1)"),
    "KARANI_LLM_BASE_URL": _text(),
    "KARANI_LLM_MODEL": _text(r"\S.*", "a model name"),
    "KARANI_LLM_API_KEY": _text(),
    "KARANI_LLM_TIMEOUT": _number(1, 300, "a number of seconds from 1 to 300"),
    "KARANI_LLM_CONTEXT": _whole(512),
    "KARANI_MEMORY_EXTRACTION": ((lambda v: isinstance(v, bool)), "True or False"),
    "KARANI_INDEX_IN_BACKGROUND": ((lambda v: isinstance(v, bool)), "True or False"),
    "KARANI_VECTOR_DSN": _text(),
    "KARANI_VECTOR_COLLECTION": _text(
        r"[a-z_][a-z0-9_]{0,50}",
        "lower-case letters, digits and _ (a PostgreSQL table name, at most 51 characters)",
    ),
    "KARANI_EMBEDDER": _text(),
    "KARANI_EMBEDDER_MODEL": _text(),
    "KARANI_EMBEDDER_QUERY_PREFIX": _text(
        r"[^\x00-\x1f]{0,200}", "at most 200 printable characters"
    ),
    "KARANI_EMBEDDER_PASSAGE_PREFIX": _text(
        r"[^\x00-\x1f]{0,200}", "at most 200 printable characters"
    ),
    "KARANI_EMBEDDER_QUERY_MODEL": _text(),
    "KARANI_EMBEDDER_PASSAGE_MODEL": _text(),
    "KARANI_EMBEDDER_DIMS": _whole(1),
    "KARANI_EMBEDDER_THREADS": _whole(0),
    "KARANI_EMBEDDER_DTYPE": _choice("auto", "float32", "bfloat16"),
    "KARANI_VECTOR_TIMEOUT": _number(0.1, 60, "a number of seconds from 0.1 to 60"),
    "KARANI_VECTOR_COOLDOWN": _number(0, 3600, "a number of seconds from 0 to 3600"),
    "KARANI_ADMIN_LOGIN_ATTEMPTS": _whole(1),
    "KARANI_ADMIN_LOGIN_WINDOW": _whole(1),
    "KARANI_API_RECALL_RATE": (
        lambda v: v is None or (isinstance(v, str) and RATE.fullmatch(v) is not None),
        "N/second, N/minute, N/hour, N/day, or 'off' (None)",
    ),
    "KARANI_API_WRITE_RATE": (
        lambda v: v is None or (isinstance(v, str) and RATE.fullmatch(v) is not None),
        "N/second, N/minute, N/hour, N/day, or 'off' (None)",
    ),
}


def check_settings(app_configs: list[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """One error per ``KARANI_*`` setting whose value karani cannot use."""
    errors = []
    for name, default in DEFAULTS.items():
        valid, use = RULES[name]
        # What the project wrote, not memory.conf's view of it (which resolves the data dir).
        value = getattr(settings, name, default)
        if not valid(value):
            errors.append(Error(f"{name}={value!r} is not valid; use {use}", id="karani.E001"))
    return errors


def check_schema_class(
    app_configs: list[AppConfig] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """The API's schema view (with drf_spectacular installed) needs drf-spectacular's class."""
    if not apps.is_installed("drf_spectacular"):
        return []
    from drf_spectacular.openapi import AutoSchema
    from rest_framework.settings import api_settings

    configured = api_settings.DEFAULT_SCHEMA_CLASS
    if isinstance(configured, str):
        configured = import_string(configured)
    if isinstance(configured, type) and issubclass(configured, AutoSchema):
        return []
    return [
        Warning(
            "karani's API schema needs REST_FRAMEWORK['DEFAULT_SCHEMA_CLASS'] = "
            "'drf_spectacular.openapi.AutoSchema' (or drf_spectacular out of INSTALLED_APPS)",
            id="karani.W001",
        )
    ]
