"""What a question says besides what its words mean: when ("in March 2025") and about whom
("what did Caroline…"). Semantic recall lifts the candidates written when the question says,
and those whose subject it names: the short label a fact opens with, a speaker or a title
("Caroline: …", "Recruiter: …"), which says whom the fact is about.
"""

import re
from datetime import date, datetime

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


def _local_date(moment: datetime) -> date:
    return timezone.localtime(moment).date() if timezone.is_aware(moment) else moment.date()


def lift(
    hits: list[Hit],
    query: str,
    *,
    date_share: float = DATE_SHARE,
    subject_share: float = SUBJECT_SHARE,
) -> list[Hit]:
    """``hits`` plus ``date_share`` for each fact written in a span the query names and
    ``subject_share`` for each whose subject it names, best first (ties to the newer fact)."""
    named, words = dates.spans(query), set(textmod.tokens(query))
    if not hits or not ((named and date_share) or (words and subject_share)):
        return hits
    rows = Memory.all_objects.filter(pk__in=[h.memory_id for h in hits]).values_list(
        "pk", "created_at", Left("text", _HEAD_CHARS)
    )
    gains: dict[int, float] = {}
    for pk, created_at, head in rows:
        when = _local_date(created_at)
        gains[pk] = (date_share if any(span.holds(when) for span in named) else 0.0) + (
            subject_share if subject(head) & words else 0.0
        )
    scores = {h.memory_id: h.score + gains.get(h.memory_id, 0.0) for h in hits}
    order = sorted(scores.items(), key=lambda kv: (-kv[1], -kv[0]))
    return [Hit(memory_id=pk, score=score) for pk, score in order]
