"""A changelist paginator that never runs COUNT(*) over the memories table.

Django's admin asks its paginator for ``count`` on every page load; on a million-row ledger
that is a full scan per click. Instead:

- on PostgreSQL, the planner's row estimate for the filtered query (``EXPLAIN``) answers when
  it says "many" — the page shows "about N";
- otherwise (small results, or SQLite, which has no estimates) the paginator reads at most
  ``exact_up_to + 1`` ids: exact below the cap, "more than N" above it.

Either way the page itself is a LIMIT/OFFSET slice, as usual.
"""

import json
from functools import cached_property
from typing import Any

from django.core.paginator import EmptyPage, PageNotAnInteger, Paginator
from django.db import connections
from django.db.models import QuerySet


def planner_estimate(queryset: QuerySet) -> int | None:
    """PostgreSQL's estimated row count for a queryset, or None on other databases."""
    connection = connections[queryset.db]
    if connection.vendor != "postgresql":
        return None
    sql, params = queryset.order_by().query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}", params)
        raw = cursor.fetchone()[0]
    plan = json.loads(raw) if isinstance(raw, str) else raw
    return int(plan[0]["Plan"]["Plan Rows"])


class EstimatedCountPaginator(Paginator):
    # Small enough that the capped read stays a few milliseconds even on a selective filter.
    exact_up_to = 1_000

    def __init__(self, object_list: QuerySet, per_page: int, *args: Any, **kwargs: Any) -> None:
        super().__init__(object_list, per_page, *args, **kwargs)
        # True when ``count`` is a lower bound or an estimate rather than the exact size.
        self.estimated = False
        # What the page shows for the count: "1,234", "about 1,000,000", "more than 10,000".
        self.count_label = ""

    @cached_property
    def count(self) -> int:
        estimate = planner_estimate(self.object_list)
        if estimate is not None and estimate > self.exact_up_to:
            self.estimated = True
            self.count_label = f"about {estimate:,}"
            return estimate
        # Unordered: any cap+1 matching ids will do, so the scan stops at the first ones found.
        ids = self.object_list.order_by().values_list("pk", flat=True)[: self.exact_up_to + 1]
        found = len(ids)
        if found > self.exact_up_to:
            self.estimated = True
            self.count_label = f"more than {self.exact_up_to:,}"
        else:
            self.count_label = f"{found:,}"
        return found

    def validate_number(self, number: Any) -> int:
        self.count  # noqa: B018 -- settles self.estimated before it is read
        if not self.estimated:
            return super().validate_number(number)
        # With an estimate the last page is not known exactly; any positive page may be
        # asked for, and one past the real end is simply empty.
        try:
            number = int(number)
        except (TypeError, ValueError):
            raise PageNotAnInteger("That page number is not an integer") from None
        if number < 1:
            raise EmptyPage("That page number is less than 1")
        return number

    def page(self, number: Any) -> Any:
        number = self.validate_number(number)
        if not self.estimated:
            return super().page(number)
        # Paginator.page clips the slice at ``count``; an estimate must not cut rows off.
        bottom = (number - 1) * self.per_page
        return self._get_page(self.object_list[bottom : bottom + self.per_page], number, self)
