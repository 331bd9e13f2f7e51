"""How a posting (or an agent's task) becomes recall: one short query per field and per
sentence, each remembering where it came from, so a fact can say what brought it."""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise
from typing import Protocol

# The description as the model reads it is the one memory's secrets screen reads too.
from memory.selectors import plain
from memory.text import collapse, tokens, words

# Longer pieces blur what a sentence is about; more pieces cost one recall each.
MAX_PIECE_CHARS = 300
MAX_PIECES = 40
# A description with more sentences than MAX_PIECES allows is read whole by letting
# neighbouring sentences share a query up to this length (40 such queries read most of the
# longest description a posting may have, 20,000 characters).
MAX_SHARED_CHARS = 2 * MAX_PIECE_CHARS
# A heading or a fragment ("Benefits", "About us") says too little to recall by.
MIN_PIECE_TOKENS = 3
# Sentence ends, bullets and blank lines split a description into pieces.
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])|\n+|\s+[-*\u2022]\s+")
# The marker of a bullet that opens a line.
_BULLET = re.compile(r"^\s*[-*\u2022]\s+")


class PostingLike(Protocol):
    company: str | None
    title: str
    role_category: str
    location: str
    remote: str
    salary: str
    description: str
    task: str


@dataclass(frozen=True)
class Piece:
    """One recall query: what is asked, the field it came from and the posting's own words."""

    query: str
    field: str
    source: str


def sentences(text: str) -> list[str]:
    """The sentences and bullets of ``text`` (HTML read as text), whitespace collapsed, in
    order."""
    return [s for s in (collapse(_BULLET.sub("", p)) for p in _SENTENCE.split(plain(text))) if s]


def _clip(text: str) -> str:
    return text[:MAX_PIECE_CHARS].rsplit(" ", 1)[0] if len(text) > MAX_PIECE_CHARS else text


def _without_company(subject: PostingLike) -> re.Pattern | None:
    # Every one of the company's facts may name it, so its name tells them apart from nothing;
    # the block's company share already keeps room for them.
    names = words(subject.company or "")
    if not names:
        return None
    return re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b", re.IGNORECASE)


def pieces(subject: PostingLike) -> list[Piece]:
    """The subject's recall queries: title, location, pay, then each sentence of the task and
    the description, without the company's name; duplicates and fragments dropped, at most
    MAX_PIECES (neighbouring sentences of a long text sharing one)."""
    found: list[Piece] = []
    company = collapse(subject.company or "")
    title = collapse(" ".join(p for p in (subject.title, subject.role_category) if p))
    if title:
        found.append(Piece(title, "title", title))
    where = collapse(", ".join(p for p in (subject.location, subject.remote) if p))
    if where:
        found.append(Piece(where, "location", where))
    pay = collapse(subject.salary)
    if pay:
        found.append(Piece(pay, "pay", pay))
    for field, text in (("task", subject.task), ("description", subject.description)):
        for sentence in sentences(text or ""):
            clipped = _clip(sentence)
            found.append(Piece(clipped, field, clipped))
    name = _without_company(subject)
    unique: dict[str, Piece] = {}
    if company:
        # The seed's query, the company named: the company's facts are always candidates for
        # its share, even those sharing no word with this posting.
        seed = collapse(f"{company} {title}")
        unique[seed.casefold()] = Piece(seed, "company", company)
    for piece in found:
        query = collapse(name.sub(" ", piece.query)) if name else piece.query
        least = MIN_PIECE_TOKENS if piece.field == "description" else 1
        if len(tokens(query)) >= least:
            unique.setdefault(query.casefold(), Piece(query, piece.field, piece.source))
    return _fitted(unique.values())[:MAX_PIECES]


def _fitted(made: Iterable[Piece]) -> list[Piece]:
    """``made`` in at most MAX_PIECES queries where it can be: while there are too many, the
    two neighbouring sentences of one text that are shortest together become one query."""
    found = list(made)
    while len(found) > MAX_PIECES:
        pairs = [
            (len(a.query) + len(b.query), i)
            for i, (a, b) in enumerate(pairwise(found))
            if a.field == b.field and a.field in ("task", "description")
        ]
        size, i = min(pairs, default=(0, -1))
        if i < 0 or size >= MAX_SHARED_CHARS:
            break
        a, b = found[i], found[i + 1]
        found[i : i + 2] = [Piece(f"{a.query} {b.query}", a.field, f"{a.source} {b.source}")]
    return found


def matched_words(fact: str, piece: Piece, *, most: int = 3) -> list[str]:
    """The content words ``fact`` shares with the posting's own words in ``piece``."""
    own = set(tokens(fact))
    return [w for w in tokens(piece.query) if w in own][:most]


def excerpt(text: str, *, words: int = 8) -> str:
    """The first few words of ``text``, marked when cut."""
    split = text.split()
    return " ".join(split[:words]) + (" ..." if len(split) > words else "")
