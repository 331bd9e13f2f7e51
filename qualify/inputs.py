"""Checks on what an outside pipeline sends (the API and MCP doors): each ``clean_*``
normalises a value or raises a one-line error naming its field; nothing is written first."""

import dataclasses
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from memory.text import normalise, refusal, too_long
from qualify import remote_policy
from qualify.context import Subject
from qualify.credentials import refuse
from qualify.errors import QualifyInputError
from qualify.models import MAX_EXTERNAL_ID_CHARS
from qualify.postings import LIMITS
from qualify.text import MULTILINE

# An agent's free-text task: as long as a fact may be (recall reads its first 500 characters).
MAX_TASK_CHARS = 2000
MAX_PROMPT_VERSION_CHARS = 64
SUBJECT_FIELDS = tuple(f.name for f in dataclasses.fields(Subject))


def max_chars(name: str) -> int:
    return MAX_TASK_CHARS if name == "task" else LIMITS.get(name, 200)


def clean_text(value: Any, *, name: str, limit: int | None = None, required: bool = False) -> str:
    """A text field under memory's text policy (refused characters raise, the rest is
    normalised), without credentials, within its limit."""
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise QualifyInputError(f"{name} must be a string", field=name)
    message = refusal(value, field=name)
    if message:
        raise QualifyInputError(message, field=name)
    text = normalise(value, multiline=name in MULTILINE)
    if required and not text:
        raise QualifyInputError(f"{name} is empty", field=name)
    if message := too_long(value, text, field=name, limit=limit or max_chars(name)):
        raise QualifyInputError(message, field=name)
    refuse(name, text)
    return text


def clean_external_id(value: Any) -> str:
    return clean_text(value, name="external_id", limit=MAX_EXTERNAL_ID_CHARS, required=True)


def clean_remote(value: Any) -> tuple[str, str]:
    """The remote policy and its detail: "Hybrid (2 days)" is ("hybrid", "2 days")."""
    return _policy(clean_text(value, name="remote"))


def _policy(remote: str) -> tuple[str, str]:
    try:
        return remote_policy.read(remote)
    except remote_policy.UnknownPolicy as exc:
        raise QualifyInputError(str(exc), field="remote") from None


def clean_location(location: Any, remote: Any) -> tuple[str, str]:
    """The posting's location, with the remote policy's detail kept beside it, and the policy."""
    policy, detail = clean_remote(remote)
    place = clean_text(location, name="location")
    return clean_text(remote_policy.located(place, detail), name="location"), policy


def clean_url(value: Any) -> str:
    url = clean_text(value, name="url")
    if url:
        try:
            URLValidator(schemes=["http", "https"])(url)
        except ValidationError:
            raise QualifyInputError("url is not an http(s) URL", field="url") from None
    return url


def clean_subject(fields: dict[str, Any]) -> Subject:
    """The posting (or task) a working context is about; at least one field must say what."""
    unknown = set(fields) - set(SUBJECT_FIELDS)
    if unknown:
        raise QualifyInputError(f"unknown field(s): {', '.join(sorted(unknown))}")
    clean = {name: clean_text(value, name=name) for name, value in fields.items()}
    # Recall reads the policy as written ("Hybrid (2 days)"), once it names one.
    _policy(clean.get("remote", ""))
    if not any(clean.values()):
        raise QualifyInputError(
            "say what the context is for: a company and title, or a task", field="title"
        )
    clean["company"] = clean.get("company") or None
    return Subject(**clean)


def clean_limit(value: Any) -> int | None:
    """Facts wanted; None is the configured default, and above 10 is capped by the builder."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise QualifyInputError("limit must be a whole number of 1 or more", field="limit")
    if value < 1:
        raise QualifyInputError(f"limit {value} is below 1", field="limit")
    return value
