"""Text fields whose schema says what the server refuses: a blank value where a value is
required, and a field's own form (a remote policy, a URL).

Patterns are written so ECMA-262 (the schema's dialect, jsonschema-rs) and Python's ``re``
(hypothesis, which schemathesis generates with) read them alike: characters as themselves, not
as escapes the two spell differently, and no ``\\s`` or ``\\b`` alone, which they read
differently. The characters the text policy refuses are not in the schema: with the unassigned
code points they are about 2,000 ranges, which hypothesis takes minutes to draw from.
"""

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from rest_framework import serializers

BLANK_MODES = ("refused", "allowed", "empty")
# What a regex class must escape; no refused or blank character is one of these.
_SPECIAL = "\\]^-["


def _ranges(codes: list[int]) -> str:
    """The body of a regex class holding ``codes``, as literal characters and ranges."""
    spans: list[list[int]] = []
    for code in codes:
        if spans and spans[-1][1] == code - 1:
            spans[-1][1] = code
        else:
            spans.append([code, code])

    def char(code: int) -> str:
        return "\\" + chr(code) if chr(code) in _SPECIAL else chr(code)

    return "".join(char(a) if a == b else f"{char(a)}-{char(b)}" for a, b in spans)


# Every character str.isspace() takes lies below U+3001 (U+3000 is the last).
_SPACES_BELOW = 0x3001


@lru_cache(maxsize=1)
def blank_class() -> str:
    """Whitespace as the server's ``str.split`` and ``str.strip`` read it."""
    return _ranges([code for code in range(_SPACES_BELOW) if chr(code).isspace()])


def non_blank() -> str:
    """A visible character somewhere: after any run of whitespace, something else."""
    return f"(?=[{blank_class()}]*[^{blank_class()}])"


HTTP_URL = (
    r"https?://[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?){0,3}\.[A-Za-z]{2,63}"
    r"(?::[0-9]{1,4})?(?:[/?#][!-~]*)?$"
)


def anycase(word: str) -> str:
    """``word`` matched in either case, without an inline flag."""
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else c for c in word)


def text_pattern(*, blank: str = "refused", form: str | Callable[[], str] = "") -> str:
    """What the server takes besides "": a visible character unless ``blank`` allows
    whitespace alone ("allowed"), and ``form`` if given; empty when that is anything. The
    schema answers "" apart (drf-spectacular adds it as the other branch of a oneOf for a
    blank-allowed field with a pattern)."""
    start = "" if blank == "allowed" else non_blank()
    if form:
        start += f"(?={form() if callable(form) else form})"
    return f"^{start}[\\s\\S]" if start else ""


class Text(serializers.CharField):
    """A CharField documented with its pattern; the check itself stays the service's, so the
    refusal names the field in the service's words."""

    def __init__(
        self,
        *,
        blank: str = "refused",
        form: str | Callable[[], str] = "",
        **kwargs: Any,
    ) -> None:
        assert blank in BLANK_MODES, blank
        self.blank, self.form = blank, form
        kwargs.setdefault("allow_blank", blank != "refused")
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        # Whitespace alone is blank, also where the field keeps its spaces (trim_whitespace off).
        if self.blank != "allowed" and value and not value.split():
            self.fail("blank")
        return value

    @property
    def pattern(self) -> str:
        return text_pattern(blank=self.blank, form=self.form)


class TextSchema(OpenApiSerializerFieldExtension):
    target_class = Text
    match_subclasses = True

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        schema = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        if self.target.pattern:
            schema["pattern"] = self.target.pattern
        if self.target.blank == "refused":
            schema["minLength"] = max(1, schema.get("minLength", 1))
        return schema
