"""Reading and validating posting files (JSON array, JSONL or CSV) for `postings import`.
Each record comes with the line it started on, so a bad row is reported and the rest imported.
"""

import csv
import io
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from memory.text import normalise, refusal, too_long
from qualify import remote_policy
from qualify.credentials import first_refusal
from qualify.errors import QualifyError
from qualify.models import Remote
from qualify.text import MULTILINE

# Each text field's maximum length, in the order rows are checked.
LIMITS = {
    # As written ("Hybrid (2 days)"); the posting keeps the policy, its detail in the location.
    "remote": 200,
    "url": 1000,
    "company": 200,
    "title": 300,
    "role_category": 100,
    "location": 200,
    "salary": 200,
    "description": 20000,
    "source": 100,
}
REQUIRED = ("company", "title")
FIELDS = {*LIMITS, "dealbreakers"}
MAX_DEALBREAKERS = 20
MAX_DEALBREAKER_CHARS = 200
_SPACE = re.compile(r"[ \t\r\n]*")


class PostingFileError(QualifyError):
    """The file as a whole cannot be read (nothing was imported)."""


class PostingRowError(ValueError):
    """One record is invalid (that row is skipped)."""


def read_records(path: Path) -> Iterable[tuple[int, Any]]:
    """``(line, record)`` pairs; a row that cannot be parsed comes as a PostingRowError."""
    try:
        # utf-8-sig: a file saved by Excel or Notepad starts with a BOM, not with "company".
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise PostingFileError(f"{path} is not UTF-8 text") from None
    readers = {".csv": _csv_records, ".jsonl": _jsonl_records, ".json": _json_array_records}
    if path.suffix.lower() not in readers:
        raise PostingFileError(f"{path.name}: use a .json, .jsonl or .csv file")
    return readers[path.suffix.lower()](text)


def _csv_records(text: str) -> Iterator[tuple[int, Any]]:
    # Rows end at CRLF, CR or LF only (csv's newline=""): a cell's U+2028 or form feed is text.
    reader = csv.DictReader(io.StringIO(text, newline=""))
    start = 2  # line 1 is the header
    for row in reader:
        if None in row:  # more cells than header columns
            yield start, PostingRowError("more cells than the header has columns")
        else:
            yield start, {k.strip(): v for k, v in row.items() if k and v not in (None, "")}
        start = reader.line_num + 1


def _jsonl_records(text: str) -> Iterator[tuple[int, Any]]:
    # JSON Lines end at LF (a CR before it is JSON whitespace); JSON allows a raw U+2028.
    for line_no, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            yield line_no, json.loads(line)
        except json.JSONDecodeError as exc:
            yield line_no, PostingRowError(f"not valid JSON ({exc.msg})")


def _json_array_records(text: str) -> list[tuple[int, Any]]:
    try:
        records = json.loads(text)
    except json.JSONDecodeError as exc:
        # A syntax error leaves no safe place to resume: the file is refused whole.
        raise PostingFileError(
            f"line {exc.lineno}: not valid JSON ({exc.msg}); nothing was imported"
        ) from None
    if not isinstance(records, list):
        raise PostingFileError("a .json posting file must hold one JSON array of objects")
    # Walk the (valid) array once more for the line each element starts on.
    decoder, lines, pos = json.JSONDecoder(), [], text.index("[") + 1
    for _ in records:
        pos = _SPACE.match(text, pos).end()
        lines.append(text.count("\n", 0, pos) + 1)
        pos = _SPACE.match(text, decoder.raw_decode(text, pos)[1]).end() + 1  # past the comma
    return list(zip(lines, records, strict=True))


def _policy(value: str, name: str, *, multiline: bool) -> str:
    """``value`` under memory's text policy, or the row's one-line refusal."""
    message = refusal(value, field=name)
    if message:
        raise PostingRowError(message)
    return normalise(value, multiline=multiline)


def _text(record: dict[str, Any], name: str) -> str:
    value = record.get(name)
    if value is None or value == "":
        if name in REQUIRED:
            raise PostingRowError(f"{name} is missing")
        return ""
    if not isinstance(value, str):
        raise PostingRowError(f"{name} must be text")
    text = _policy(value, name, multiline=name in MULTILINE)
    if name in REQUIRED and not text:
        raise PostingRowError(f"{name} is empty")
    if message := too_long(value, text, field=name, limit=LIMITS[name]):
        raise PostingRowError(message)
    return text


def _dealbreakers(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):  # CSV: "on-site only; US citizens"
        value = value.split(";")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PostingRowError("dealbreakers must be a list of strings (or 'a; b' in CSV)")
    items = [item for v in value if (item := _policy(v, "dealbreakers", multiline=False))]
    if len(items) > MAX_DEALBREAKERS:
        raise PostingRowError(f"more than {MAX_DEALBREAKERS} dealbreakers")
    if any(len(v) > MAX_DEALBREAKER_CHARS for v in items):
        raise PostingRowError(f"a dealbreaker is longer than {MAX_DEALBREAKER_CHARS} characters")
    return items


def clean(record: Any) -> dict[str, Any]:
    """One posting's fields (``company`` by name), or PostingRowError with a one-line reason."""
    if isinstance(record, PostingRowError):
        raise record
    if not isinstance(record, dict):
        raise PostingRowError("each posting must be an object")
    unknown = set(record) - FIELDS
    if unknown:
        raise PostingRowError(f"unknown field(s): {', '.join(sorted(unknown))}")
    fields = {name: _text(record, name) for name in LIMITS}
    try:
        remote, detail = remote_policy.read(fields["remote"])
    except remote_policy.UnknownPolicy as exc:
        raise PostingRowError(str(exc)) from None
    fields["remote"] = remote or Remote.UNKNOWN
    fields["location"] = remote_policy.located(fields["location"], detail)
    if len(fields["location"]) > LIMITS["location"]:
        raise PostingRowError(
            f"location with the remote policy's detail is longer than {LIMITS['location']}"
            " characters"
        )
    if fields["url"]:
        try:
            URLValidator(schemes=["http", "https"])(fields["url"])
        except ValidationError:
            raise PostingRowError(f"url {fields['url']!r} is not an http(s) URL") from None
    fields["dealbreakers"] = _dealbreakers(record.get("dealbreakers"))
    refused = first_refusal(fields)
    if refused:
        raise PostingRowError(refused)
    return fields
