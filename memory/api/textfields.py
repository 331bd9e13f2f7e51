"""Text fields whose schema says what the server refuses: the characters the text policy
refuses (memory.text.refused_class), a blank value where a value is required, and a field's
own form (a remote policy, a URL).

Patterns are written so ECMA-262 (the schema's dialect, jsonschema-rs) and Python's ``re``
(hypothesis, which schemathesis generates with) read them alike: characters as themselves or
as ``\\uXXXX``, not as escapes the two spell differently, and no ``\\s`` or ``\\b`` alone,
which they read differently.
"""

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from rest_framework import serializers

from memory.text import INVISIBLE, JOINERS, refused_class, refused_kind, runs

BLANK_MODES = ("refused", "allowed", "empty")
# What a regex class must escape; no refused or blank character is one of these.
_SPECIAL = "\\]^-["


def _ranges(codes: list[int]) -> str:
    """The body of a regex class holding ``codes``, as literal characters and ranges."""

    def char(code: int) -> str:
        return "\\" + chr(code) if chr(code) in _SPECIAL else chr(code)

    return "".join(char(a) if a == b else f"{char(a)}-{char(b)}" for a, b in runs(codes))


# Every character str.isspace() takes lies below U+3001 (U+3000 is the last).
_SPACES_BELOW = 0x3001


def _taken(codes: list[int]) -> str:
    """``codes`` less what the text policy refuses, as the body of a regex class."""
    return _ranges([code for code in codes if refused_kind(chr(code)) is None])


@lru_cache(maxsize=1)
def blank_class() -> str:
    """Whitespace as the server's ``str.split`` and ``str.strip`` read it (less U+001C-U+001F
    and NEL, which the policy refuses)."""
    return _taken([code for code in range(_SPACES_BELOW) if chr(code).isspace()])


@lru_cache(maxsize=1)
def unseen_class() -> str:
    """What leaves a text blank once normalised: whitespace and what the policy drops (soft
    hyphen, BOM, zero-width space, a joiner with nothing to join)."""
    spaces = [code for code in range(_SPACES_BELOW) if chr(code).isspace()]
    return _taken(sorted({*spaces, *map(ord, INVISIBLE + JOINERS)}))


# hypothesis builds a character class one code point at a time, so the wide refused ranges
# (private use: 137,000 code points) cost seconds per class. They are refused by one negative
# lookahead, which hypothesis does not build (it filters what it drew); the narrow ones (a few
# hundred code points, controls it draws often) stay in the classes too, so little is filtered.
_WIDE = 256


def refused() -> str:
    """The body of a class of the text policy's refused characters, less the wide ranges."""
    return refused_class(widest=_WIDE)[1:-1]


def no_wide_refused() -> str:
    """A lookahead: none of the wide ranges of refused characters anywhere."""
    return f"(?![\\s\\S]*{refused_class(narrowest=_WIDE + 1)})"


def non_blank() -> str:
    """A visible character somewhere: after any run of unseen characters, something else."""
    return f"(?=[{unseen_class()}]*[^{unseen_class()}{refused()}])"


HTTP_URL = (
    r"https?://[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?){0,3}\.[A-Za-z]{2,63}"
    r"(?::[0-9]{1,4})?(?:[/?#][!-~]*)?$"
)


def anycase(word: str) -> str:
    """``word`` matched in either case, without an inline flag."""
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else c for c in word)


def text_pattern(*, blank: str = "refused", form: str | Callable[[], str] = "") -> str:
    """What the server takes besides "": no refused character, a visible one unless ``blank``
    allows whitespace alone ("allowed"), and ``form`` if given. The schema answers "" apart
    (drf-spectacular adds it as the other branch of a oneOf for a blank-allowed field), so
    the pattern needs a character. Written without a lookahead where it can be: hypothesis
    draws a lookahead's part and the rest apart, then throws away what does not match."""
    start = no_wide_refused() + (f"(?={form() if callable(form) else form})" if form else "")
    if blank == "allowed":
        return f"^{start}[^{refused()}]+{_END}"
    unseen = unseen_class()
    return f"^{start}[{unseen}]*[^{unseen}{refused()}][^{refused()}]*{_END}"


# The end of the text, read alike by ECMA-262 and Python (whose "$" also matches before a
# final line break). Not "$" for a second reason: schemathesis folds maxLength into a pattern
# whose every part it can parse, writing the refused characters past U+FFFF back as Python's
# \U escapes, which the schema's ECMA-262 validator then refuses as no regex at all.
_END = "(?![\\s\\S])"


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
