"""Changelist filters for the memories admin that stay cheap on a million rows.

None of them asks the database for its choices: status has three fixed values, and company
is a text box (a DISTINCT over every company in the ledger would be a full scan on each page
load, and the list would be unusable past a few hundred companies anyway).
"""

from collections.abc import Iterator
from typing import Any

from django.contrib import admin
from django.contrib.admin.views.main import PAGE_VAR, ChangeList
from django.db.models import QuerySet
from django.db.models.lookups import IContains
from django.http import HttpRequest

from memory import text as textmod
from memory.models import Memory

# The default is "all": auditors see deleted and superseded rows without having to ask for
# them, and each row's status column says which is which.
STATUS_LIVE = "live"
STATUS_DELETED = "deleted"
STATUS_SUPERSEDED = "superseded"


class StatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [
            (STATUS_LIVE, "Live"),
            (STATUS_DELETED, "Deleted (forgotten or superseded)"),
            (STATUS_SUPERSEDED, "Superseded by a correction"),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if value == STATUS_LIVE:
            return queryset.filter(deleted_at__isnull=True)
        if value == STATUS_DELETED:
            return queryset.filter(deleted_at__isnull=False)
        if value == STATUS_SUPERSEDED:
            return queryset.filter(deleted_at__isnull=False, superseded_by__isnull=False)
        return queryset


GLOBAL_COMPANY = "-"


class CompanyFilter(admin.SimpleListFilter):
    """Exact company match, typed in a box; matched on the normalised key like recall does.

    "Northwind Robotics" and " northwind  ROBOTICS" find the same rows; a single "-" lists
    global facts (no company).
    """

    title = "company"
    parameter_name = "company"
    template = "admin/memory/memory/company_filter.html"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        # Django hides a filter without lookups; the one entry is never rendered as a link.
        return [(GLOBAL_COMPANY, "global facts (no company)")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if value is None or not value.strip():
            return queryset
        if value.strip() == GLOBAL_COMPANY:
            return queryset.filter(company_key__isnull=True)
        return queryset.filter(company_key=textmod.company_key(value))

    def choices(self, changelist: ChangeList) -> Iterator[dict[str, Any]]:
        # The template renders one form: the current value plus every other active parameter
        # as hidden inputs, so typing a company keeps the other filters and the search.
        hidden = [
            (name, value)
            for name, values in changelist.filter_params.items()
            if name not in {self.parameter_name, PAGE_VAR}
            for value in values
        ]
        yield {
            "value": self.value() or "",
            "hidden": hidden,
            "selected": self.value() is not None,
            "clear_link": changelist.get_query_string(remove=[self.parameter_name]),
            "global_link": changelist.get_query_string({self.parameter_name: GLOBAL_COMPANY}),
            "display": "All",
        }


class AnyCaseContains(IContains):
    """``icontains`` that PostgreSQL can plan: ``text ILIKE '%word%'``.

    Django's ``icontains`` compiles to ``UPPER(text) LIKE UPPER('%word%')``; the planner has
    no statistics for ``UPPER(text)`` and guesses a handful of matches, so for a common word
    it scans and sorts the whole table instead of walking the id index backwards until one
    page of matches is found. ``ILIKE`` on the column itself uses its statistics. Other
    databases keep ``icontains``.
    """

    lookup_name = "anycase_contains"

    def get_rhs_op(self, connection: Any, rhs: str) -> str:
        # Non-PostgreSQL databases: icontains' own operator (SQLite: LIKE ... ESCAPE '\').
        return connection.operators["icontains"] % rhs

    def as_postgresql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        lhs_sql, params = self.process_lhs(compiler, connection)
        rhs_sql, rhs_params = self.process_rhs(compiler, connection)
        return f"{lhs_sql} ILIKE {rhs_sql}", [*params, *rhs_params]


# On this one field only; the admin's search_fields name it as text__anycase_contains.
Memory._meta.get_field("text").register_lookup(AnyCaseContains)
