"""What a question says besides what its words mean: when ("in March 2025") and about whom
("what did Caroline…"). Semantic recall lifts the candidates written when the question says,
and those whose subject it names: the short label a fact opens with, a speaker or a title
("Caroline: …", "Recruiter: …"), which says whom the fact is about.
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
SUBJECT_SHARE = 1.0
# A subject is a name or a short title, up to three words, before a colon at the very start.
_SUBJECT = re.compile(r"(?:[^\s:]+ ){0,2}[^\s:]+: ")
_HEAD_CHARS = 64


def subject(text: str) -> set[str]:
    """The content words of the label ``text`` opens with, if any."""
    label = _SUBJECT.match(text)
    return set(textmod.tokens(label.group(0))) if label else set()


def gains(
    hits: list[Hit],
    query: str,
    *,
    date_share: float = DATE_SHARE,
    subject_share: float = SUBJECT_SHARE,
) -> dict[int, float]:
    """What each hit gains: ``date_share`` when written in a span the query names, plus
    ``subject_share`` when the query names its subject. Nothing to gain, nothing read."""
    named, words = dates.spans(query), set(textmod.tokens(query))
    if not hits or not ((named and date_share) or (words and subject_share)):
        return {}
    rows = Memory.all_objects.filter(pk__in=[h.memory_id for h in hits]).values_list(
        "pk", "created_at", Left("text", _HEAD_CHARS)
    )
    found: dict[int, float] = {}
    for pk, created_at, head in rows:
        when = timezone.localtime(created_at).date()
        found[pk] = (date_share if any(span.holds(when) for span in named) else 0.0) + (
            subject_share if subject(head) & words else 0.0
        )
    return found
