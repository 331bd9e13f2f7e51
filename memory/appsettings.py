"""A ``KARANI_*`` setting declared once: its default, the rule its value follows, and how the
environment spells it.

``memory.conf`` and ``qualify.conf`` each declare their settings as a table of ``Setting``;
from a table come the app's settings object (``AppSettings``), its system check (``check``)
and karani_site's reading of the environment (``from_environment``), so no default or rule is
stated twice.
"""

import copy
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings as django_settings
from django.core.checks import CheckMessage, Error
from django.core.exceptions import ImproperlyConfigured


@dataclass(frozen=True)
class Rule:
    """What a value must be (``valid``), said in words (``use``), and how an environment
    string becomes one (``parse``, which raises ValueError for a string it cannot read)."""

    valid: Callable[[Any], bool]
    use: str
    parse: Callable[[str], Any] = str
    # The environment's wording of ``use``, where a project's Python spells values otherwise.
    env_use: str = ""
    # Off for text read exactly as written: e5's "query: " is not "query:".
    strip: bool = True


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    rule: Rule
    # What the apps read for a value (e.g. None's directory); the check sees the value itself.
    resolve: Callable[[Any], Any] | None = None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def whole(low: int) -> Rule:
    return Rule(
        lambda v: _is_number(v) and isinstance(v, int) and v >= low,
        f"a whole number of at least {low}",
        int,
    )


def number(low: float, high: float, use: str = "") -> Rule:
    return Rule(
        lambda v: _is_number(v) and math.isfinite(v) and low <= v <= high,
        use or f"a number from {low:g} to {high:g}",
        float,
    )


def choice(*choices: str, use: str = "") -> Rule:
    """One of ``choices``; the environment may write it in any case."""

    def parse(raw: str) -> str:
        for option in choices:
            if raw.lower() == option.lower():
                return option
        raise ValueError(raw)

    return Rule(lambda v: v in choices, use or "one of: " + ", ".join(choices), parse)


_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _switch(raw: str) -> bool:
    if raw.lower() not in _TRUE + _FALSE:
        raise ValueError(raw)
    return raw.lower() in _TRUE


def switch() -> Rule:
    return Rule(lambda v: isinstance(v, bool), "True or False", _switch, "true or false")


def text(pattern: str = ".*", use: str = "a string", *, strip: bool = True) -> Rule:
    return Rule(
        lambda v: isinstance(v, str) and re.fullmatch(pattern, v) is not None,
        use,
        strip=strip,
    )


RATE = re.compile(r"(?i)off|[1-9][0-9]*/(s|sec|second|m|min|minute|h|hour|d|day)")


def _rate(raw: str) -> str | None:
    if not RATE.fullmatch(raw):
        raise ValueError(raw)
    return None if raw.lower() == "off" else raw.lower()


def rate() -> Rule:
    """A DRF throttle rate such as ``600/min``; ``off`` (or None) leaves the scope unthrottled."""
    return Rule(
        lambda v: v is None or (isinstance(v, str) and RATE.fullmatch(v) is not None),
        "N/second, N/minute, N/hour, N/day, or 'off' (None)",
        _rate,
        "N/second, N/minute, N/hour, N/day or off",
    )


def directory(none_means: str) -> Rule:
    return Rule(
        lambda v: v is None or (isinstance(v, str | Path) and str(v) != ""),
        f"a directory path (str or Path), or None for {none_means}",
        lambda raw: Path(raw).expanduser().resolve(),
    )


def listing() -> Rule:
    """Comma-separated in the environment; a list of strings in a settings module."""
    return Rule(
        lambda v: isinstance(v, list) and all(isinstance(i, str) for i in v),
        "a list of strings (comma-separated in the environment)",
        lambda raw: [i.strip() for i in raw.split(",") if i.strip()],
    )


class AppSettings:
    """``settings.KARANI_X``: the project's value when it set one, else the declared default.

    Read from Django's settings on every access, so ``override_settings`` applies at once.
    """

    def __init__(self, *tables: Iterable[Setting]) -> None:
        self._declared = {s.name: s for table in tables for s in table}

    def __getattr__(self, name: str) -> Any:
        declared = self.__dict__.get("_declared", {})
        if name not in declared:
            raise AttributeError(f"{name} is not a setting of this app")
        setting = declared[name]
        value = getattr(django_settings, name, setting.default)
        return setting.resolve(value) if setting.resolve else value


def check(table: Iterable[Setting]) -> list[CheckMessage]:
    """One error per setting whose value (as the project wrote it) the apps cannot use."""
    errors: list[CheckMessage] = []
    for setting in table:
        value = getattr(django_settings, setting.name, setting.default)
        if not setting.rule.valid(value):
            errors.append(
                Error(
                    f"{setting.name}={value!r} is not valid; use {setting.rule.use}",
                    id="karani.E001",
                )
            )
    return errors


def from_environment(
    table: Iterable[Setting],
    environ: Mapping[str, str] = os.environ,
    defaults: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Each setting's value from the environment, an unset or blank one taking its default
    (or the caller's, from ``defaults``); the first value the rule refuses stops start-up."""
    values = {}
    for setting in table:
        raw = environ.get(setting.name, "")
        read = raw.strip() if setting.rule.strip else raw
        if not read:
            # A copy: Django's test set-up and callers may change a list in place.
            values[setting.name] = copy.copy((defaults or {}).get(setting.name, setting.default))
            continue
        try:
            value = setting.rule.parse(read)
            valid = setting.rule.valid(value)
        except ValueError:
            valid = False
        if not valid:
            use = setting.rule.env_use or setting.rule.use
            raise ImproperlyConfigured(f"{setting.name}={raw!r} is not valid; use {use}")
        values[setting.name] = value
    return values
