"""The dates a question names ("in March 2023", "on 1 February, 2023", "2024-05-08"): semantic
recall lifts the facts written then (memory.semantic.cues)."""

import re
from dataclasses import dataclass
from datetime import date, timedelta
from itertools import islice

# A day named is its own and the next and previous (time zones, "yesterday"); a month named
# reaches a week either side (what happened late in March is told early in April).
DAY_SLACK = timedelta(days=1)
MONTH_SLACK = timedelta(days=7)
# A question names a date or two; a 2,000-character list of them must not cost a scan each.
MAX_MONTHS = 8

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
    for match in islice(_MONTH.finditer(query), MAX_MONTHS):
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
