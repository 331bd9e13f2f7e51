"""Dates a question names ("in March 2023", "on 1 February, 2023", "2024-05-08"), and the lift
semantic recall gives the facts written then: asked what happened in March, the facts written
in March come first among those that match the question's words or meaning.
"""

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.utils import timezone

from memory.keyword import Hit
from memory.models import Memory

# What a fact written in a named span gains, in the fused score's units (z-scores): enough to
# put it above the candidates that match the question about as well, not above a much better
# match ("starts on 1 March", written in January). docs/semantic-index.md has the choice.
DATE_SHARE = 1.5
# A day named is its own and the next and previous (time zones, "yesterday"); a month named
# reaches a week either side (what happened late in March is told early in April).
DAY_SLACK = timedelta(days=1)
MONTH_SLACK = timedelta(days=7)

_MONTHS = [
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
]  # fmt: skip
_ABBREVIATIONS = {name[:3]: n for n, name in enumerate(_MONTHS, start=1)} | {"sept": 9}
_MONTH = re.compile(r"\b(" + "|".join(_MONTHS + list(_ABBREVIATIONS)) + r")\b\.?", re.IGNORECASE)
_DAY_BEFORE = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?\s+$", re.IGNORECASE)
_DAY_AFTER = re.compile(r"^\s+(\d{1,2})(?:st|nd|rd|th)?\b", re.IGNORECASE)
_YEAR_AFTER = re.compile(r"^,?\s+(\d{4})\b")
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")


@dataclass(frozen=True)
class Span:
    """A month, or a day of it, in a given year or in any year."""

    month: int
    year: int | None = None
    day: int | None = None

    def _bounds(self, year: int) -> tuple[date, date]:
        if self.day is not None:
            day = date(year, self.month, self.day)
            return day - DAY_SLACK, day + DAY_SLACK
        first = date(year, self.month, 1)
        last = (first.replace(day=28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)
        return first - MONTH_SLACK, last + MONTH_SLACK

    def holds(self, when: date) -> bool:
        years = [self.year] if self.year is not None else [when.year - 1, when.year, when.year + 1]
        for year in years:
            try:
                start, end = self._bounds(year)
            except ValueError:  # 29 February of a year without one
                continue
            if start <= when <= end:
                return True
        return False


def _valid(span: Span) -> bool:
    try:
        date(span.year or 2000, span.month, span.day or 1)  # 2000 was a leap year
    except ValueError:
        return False
    return True


def spans(query: str) -> list[Span]:
    """The dates ``query`` names. A month with a day or a year is a date in any case ("may
    2023"); a bare month only capitalised and not opening the question ("May I…" is a verb),
    and an abbreviation never alone ("Mar" is too often a word)."""
    found = [Span(int(m[2]), int(m[1]), int(m[3])) for m in _ISO.finditer(query)]
    found = [span for span in found if _valid(span)]
    for match in _MONTH.finditer(query):
        name = match.group(1)
        key = name.lower()
        month = _MONTHS.index(key) + 1 if key in _MONTHS else _ABBREVIATIONS[key]
        before, after = query[: match.start()], query[match.end() :]
        day = _DAY_BEFORE.search(before)
        day_after = None if day else _DAY_AFTER.match(after)
        year = _YEAR_AFTER.match(after[day_after.end() :] if day_after else after)
        day = day or day_after
        bare = day is None and year is None
        if bare and (key not in _MONTHS or not name[0].isupper() or not before.strip()):
            continue
        span = Span(month, int(year.group(1)) if year else None, int(day.group(1)) if day else None)
        if _valid(span):
            found.append(span)
    return found


def _local_date(moment: datetime) -> date:
    return timezone.localtime(moment).date() if timezone.is_aware(moment) else moment.date()


def prefer(hits: list[Hit], named: list[Span], *, share: float = DATE_SHARE) -> list[Hit]:
    """``hits`` with ``share`` added to each fact written in a named span, best first (ties to
    the newer fact); unchanged when nothing is named."""
    if not named or not hits:
        return hits
    written = dict(
        Memory.all_objects.filter(pk__in=[h.memory_id for h in hits]).values_list(
            "pk", "created_at"
        )
    )

    def lift(pk: int) -> float:
        when = written.get(pk)
        return share if when and any(s.holds(_local_date(when)) for s in named) else 0.0

    scores = {h.memory_id: h.score + lift(h.memory_id) for h in hits}
    order = sorted(scores.items(), key=lambda kv: (-kv[1], -kv[0]))
    return [Hit(memory_id=pk, score=score) for pk, score in order]
