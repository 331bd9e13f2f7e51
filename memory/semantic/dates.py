"""The dates a question names ("in March 2023", "on 1 February, 2023", "2024-05-08"): spaCy
finds the DATE spans (memory.semantic.entities) and dateutil reads each into a month or a day
of it; semantic recall lifts the facts written then (memory.semantic.cues)."""

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from itertools import islice

from dateutil import parser

from memory.semantic import entities

# A day named is its own and the next and previous (time zones, "yesterday"); a month named
# reaches a week either side (what happened late in March is told early in April).
DAY_SLACK = timedelta(days=1)
MONTH_SLACK = timedelta(days=7)
# A question names a date or two; a 2,000-character list of them must not cost a scan each.
MAX_SPANS = 8
# Read twice with two defaults: a field the text names comes out the same both times. Both
# are leap years, so "29 February" reads.
_DEFAULTS = (datetime(2000, 1, 1), datetime(2004, 3, 3))


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


def read(text: str) -> Span | None:
    """The month or day ``text`` (a DATE span) names, or None: a year alone, a weekday or a
    relative date ("last year") names no month."""
    try:
        first, second = (parser.parse(text, default=d, fuzzy=True) for d in _DEFAULTS)
    except (ValueError, OverflowError):
        return None
    if first.month != second.month:
        return None
    return Span(
        first.month,
        first.year if first.year == second.year else None,
        first.day if first.day == second.day else None,
    )


def spans(query: str) -> list[Span]:
    """The dates ``query`` names. Raises SemanticUnavailable when the model fails."""
    _, named = entities.question(query)
    return [span for span in map(read, islice(named, MAX_SPANS)) if span is not None]
