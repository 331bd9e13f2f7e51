"""Changelist filters that never ask the database for their choices (no DISTINCT scans)."""

from collections.abc import Iterator
from typing import Any

from django.contrib import admin
from django.contrib.admin.views.main import PAGE_VAR, ChangeList
from django.db.models import QuerySet
from django.http import HttpRequest

from memory import text as textmod

# The default is "all": auditors see deleted and superseded rows without asking for them.


class StatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [
            ("live", "Live"),
            ("deleted", "Deleted (forgotten or superseded)"),
            ("superseded", "Superseded by a correction"),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if value == "live":
            return queryset.filter(deleted_at__isnull=True)
        if value == "deleted":
            return queryset.filter(deleted_at__isnull=False)
        if value == "superseded":
            return queryset.filter(deleted_at__isnull=False, superseded_by__isnull=False)
        return queryset


GLOBAL_COMPANY = "-"


class CompanyFilter(admin.SimpleListFilter):
    """A company typed in a box, matched on its normalised key as recall does; "-" is global."""

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
