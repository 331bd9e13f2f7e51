"""Normalisation and tokenisation shared by validation, dedupe and keyword recall."""

import hashlib
import re
import unicodedata
from functools import lru_cache

from stop_words import get_stop_words

MAX_TEXT_CHARS = 2000
MAX_TOKEN_CHARS = 64
MAX_QUERY_TOKENS = 32

_WS = re.compile(r"\s+")
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
    """NFC, whitespace collapsed to single spaces, trimmed."""
    return _WS.sub(" ", unicodedata.normalize("NFC", text)).strip()


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


def has_control_chars(text: str) -> bool:
    # Newlines and tabs are ordinary in a note; everything else in category C* (NUL, escape
    # sequences, bidi overrides, zero-width spaces, unassigned code points) is refused, except
    # a joiner doing its job (see _is_joining). A printable string holds no C* character.
    return not text.isprintable() and any(
        unicodedata.category(ch).startswith("C")
        and ch not in "\n\t"
        and not (ch in _JOINERS and _is_joining(text, i))
        for i, ch in enumerate(text)
    )


# Zero-width non-joiner and joiner: emoji sequences need ZWJ (the technologist emoji is
# woman + ZWJ + laptop), and Persian, Hindi and other scripts spell words with either.
_JOINERS = "\u200c\u200d"


def _is_joining(text: str, i: int) -> bool:
    """A joiner between two non-ASCII, non-space characters. Next to ASCII it has no job and
    would only make "re<ZWJ>mote" a different fact from "remote" that looks the same."""
    if i == 0 or i == len(text) - 1:
        return False
    before, after = text[i - 1], text[i + 1]
    return all(
        not ch.isascii() and not ch.isspace() and ch not in _JOINERS for ch in (before, after)
    )
