"""A text as its readers will read it. What is stored is read back through HTML (the admin,
a browser), through html-text (qualify's prompt reads a posting's description so), as a URL
and as a JSON or program string; a credential written behind any of these encodings is a
credential all the same (docs/security.md).

``plain`` is the model's reading of a description. ``readings`` gives every reading the
secrets screen scans, each with where each of its characters came from in the text as given,
so that a credential found in a decoded reading is redacted in the original.
"""

import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote

# A closing tag or a line break marks a text as HTML; "<5 years" or "<3" alone does not.
_MARKUP = re.compile(r"</[a-z][a-z0-9]*\s*>|<br\s*/?>", re.IGNORECASE)
_ESCAPED_MARKUP = re.compile(r"&lt;/[a-z][a-z0-9]*\s*&gt;|&lt;br\s*/?&gt;", re.IGNORECASE)

# Only these characters start an encoding; a text with none is read as written.
_ENCODED = re.compile(r"[&%<\\]")
# html.unescape's own grammar of a character reference, one reference at a time.
_ENTITY = re.compile(r"&(?:#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[A-Za-z][A-Za-z0-9]{1,31};?)")
_PERCENT = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
# \uXXXX, \UXXXXXXXX, \u{X…} (JavaScript), \xXX and JSON's \/.
_ESCAPE = re.compile(
    r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|u\{([0-9A-Fa-f]{1,6})\}|x([0-9A-Fa-f]{2})|(/))"
)
# A tag, a comment, or a script or style element whole (html-text drops their content).
_TAG = re.compile(
    r"<(script|style)\b[^<>]*>.*?</\1\s*>|<(?:/?[A-Za-z][^<>]*|!--.*?--|![A-Za-z][^<>]*)>",
    re.DOTALL | re.IGNORECASE,
)
# Double and triple escaping ("&amp;#95;", "%2525") is undone one layer a round.
MAX_ROUNDS = 4

Origin = list[tuple[int, int]]


