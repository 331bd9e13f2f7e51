"""A date hierarchy for the memories changelist that costs two index look-ups.

Django's own ``{% date_hierarchy %}`` lists the years, months or days that hold rows with a
``SELECT DISTINCT`` over the truncated dates of every matching row: a full scan of a
million-row ledger on each page load. This one reads only ``MIN`` and ``MAX`` of the column
(answered from the ``memories_created_at`` index) and offers every year, month or day between
them; a period inside the range with no facts simply shows an empty list.
"""

import calendar
import datetime
from typing import Any

from django import template
from django.contrib.admin.views.main import PAGE_VAR, ChangeList
from django.db.models import Max, Min
from django.utils import formats, timezone
from django.utils.text import capfirst

register = template.Library()


@register.inclusion_tag("admin/date_hierarchy.html")
def memory_date_hierarchy(cl: ChangeList) -> dict[str, Any]:
    field = cl.date_hierarchy
    year = cl.params.get(f"{field}__year")
    month = cl.params.get(f"{field}__month")
    day = cl.params.get(f"{field}__day")

    def link(filters: dict[str, Any]) -> str:
        return cl.get_query_string(filters, [f"{field}__"])

    # cl.queryset is already narrowed to the chosen year/month/day, so this is the span of
    # the rows on offer at the current level.
    span = cl.queryset.aggregate(first=Min(field), last=Max(field))
    if span["first"] is None:
        back = {"link": link({}), "title": "All dates"} if year else None
        return {"show": bool(back), "back": back, "choices": []}
    first, last = (timezone.localtime(span[k]) for k in ("first", "last"))
    if not year and first.year == last.year:
        year = first.year
        if first.month == last.month:
            month = first.month

    if year and month and day:
        date = datetime.date(int(year), int(month), int(day))
        return {
            "show": True,
            "back": {
                "link": link({f"{field}__year": year, f"{field}__month": month}),
                "title": capfirst(formats.date_format(date, "YEAR_MONTH_FORMAT")),
            },
            "choices": [{"title": capfirst(formats.date_format(date, "MONTH_DAY_FORMAT"))}],
        }
    if year and month:
        y, m = int(year), int(month)
        last_day = calendar.monthrange(y, m)[1]
        lo = first.day if (first.year, first.month) == (y, m) else 1
        hi = last.day if (last.year, last.month) == (y, m) else last_day
        return {
            "show": True,
            "back": {"link": link({f"{field}__year": year}), "title": str(year)},
            "choices": [
                {
                    "link": link({f"{field}__year": y, f"{field}__month": m, f"{field}__day": d}),
                    "title": capfirst(
                        formats.date_format(datetime.date(y, m, d), "MONTH_DAY_FORMAT")
                    ),
                }
                for d in range(lo, hi + 1)
            ],
        }
    if year:
        y = int(year)
        lo = first.month if first.year == y else 1
        hi = last.month if last.year == y else 12
        return {
            "show": True,
            "back": {"link": link({}), "title": "All dates"},
            "choices": [
                {
                    "link": link({f"{field}__year": y, f"{field}__month": m}),
                    "title": capfirst(
                        formats.date_format(datetime.date(y, m, 1), "YEAR_MONTH_FORMAT")
                    ),
                }
                for m in range(lo, hi + 1)
            ],
        }
    return {
        "show": True,
        "back": None,
        "choices": [
            {"link": link({f"{field}__year": str(y)}), "title": str(y)}
            for y in range(first.year, last.year + 1)
        ],
    }


@register.inclusion_tag("admin/memory/memory/pager.html")
def memory_pager(cl: ChangeList) -> dict[str, Any]:
    """Newer/older links around the current page; "older" only when this page is full."""
    page = cl.page_num
    full = len(cl.result_list) >= cl.list_per_page
    return {
        "page": page,
        "previous_link": cl.get_query_string({PAGE_VAR: page - 1}) if page > 1 else None,
        "next_link": cl.get_query_string({PAGE_VAR: page + 1}) if full else None,
    }
