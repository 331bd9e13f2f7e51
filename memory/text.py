"""The text policy every door applies (``refusal``, ``normalise``), and the normalisation
and tokenisation shared by validation, dedupe and keyword recall."""

import hashlib
import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from stop_words import get_stop_words

MAX_TEXT_CHARS = 2000
MAX_TOKEN_CHARS = 64
MAX_QUERY_TOKENS = 32

# \w is Unicode-aware in Python 3, so "Zürich" and "東京" are single words; apostrophes and
# hyphens split words, which keeps matching word-anchored ("own" never hits "ownership").
_WORD = re.compile(r"\w+")


# The stop-words English list (~1,250 words) is built for web text and drops words that carry
# meaning in a job search: "on-call" would vanish entirely, "own the roadmap", "remote work",
# "AI", "UK", "Microsoft" and the Go language would be unsearchable. These stay content words
# (a change here needs a migration that refills ``terms``, as 0015 did for "go").
KEPT_WORDS = frozenset(
    {
        "ai", "ml", "qa", "hr", "uk", "net", "web", "website", "microsoft", "computer",
        "system", "test", "research", "call", "work", "worked", "working", "works", "own",
        "new", "first", "best", "full", "part", "high", "low", "home", "open", "free",
        "group", "front", "back", "end", "site", "year", "years", "state", "large", "small",
        "big", "go",
    }
)  # fmt: skip


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    stop = {word for phrase in get_stop_words("english") for word in words(phrase)}
    return frozenset(stop - KEPT_WORDS)


def collapse(text: str) -> str:
    """One line under the text policy: NFC, invisible characters dropped, whitespace
    collapsed to single spaces, trimmed."""
    return normalise(text, multiline=False)


def company_key(name: str) -> str:
    """The scope key: "Northwind Robotics" and " northwind  ROBOTICS" are one company."""
    return collapse(name).casefold()


def fact_key(*, text: str, kind: str, company_key: str | None) -> str:
    """What makes two writes "the same fact" (text ignoring case and spacing, kind, scope),
    hashed so one short column carries the live-row unique constraint."""
    raw = "\x1f".join([kind, company_key or "", collapse(text).casefold()])
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def words(text: str) -> list[str]:
    """Every word, lowercased, in order (stopwords kept)."""
    return [
        w.casefold()[:MAX_TOKEN_CHARS] for w in _WORD.findall(unicodedata.normalize("NFC", text))
    ]


def tokens(text: str) -> list[str]:
    """Distinct content words in first-seen order: what the keyword index stores."""
    stop = stopwords()
    return list(dict.fromkeys(word for word in words(text) if word not in stop))


# Zero-width non-joiner and joiner: emoji sequences need ZWJ (the technologist emoji is
# woman + ZWJ + laptop), and Persian, Hindi and other scripts spell words with either.
JOINERS = "\u200c\u200d"


def _is_joining(text: str, i: int) -> bool:
    """A joiner between two non-ASCII, non-space characters. Next to ASCII it has no job and
    would only make "re<ZWJ>mote" a different fact from "remote" that looks the same."""
    if i == 0 or i == len(text) - 1:
        return False
    before, after = text[i - 1], text[i + 1]
    return all(
        not ch.isascii() and not ch.isspace() and ch not in JOINERS for ch in (before, after)
    )


# --- The text policy: what every door does to text before anything reads or stores it ----
# (docs/security.md, "Text as it arrives"). Job boards send CRLF, tabs, soft hyphens, BOMs and
# non-breaking spaces: those are normalised. What no honest text carries is refused, with one
# message naming the field, the character and where it is.

# CRLF, a lone CR, Word's manual line break (VT), a page break (FF) and Unicode's line and
# paragraph separators all end a line.
LINE_BREAKS = "\r\x0b\x0c\u2028\u2029"
_LINE_BREAK = re.compile(r"\r\n|[\r\x0b\x0c\u2028\u2029]")
# A tab and every Unicode space separator (no-break, narrow no-break, figure, thin, hair,
# em, ideographic, ...) read as one plain space.
SPACES = (
    "\t\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u202f\u205f\u3000"
)
# Invisible characters with no job in stored text are dropped: soft hyphen, Mongolian vowel
# separator, zero-width space, left-to-right, right-to-left and Arabic letter marks, word
# joiner, the invisible operators, and the BOM (zero-width no-break space).
INVISIBLE = "\u00ad\u180e\u200b\u200e\u200f\u061c\u2060\u2061\u2062\u2063\u2064\ufeff"
# Bidi embeddings, overrides and isolates reorder how text displays (Trojan Source).
BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
# Characters the policy keeps, drops or rewrites although Unicode files them under C or Z.
_HANDLED = frozenset("\n" + LINE_BREAKS + SPACES + INVISIBLE + JOINERS)
# Regular expressions rather than str.translate: re scans in C without a lookup per character.
_SPACE = re.compile(f"[{SPACES}]")
_INVISIBLE = re.compile(f"[{INVISIBLE}]")
_JOINER = re.compile(f"[{JOINERS}]")
# What is left after removing the handled characters is printable unless something is refused.
_HANDLED_RUN = re.compile("[" + "".join(sorted(_HANDLED)) + "]+")
_KINDS = {
    "Cc": "a control character",
    "Cf": "an invisible format character",
    "Cs": "a lone surrogate",
    "Co": "a private-use character",
}
# Noncharacters (U+FDD0-U+FDEF and the last two code points of every plane) are reserved for
# a program's own use and will never be assigned: in text that arrives they are corruption.
# Other unassigned code points are taken: a newer Unicode assigns them (this Python's database
# is 14.0), so refusing them would refuse tomorrow's letters and emoji.


