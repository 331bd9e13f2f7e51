"""The secrets screen: Kingfisher's catalogue for provider credentials plus karani's prose
rules, over text with look-alike letters folded to ASCII (docs/security.md).

``find_secrets`` answers "is there a credential, and of what kinds" and never the value;
``find_spans`` says where, for redaction.
"""

import re
import unicodedata
from functools import lru_cache

from memory import prose_rules, reading, scanner
from memory.scanner import Span

# What redaction leaves behind is no credential; its kind's words ("Secret Keyword") would
# otherwise read as a keyword and a value. Masked to the same length, so spans stay in place.
_MARKER = re.compile(r"\[redacted: [^\]\n]{1,80}\]")
_ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e\u2061\u2062\u2063\u2064")


@lru_cache(maxsize=1)
def _look_alikes() -> dict[int, str]:
    """Each non-ASCII character Unicode lists as confusable with one printable ASCII one."""
    # Imported on first use: every process that starts Django loads this module (the
    # admin's forms), and most never check a secret.
    from confusable_homoglyphs.confusables import confusables_data

    table: dict[int, str] = {}
    for char, glyphs in confusables_data.items():
        if len(char) != 1 or char.isascii():
            continue
        for glyph in glyphs:
            if len(glyph["c"]) == 1 and glyph["c"].isascii() and glyph["c"].isprintable():
                table[ord(char)] = glyph["c"]
                break
    return table


@lru_cache(maxsize=4096)
def _fold_char(char: str) -> str:
    if char in _ZERO_WIDTH:
        return ""
    return unicodedata.normalize("NFKC", char).translate(_look_alikes())


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def _folded(text: str) -> tuple[str, list[int]]:
    """``text`` as the rules see it, and for each folded character the index it came from
    (empty when each character folds to one, so indexes are the text's own)."""
    if text.isascii():
        return text, []
    pieces: list[str] = []
    last, shifted = 0, False
    for run in _NON_ASCII.finditer(text):  # ASCII stretches are copied whole
        pieces.append(text[last : run.start()])
        for char in run.group():
            folded = _fold_char(char)
            pieces.append(folded)
            shifted = shifted or len(folded) != 1
        last = run.end()
    pieces.append(text[last:])
    if not shifted:
        return "".join(pieces), []
    origin: list[int] = []
    for index, char in enumerate(text):
        origin.extend([index] * (1 if char.isascii() else len(_fold_char(char))))
    return "".join(pieces), origin


def _screened(text: str) -> tuple[str, list[int]]:
    folded, origin = _folded(text)
    if "[redacted: " in folded:
        folded = _MARKER.sub(lambda m: "_" * len(m.group()), folded)
    return folded, origin


def normalise(text: str) -> str:
    """``text`` as the detectors see it: NFKC, zero-width characters dropped, look-alikes
    replaced by the ASCII letters they imitate (Cyrillic "\u0440" becomes "p")."""
    return _folded(text)[0]


def _found(texts: list[str]) -> list[list[Span]]:
    """What the rules find in each of ``texts`` read as written, by each text's own offsets."""
    screened = [_screened(text) for text in texts]
    by_scanner = scanner.scan_many([folded for folded, _ in screened])
    out = []
    for (folded, origin), found in zip(screened, by_scanner, strict=True):
        found = found + prose_rules.find(folded)
        if origin:  # back from folded offsets to the text's own
            found = [
                Span(s.kind, origin[s.start], origin[s.end - 1] + 1 if s.end else 0) for s in found
            ]
        out.append(found)
    return out


def _read(text: str, *, where: bool) -> tuple[list[Span], list[str]]:
    """What the rules find in every reading of ``text`` (reading.readings), placed in ``text``
    as given (a token behind entities, escapes or markup covers all it was read from); and
    the kinds found in the description as the model reads it (HTML read by html-text), whose
    offsets do not lead back to the text. Without ``where``, only the kinds are right."""
    if not reading.may_be_encoded(text):
        return _found([text])[0], []
    ways = reading.readings(text, where=where)
    texts = [way.text for way in ways]
    model = reading.model_reading(text, ways)
    found = _found(texts + ([model] if model is not None else []))
    spans = [
        Span(span.kind, *way.span(span.start, span.end)) if where else span
        for way, in_way in zip(ways, found, strict=False)
        for span in in_way
        if span.end > span.start
    ]
    return spans, [span.kind for span in found[-1]] if model is not None else []


def _merged(found: list[Span]) -> list[Span]:
    merged: list[Span] = []
    for span in sorted(found, key=lambda s: (s.start, -s.end)):
        if span.end <= span.start:
            continue
        if merged and span.start < merged[-1].end:
            last = merged[-1]
            merged[-1] = Span(last.kind, last.start, max(last.end, span.end))
        else:
            merged.append(span)
    return merged


def find_spans(text: str) -> list[Span]:
    """Every credential in ``text``: its kind and its place in ``text`` as given, in order,
    overlapping findings merged (the first kind found at a place names it). When redacting
    those places would still leave one to some reader, the whole text is the one span."""
    merged = _merged(_read(text, where=True)[0])
    if not reading.may_be_encoded(text):
        return merged
    left = find_secrets(_replaced(text, merged))
    return [Span(left[0], 0, len(text))] if left else merged


def find_secrets(text: str) -> list[str]:
    """Every credential kind found in ``text`` as any reader reads it, deduplicated, in a
    stable order."""
    spans, model_kinds = _read(text, where=False)
    return list(dict.fromkeys([span.kind for span in spans] + model_kinds))


def _replaced(text: str, spans: list[Span]) -> str:
    out, last = [], 0
    for span in spans:
        out += [text[last : span.start], f"[redacted: {span.kind}]"]
        last = span.end
    out.append(text[last:])
    return "".join(out)


def redacted(text: str) -> tuple[str, list[str]]:
    """``text`` with each credential replaced by ``[redacted: <kind>]``, and the kinds."""
    spans = find_spans(text)
    return _replaced(text, spans), list(dict.fromkeys(s.kind for s in spans))


def describe() -> str:
    """The screen in one line, for `karani doctor`."""
    return f"{scanner.describe()} + {len(prose_rules.kinds())} prose rules of karani's"
