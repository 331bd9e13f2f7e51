"""Reading and validating posting files (JSON array, JSONL or CSV) for `postings import`.

Every record comes with the line it started on, so a bad row is reported by line and the
rest are imported.
"""

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from qualify.models import Remote

FIELDS = {
    "company",
    "title",
    "role_category",
    "location",
    "remote",
    "salary",
    "description",
    "url",
    "source",
    "dealbreakers",
}
LIMITS = {
    "company": 200,
    "title": 300,
    "role_category": 100,
    "location": 200,
    "salary": 200,
    "description": 20000,
    "url": 1000,
    "source": 100,
    "remote": 16,
}
MAX_DEALBREAKERS = 20
MAX_DEALBREAKER_CHARS = 200


class PostingFileError(ValueError):
    """The file as a whole cannot be read (nothing was imported)."""


class PostingRowError(ValueError):
    """One record is invalid (that row is skipped)."""


@dataclass(frozen=True)
class CleanPosting:
    company: str
    title: str
    role_category: str
    location: str
    remote: str
    salary: str
    description: str
    url: str
    source: str
    dealbreakers: list[str]


def read_records(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line, record)`` pairs; a JSONL line that is not JSON yields an error string."""
    suffix = path.suffix.lower()
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise PostingFileError(f"{path} is not UTF-8 text") from None
    if suffix == ".csv":
        return _csv_records(text)
    if suffix in {".jsonl", ".ndjson"}:
        return _jsonl_records(text)
    if suffix == ".json":
        return iter(_json_array_records(text))
    raise PostingFileError(f"{path.name}: use a .json, .jsonl or .csv file")


def _csv_records(text: str) -> Iterator[tuple[int, Any]]:
    reader = csv.DictReader(text.splitlines(keepends=True))
    start = 2  # line 1 is the header
    for row in reader:
        if None in row:  # more cells than header columns
            yield start, PostingRowError("more cells than the header has columns")
        else:
            yield start, {k.strip(): v for k, v in row.items() if k and v not in (None, "")}
        start = reader.line_num + 1


def _jsonl_records(text: str) -> Iterator[tuple[int, Any]]:
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield line_no, json.loads(line)
        except json.JSONDecodeError as exc:
            yield line_no, PostingRowError(f"not valid JSON ({exc.msg})")


def _json_array_records(text: str) -> list[tuple[int, Any]]:
    """Elements of a top-level JSON array with the line each starts on."""
    decoder = json.JSONDecoder()

    def line_of(pos: int) -> int:
        return text.count("\n", 0, pos) + 1

    def skip(pos: int) -> int:
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        return pos

    pos = skip(0)
    if pos >= len(text) or text[pos] != "[":
        raise PostingFileError("a .json posting file must hold one JSON array of objects")
    pos = skip(pos + 1)
    out: list[tuple[int, Any]] = []
    if pos < len(text) and text[pos] == "]":
        return out
    while True:
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            # A syntax error leaves no safe place to resume: the file is refused whole.
            raise PostingFileError(
                f"line {line_of(exc.pos)}: not valid JSON ({exc.msg}); nothing was imported"
            ) from None
        out.append((line_of(pos), value))
        pos = skip(end)
        if pos < len(text) and text[pos] == ",":
            pos = skip(pos + 1)
            continue
        if pos < len(text) and text[pos] == "]":
            return out
        raise PostingFileError(f"line {line_of(pos)}: expected ',' or ']'; nothing was imported")


def _text(record: dict[str, Any], name: str, *, required: bool = False) -> str:
    value = record.get(name)
    if value is None or value == "":
        if required:
            raise PostingRowError(f"{name} is missing")
        return ""
    if not isinstance(value, str):
        raise PostingRowError(f"{name} must be text")
    if "\x00" in value:
        raise PostingRowError(f"{name} contains a NUL character")
    value = value.strip() if name == "description" else " ".join(value.split())
    if required and not value:
        raise PostingRowError(f"{name} is empty")
    if len(value) > LIMITS[name]:
        raise PostingRowError(f"{name} is longer than {LIMITS[name]} characters")
    return value


def _dealbreakers(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):  # CSV: "on-site only; US citizens"
        value = value.split(";")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PostingRowError("dealbreakers must be a list of strings (or 'a; b' in CSV)")
    items = [" ".join(v.split()) for v in value if v.strip()]
    if len(items) > MAX_DEALBREAKERS:
        raise PostingRowError(f"more than {MAX_DEALBREAKERS} dealbreakers")
    if any(len(v) > MAX_DEALBREAKER_CHARS for v in items):
        raise PostingRowError(f"a dealbreaker is longer than {MAX_DEALBREAKER_CHARS} characters")
    return items


def clean(record: Any) -> CleanPosting:
    """One validated posting, or PostingRowError with a one-line reason."""
    if isinstance(record, PostingRowError):
        raise record
    if not isinstance(record, dict):
        raise PostingRowError("each posting must be an object")
    unknown = set(record) - FIELDS
    if unknown:
        raise PostingRowError(f"unknown field(s): {', '.join(sorted(unknown))}")
    remote = _text(record, "remote").lower() or Remote.UNKNOWN
    if remote not in Remote.values:
        raise PostingRowError(f"remote {remote!r} is not one of: {', '.join(Remote.values)}")
    url = _text(record, "url")
    if url:
        try:
            URLValidator(schemes=["http", "https"])(url)
        except ValidationError:
            raise PostingRowError(f"url {url!r} is not an http(s) URL") from None
    return CleanPosting(
        company=_text(record, "company", required=True),
        title=_text(record, "title", required=True),
        role_category=_text(record, "role_category"),
        location=_text(record, "location"),
        remote=remote,
        salary=_text(record, "salary"),
        description=_text(record, "description"),
        url=url,
        source=_text(record, "source"),
        dealbreakers=_dealbreakers(record.get("dealbreakers")),
    )