def _is_noncharacter(char: str) -> bool:
    code = ord(char)
    return code & 0xFFFE == 0xFFFE or 0xFDD0 <= code <= 0xFDEF


def refused_kind(char: str) -> str | None:
    """What makes ``char`` refused ("a control character"), or None when the policy takes it.

    Refused: C0 and C1 controls other than the line breaks and the tab, bidi controls, the
    other format characters (tags, interlinear annotations, ...), surrogates, private use
    and noncharacters. Unassigned code points are taken."""
    if char in _HANDLED:
        return None
    if char in BIDI_CONTROLS:
        return "a bidi control"
    if _is_noncharacter(char):
        return "a noncharacter"
    return _KINDS.get(unicodedata.category(char))


def find_refused(text: str) -> tuple[int, str, str] | None:
    """The first refused character of ``text``: (position counting from 1, the character,
    its kind), or None."""
    if text.isprintable() or _HANDLED_RUN.sub("", text).isprintable():  # at C speed
        return None
    for index, char in enumerate(text):
        kind = refused_kind(char)
        if kind is not None:
            return index + 1, char, kind
    return None


def refusal(text: str, *, field: str) -> str | None:
    """The one message for a refused character in ``field``, or None when ``text`` is taken."""
    found = find_refused(text)
    if found is None:
        return None
    position, char, kind = found
    return f"{field} contains {kind} U+{ord(char):04X} at position {position}; remove it"


def too_long(sent: str, stored: str, *, field: str, limit: int) -> str | None:
    """The one message for a text over ``limit``, or None. It counts the text as sent, as a
    schema's ``maxLength`` does (normalising CRLF must not make a refused text fit), and as
    stored, which NFC can lengthen ("\ufb2c" is three code points)."""
    length = max(len(sent), len(stored))
    if length <= limit:
        return None
    return f"{field} is {length} characters; the limit is {limit}"


def normalise(text: str, *, multiline: bool) -> str:
    """``text`` as it is stored, indexed and deduplicated: line breaks as LF, tabs and Unicode
    spaces as a plain space, invisible characters dropped (a joiner only where it joins),
    NFC; trimmed, and one line with single spaces unless ``multiline``. Call it on text that
    ``refusal`` has passed."""
    text = _INVISIBLE.sub("", _SPACE.sub(" ", _LINE_BREAK.sub("\n", text)))
    text = _JOINER.sub(lambda m: m[0] if _is_joining(m.string, m.start()) else "", text)
    text = unicodedata.normalize("NFC", text)
    return text.strip() if multiline else " ".join(text.split())


@lru_cache(maxsize=4)
def refused_class(*, widest: int | None = None, narrowest: int = 1) -> str:
    """The refused characters as one regex character class for schema patterns, read alike by
    ECMA-262, Python's ``re`` and the Rust regex under jsonschema-rs: ``\\uXXXX`` in the BMP,
    the character itself past it (ECMA-262 and Python spell those escapes differently). Lone
    surrogates are left out: no UTF-8 text, and so no JSON schema validator, can hold one.
    ``widest`` and ``narrowest`` keep only the ranges of that many code points."""

    def spell(code: int) -> str:
        return f"\\u{code:04X}" if code <= 0xFFFF else chr(code)

    parts = []
    for first, last in refused_ranges():
        for a, b in _without_surrogates(first, last):
            if narrowest <= b - a + 1 <= (widest or b - a + 1):
                parts.append(spell(a) if a == b else f"{spell(a)}-{spell(b)}")
    return "[" + "".join(parts) + "]"


def _without_surrogates(first: int, last: int) -> list[tuple[int, int]]:
    low, high = 0xD800, 0xDFFF
    if last < low or first > high:
        return [(first, last)]
    return [(a, b) for a, b in ((first, low - 1), (high + 1, last)) if a <= b]


@lru_cache(maxsize=1)
def refused_ranges() -> tuple[tuple[int, int], ...]:
    """Every refused code point as inclusive (first, last) ranges, about 35 of them; it reads
    the whole Unicode database (about 0.2 s), so it runs once, at schema time."""
    # Only "other" (C*) characters are ever refused: the category alone skips the rest fast.
    return tuple(
        runs(
            code
            for code in range(0x110000)
            if unicodedata.category(chr(code))[0] == "C" and refused_kind(chr(code)) is not None
        )
    )


def runs(codes: Iterable[int]) -> list[tuple[int, int]]:
    """Ascending code points as inclusive (first, last) runs of consecutive ones."""
    found: list[tuple[int, int]] = []
    for code in codes:
        if found and found[-1][1] == code - 1:
            found[-1] = (found[-1][0], code)
        else:
            found.append((code, code))
    return found
