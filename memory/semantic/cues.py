"""What a question says besides what its words mean: when ("in March 2025") and about whom
("what did Caroline…"). Semantic recall lifts the candidates written when the question says,
and those whose subject it names: the short label a fact opens with, a speaker or a title
("Caroline: …", "Acme recruiter: …"), which says whom the fact is about. A name the question
shares with a candidate's subject is left out of the query the dense half embeds.
"""

import re

from django.db.models.functions import Left
from django.utils import timezone

from memory import text as textmod
from memory.keyword import Hit
from memory.models import Memory
from memory.semantic import dates

# What a candidate gains, in the fused score's units (z-scores): enough to put it above the
# candidates that match the question about as well, not above a much better match ("starts on
# 1 March", written in January). Chosen by leave-one-conversation-out cross-validation on
# LoCoMo's development split (docs/semantic-index.md).
DATE_SHARE = 1.5
SUBJECT_SHARE = 2.0
# A subject is a name or a short title, up to three words, before a colon at the very start.
_SUBJECT = re.compile(r"(?:[^\s:]+ ){0,2}[^\s:]+: ")
_HEAD_CHARS = 64
# A word of the question, with its possessive ("Caroline's").
_WORD = re.compile(r"\w+(?:['’]s\b)?")


def subject(text: str) -> set[str]:
    """The content words of the label ``text`` opens with, if any."""
    label = _SUBJECT.match(text)
    return set(textmod.tokens(label.group(0))) if label else set()


def names(query: str) -> set[str]:
    """The content words ``query`` writes capitalised past its first word, its names:
    "Caroline", "Acme", not "staff" or "Where"."""
    found = {
        textmod.words(m.group(0))[0]
        for m in _WORD.finditer(query)
        if m.start() and m.group(0)[0].isupper()
    }
    return found & set(textmod.tokens(query))


def without(query: str, words: set[str]) -> str:
    """``query`` without ``words`` (a possessive "'s" with them), or ``query`` itself when no
    content word would be left."""
    if not words or set(textmod.tokens(query)) <= words:
        return query
    kept = _WORD.sub(lambda m: "" if textmod.words(m.group(0))[0] in words else m.group(0), query)
    return textmod.collapse(kept)


def about(query: str, hits: list[Hit]) -> str:
    """``query`` without the names that are the subject of one of ``hits``: whom a question
    is about is the subject lift's business, and to an embedding a name makes every fact
    labelled with it look alike."""
    named = names(query)
    if not hits or not named:
        return query
    heads = Memory.all_objects.filter(pk__in=[h.memory_id for h in hits]).values_list(
        Left("text", _HEAD_CHARS), flat=True
    )
    return without(query, set().union(*(subject(head) & named for head in heads)))


def gains(
    hits: list[Hit],
    query: str,
    *,
    date_share: float = DATE_SHARE,
    subject_share: float = SUBJECT_SHARE,
) -> dict[int, float]:
    """What each hit gains: ``date_share`` when written in a span the query names, plus
    ``subject_share`` when the query names its subject. Nothing to gain, nothing read."""
    spans, named = dates.spans(query), names(query)
    if not hits or not ((spans and date_share) or (named and subject_share)):
        return {}
    rows = Memory.all_objects.filter(pk__in=[h.memory_id for h in hits]).values_list(
        "pk", "created_at", Left("text", _HEAD_CHARS)
    )
    found: dict[int, float] = {}
    for pk, created_at, head in rows:
        when = timezone.localtime(created_at).date()
        found[pk] = (date_share if any(span.holds(when) for span in spans) else 0.0) + (
            subject_share if subject(head) & named else 0.0
        )
    return found