@dataclass(frozen=True)
class Reading:
    """One way of reading a text, and for each of its characters the span of the text as
    given that it came from."""

    text: str
    origin: Origin | None  # None: not tracked (a screen that only asks "is there one?")

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the text as given that ``text[start:end]`` was read from."""
        assert self.origin is not None, "a reading made without origins"
        return self.origin[start][0], self.origin[end - 1][1]


def plain(text: str) -> str:
    """``text`` as plain lines: HTML (or entity-escaped HTML, as some job boards' APIs send a
    description) becomes its text with each paragraph, heading and list item on a line of
    its own; other text keeps its lines, its character references ("R&amp;D") read."""
    if not _MARKUP.search(text):
        if not _ESCAPED_MARKUP.search(text):
            return html.unescape(text) if "&" in text else text
        text = html.unescape(text)
    import html_text  # lxml-backed; only a description with markup needs it

    return html_text.extract_text(text, guess_layout=True)


def model_reading(text: str, readings: list["Reading"]) -> str | None:
    """``plain(text)`` when it may read differently from ``readings`` (those of ``text``);
    None when it cannot: html-text reads each tag as nothing or as a line break, so when
    reading every tag as nothing and as a space gives the same words (each tag stands
    between words), its reading has those words too."""
    if not (_MARKUP.search(text) or _ESCAPED_MARKUP.search(text)):
        return None
    if len(readings) < 3:  # a tag-as-space reading was not needed
        return None
    if _read_as_spaced(text):
        return None
    model = plain(text)
    return None if _words(model) in {_words(r.text) for r in readings} else model


# Tags html-text reads as a space or a line break between the words around them, keeping the
# text's order: inline and block formatting. Others it may drop whole (embedded content,
# scripts), move (table parts, head elements) or read otherwise.
_INLINE_TAGS = frozenset((
    "a", "abbr", "b", "bdi", "bdo", "big", "cite", "code", "del", "dfn", "em", "font", "i", "ins",
    "kbd", "mark", "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "tt", "u",
    "var",
))  # fmt: skip
_BLOCK_TAGS = frozenset((
    "article", "aside", "blockquote", "dd", "div", "dl", "dt", "footer", "h1", "h2", "h3", "h4",
    "h5", "h6", "header", "li", "main", "nav", "ol", "p", "pre", "section", "ul",
))  # fmt: skip
_VOID_TAGS = frozenset(("br", "hr"))
# The parser closes these by itself when one opens inside another (or a block inside "p").
_NOT_NESTED = frozenset(("a", "dd", "dt", "h1", "h2", "h3", "h4", "h5", "h6", "li", "p"))
_PLAIN_TAG = re.compile(
    r"<(/?)([A-Za-z][A-Za-z0-9]*)"
    r"(?:\s+[\w:-]+(?:\s*=\s*(?:\"[^\"<>]*\"|'[^'<>]*'|[^\s\"'<>=`]+))?)*\s*(/?)>"
)
# What either reader decodes its own way, and the marker _read_as_spaced puts for a tag.
_NOT_PLAIN = re.compile(r"[&%\\\x00]")
# html-text writes no space before a chunk opening with one of these, nor after "(".
_GLUED = re.compile(r"""\([\s\x00]*\x00|\x00[\s\x00]*[,:;.!?")]""")


def _read_as_spaced(text: str) -> bool:
    """Whether html-text reads ``text`` as its tag-as-space reading, word for word: every
    ``<`` opens a formatting tag, tags nest as written (the parser neither drops a stray
    closing tag nor closes one by itself), no tag stands before punctuation (or after a
    bracket) that html-text glues to its neighbour, and no entity, escape or percent sign is
    there for either to read differently. Lets a screen skip html-text's parse
    (tests/test_reading_spaced.py)."""
    if _NOT_PLAIN.search(text):
        return False
    tags = _PLAIN_TAG.findall(text)
    if len(tags) != text.count("<") or not _nested(tags):
        return False
    return not _GLUED.search(_PLAIN_TAG.sub("\x00", text))


def _nested(tags: list[tuple[str, str, str]]) -> bool:
    open_: list[str] = []
    for closing, name, self_closing in tags:
        name = name.lower()
        if name in _VOID_TAGS:
            if closing:
                return False
            continue
        inline = name in _INLINE_TAGS
        if self_closing or not (inline or name in _BLOCK_TAGS):
            return False
        if closing:
            if not open_ or open_.pop() != name:
                return False
            continue
        if name in _NOT_NESTED and name in open_:
            return False
        if not inline and any(o in _INLINE_TAGS or o == "p" for o in open_):
            return False
        open_.append(name)
    return True


def _substitute(
    pattern: re.Pattern[str], replace: Callable[[re.Match[str]], str], reading: Reading
) -> Reading:
    """``reading`` with each match of ``pattern`` replaced, each new character tracing back
    to the whole of what it replaced."""
    text, origin = reading.text, reading.origin
    if origin is None:  # the whole text at once, far cheaper
        new_text = _WHOLE[pattern](text) if pattern in _WHOLE else pattern.sub(replace, text)
        return reading if new_text == text else Reading(new_text, None)
    pieces: list[str] = []
    new_origin: Origin = []
    last = 0
    for match in pattern.finditer(text):
        start, end = match.span()
        new = replace(match)
        if new == match.group():
            continue
        pieces.append(text[last:start])
        new_origin.extend(origin[last:start])
        pieces.append(new)
        whole = (origin[start][0], origin[end - 1][1])
        new_origin.extend([whole] * len(new))
        last = end
    if not pieces:
        return reading
    pieces.append(text[last:])
    new_origin.extend(origin[last:])
    return Reading("".join(pieces), new_origin)


def _escape(match: re.Match[str]) -> str:
    if match.group(5):
        return "/"
    code = int(next(g for g in match.groups()[:4] if g), 16)
    # A lone surrogate or a code point past Unicode is no character: left as written.
    if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
        return match.group()
    return chr(code)


def _entity(match: re.Match[str]) -> str:
    return html.unescape(match.group())


def _percent(match: re.Match[str]) -> str:
    return unquote(match.group(), errors="replace")


# The standard library's own decoders, which read a whole text as the callbacks above read
# one match.
_WHOLE: dict[re.Pattern[str], Callable[[str], str]] = {
    _ENTITY: html.unescape,
    _PERCENT: lambda text: unquote(text, errors="replace"),
}


def _decoded(reading: Reading, tag: str) -> tuple[Reading, bool]:
    """``reading`` with entities, escapes, percent-encoding and tags (replaced by ``tag``)
    undone, layer after layer; and whether there was a tag."""
    tagged = False
    for _ in range(MAX_ROUNDS):
        before = reading.text
        if "&" in reading.text:
            reading = _substitute(_ENTITY, _entity, reading)
        if "\\" in reading.text:
            reading = _substitute(_ESCAPE, _escape, reading)
        if "%" in reading.text:
            reading = _substitute(_PERCENT, _percent, reading)
        if "<" in reading.text:
            untagged = _substitute(_TAG, lambda _: tag, reading)
            tagged = tagged or untagged is not reading
            reading = untagged
        if reading.text == before:
            break
    return reading, tagged


def readings(text: str, *, where: bool = True) -> list[Reading]:
    """``text`` as given, then each different decoded reading of it: tags dropped (a token
    split by empty markup joins up) and tags read as spaces (as a browser shows blocks).
    Without ``where``, the readings do not track where their characters came from."""
    given = Reading(text, [(i, i + 1) for i in range(len(text))] if where else None)
    found = [given]
    if not _ENCODED.search(text):
        return found
    joined, tagged = _decoded(given, "")
    if joined.text != text:
        found.append(joined)
    if tagged:  # the same text with each tag read as a space
        spaced = _decoded(given, " ")[0]
        if _words(spaced.text) != _words(joined.text):
            found.append(spaced)
    return found


def _words(text: str) -> str:
    return " ".join(text.split())


def may_be_encoded(text: str) -> bool:
    """Whether ``text`` holds a character that starts an encoding ``readings`` undoes."""
    return bool(_ENCODED.search(text))
