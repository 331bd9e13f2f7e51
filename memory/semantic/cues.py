"""What a question says besides what its words mean: when ("in March 2025") and about whom
("what did Caroline…"). Semantic recall lifts the candidates written when the question says
(memory.semantic.dates), and those about whom it names: the names are the question's named
entities (spaCy, memory.semantic.entities), and a fact is about the name it opens with
("Caroline: …", "Northwind's recruiter said…"). A name the question shares with a candidate's
subject is left out of the query the dense half embeds.
"""

import re
from typing import Any

from django.db.models.functions import Left
from django.utils import timezone

from memory import text as textmod
from memory.keyword import Hit
from memory.models import Memory
from memory.semantic import dates, entities, tuning

# A word of the question, with its possessive ("Caroline's").
_WORD = re.compile(r"\w+(?:['’]s\b)?")
# Enough of a fact's text to hold its first content word.
_HEAD_CHARS = 64


def subject(text: str) -> set[str]:
    """The name ``text`` opens with, as a content word (empty when it opens with none)."""
    return set(textmod.tokens(text)[:1])


def names(query: str) -> set[str]:
    """The content words of the named entities in ``query``: "Caroline", "Acme", not "staff"
    or "Where". Raises SemanticUnavailable when the model fails."""
    named, _ = entities.question(query)
    return {word for text in named for word in textmod.tokens(text)}


def without(query: str, words: set[str]) -> str:
    """``query`` without ``words`` (a possessive "'s" with them), or ``query`` itself when no
    content word would be left."""
    if not words or set(textmod.tokens(query)) <= words:
        return query
    kept = _WORD.sub(lambda m: "" if textmod.words(m.group(0))[0] in words else m.group(0), query)
    return textmod.collapse(kept)


def _rows(hits: list[Hit], *fields: Any) -> Any:
    return Memory.all_objects.filter(pk__in=[h.memory_id for h in hits]).values_list(
        *fields, Left("text", _HEAD_CHARS)
    )


def about(query: str, hits: list[Hit]) -> str:
    """``query`` without the names that are the subject of one of ``hits``: whom a question
    is about is the subject lift's business, and to an embedding a name makes every fact
    about it look alike."""
    named = names(query)
    if not hits or not named:
        return query
    return without(query, set().union(*(subject(head) & named for (head,) in _rows(hits))))


def gains(
    hits: list[Hit],
    query: str,
    *,
    date_share: float = tuning.DATE_SHARE,
    subject_share: float = tuning.SUBJECT_SHARE,
) -> dict[int, float]:
    """What each hit gains: ``date_share`` when written in a span the query names, plus
    ``subject_share`` when the query names its subject. Nothing to gain, nothing read."""
    spans, named = dates.spans(query), names(query)
    if not hits or not ((spans and date_share) or (named and subject_share)):
        return {}
    found: dict[int, float] = {}
    for pk, created_at, head in _rows(hits, "pk", "created_at"):
        when = timezone.localtime(created_at).date()
        found[pk] = (date_share if any(span.holds(when) for span in spans) else 0.0) + (
            subject_share if subject(head) & named else 0.0
        )
    return found
