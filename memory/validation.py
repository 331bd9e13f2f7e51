"""Checks every write and read runs first: each ``clean_*`` normalises or raises, naming it."""

from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from memory import text as textmod
from memory.credentials import find_secrets
from memory.errors import MemoryInputError, SecretRefused
from memory.models import Kind, Source

DEFAULT_LIMIT = 5
MAX_LIMIT = 100
MAX_REASON_CHARS = 500
MAX_REF_CHARS = 200
MAX_COMPANY_CHARS = 200
MAX_ACTOR_CHARS = 150


@dataclass(frozen=True)
class CleanFact:
    text: str
    kind: str
    company: str | None
    company_key: str | None
    source: str
    fit_score: int | None
    ref: str | None
    fact_key: str


def _string(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise MemoryInputError(f"{what} must be a string", field=what)
    message = textmod.refusal(value, field=what)
    if message:
        raise MemoryInputError(message, field=what)
    return value


def clean_text(
    value: Any,
    *,
    what: str = "text",
    max_chars: int = textmod.MAX_TEXT_CHARS,
    multiline: bool = True,
) -> str:
    """A text field under the text policy (memory.text): refused characters raise, the rest
    is normalised; a single-line field is collapsed to one line of single spaces."""
    clean = textmod.normalise(_string(value, what), multiline=multiline)
    if not clean:
        raise MemoryInputError(f"{what} is empty", field=what)
    if message := textmod.too_long(value, clean, field=what, limit=max_chars):
        raise MemoryInputError(message, field=what)
    return clean


def clean_company(value: Any) -> tuple[str | None, str | None]:
    """(display name, key) for a company, or (None, None) for global."""
    if value is None:
        return None, None
    display = textmod.normalise(_string(value, "company"), multiline=False)
    key = textmod.company_key(display)
    if not key:
        raise MemoryInputError(
            "company name is empty after normalisation; omit it for a global fact", field="company"
        )
    # The key can outgrow the name ("ß" casefolds to "ss"); both share the column limit, and
    # the name as sent counts too, as the schema's maxLength counts it.
    if max(len(value), len(display), len(key)) > MAX_COMPANY_CHARS:
        raise MemoryInputError(
            f"company is longer than {MAX_COMPANY_CHARS} characters", field="company"
        )
    return display, key


def clean_choice(value: Any, *, what: str, choices: list[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise MemoryInputError(
            f"unknown {what} {value!r}; use one of: {', '.join(choices)}", field=what
        )
    return value


def clean_fit_score(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise MemoryInputError("fit score must be a whole number from 0 to 100", field="fit_score")
    if not 0 <= value <= 100:
        raise MemoryInputError(f"fit score {value} is outside 0-100", field="fit_score")
    return value


def clean_ref(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return clean_text(value, what="ref", max_chars=MAX_REF_CHARS, multiline=False)


def clean_reason(value: Any) -> str:
    if value is None or (isinstance(value, str) and not value.strip()):
        raise MemoryInputError("a reason is required", field="reason")
    return clean_text(value, what="reason", max_chars=MAX_REASON_CHARS, multiline=False)


def clean_actor(value: Any, *, what: str = "actor") -> str:
    if not value:
        return ""
    actor = textmod.normalise(_string(value, what), multiline=False)[:MAX_ACTOR_CHARS]
    refuse_secrets(actor, what=what)
    return actor


# The ledger's history starts at the Unix epoch; a day ahead allows for a skewed clock. Out
# of this range a stamp is a typo or an attack (year 1 overflows once converted to UTC).
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
FUTURE_SLACK = timedelta(days=1)


def clean_timestamp(value: Any, *, what: str) -> datetime:
    """An ISO 8601 date-time within the ledger's range, aware (naive means UTC)."""
    try:
        parsed = parse_datetime(value) if isinstance(value, str) else None
    except ValueError:  # well-formed but impossible: 2024-02-30, an offset of +99:00
        raise MemoryInputError(
            f"{what} {value!r} is not a real date-time (no such day, hour or offset)", field=what
        ) from None
    if parsed is None:
        raise MemoryInputError(f"{what} {value!r} is not an ISO 8601 date-time", field=what)
    if timezone.is_naive(parsed):
        parsed = parsed.replace(tzinfo=UTC)
    try:
        in_range = EARLIEST <= parsed <= timezone.now() + FUTURE_SLACK
    except OverflowError:  # year 1 or 9999 shifted past the calendar's ends by its offset
        in_range = False
    if not in_range:
        raise MemoryInputError(
            f"{what} {value!r} is outside 1970-01-01 to a day from now", field=what
        )
    return parsed


def clean_id(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise MemoryInputError(
            f"fact id must be a positive whole number, not {value!r}", field="id"
        )
    return value


def clean_limit(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MemoryInputError(f"limit must be a whole number from 1 to {MAX_LIMIT}", field="limit")
    if not 1 <= value <= MAX_LIMIT:
        raise MemoryInputError(f"limit {value} is outside 1-{MAX_LIMIT}", field="limit")
    return value


def refuse_secrets(value: str, *, what: str = "text") -> None:
    kinds = find_secrets(value)
    if kinds:
        raise SecretRefused(
            f"refused: {what} looks like it contains a credential ({', '.join(kinds)}); "
            "nothing was stored",
            field=what,
            kinds=tuple(kinds),
        )


def validate_fact(
    *,
    text: Any,
    kind: Any = Kind.NOTE,
    company: Any = None,
    source: Any = Source.TEACH,
    fit_score: Any = None,
    ref: Any = None,
) -> CleanFact:
    """Everything remember() checks, without writing. Raises MemoryInputError."""
    clean = clean_text(text)
    kind = clean_choice(kind, what="kind", choices=Kind.values)
    source = clean_choice(source, what="source", choices=Source.values)
    display, key = clean_company(company)
    score = clean_fit_score(fit_score)
    ref_clean = clean_ref(ref)
    refuse_secrets(clean)
    # Every free-text field is read back by API readers and exports: none may carry one.
    if display:
        refuse_secrets(display, what="company")
    if ref_clean:
        refuse_secrets(ref_clean, what="ref")
    return CleanFact(
        text=clean,
        kind=kind,
        company=display,
        company_key=key,
        source=source,
        fit_score=score,
        ref=ref_clean,
        fact_key=textmod.fact_key(text=clean, kind=kind, company_key=key),
    )


def json_type(value: Any) -> str:
    """The JSON type of a decoded value, as JSON Schema names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def fits_json_type(value: Any, allowed: Collection[str]) -> bool:
    """Whether ``value``'s JSON type is one of ``allowed``; an integer is a number too."""
    found = json_type(value)
    return found in allowed or (found == "integer" and "number" in allowed)
