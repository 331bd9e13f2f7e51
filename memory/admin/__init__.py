"""The memories admin: an audit view where facts are corrected or forgotten, never edited."""

import datetime
from typing import Any

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.utils import quote, unquote
from django.contrib.admin.views.main import ChangeList
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.text import Truncator

from memory import attribution
from memory.admin import secrets  # noqa: F401  (registers the redaction pages)
from memory.admin.curation import CurationViews, fact_chain
from memory.admin.filters import CompanyFilter, StatusFilter
from memory.models import Memory

STATUS_COLOURS = {"live": "#2e7d32", "superseded": "#8d6e00", "deleted": "#b00020"}
# One date format across the list, the fact's page and the CLI.
DATE_FORMAT = "%Y-%m-%d %H:%M"


def _when(moment: datetime.datetime | None) -> str:
    return "-" if moment is None else timezone.localtime(moment).strftime(DATE_FORMAT)


class LedgerPaginator(Paginator):
    """Never counts the ledger, as healthchecks' pings paginator: the list pages newer/older."""

    count = 10_000
    page_range = range(1, 10)


class LedgerChangeList(ChangeList):
    def get_filters(self, request: HttpRequest) -> Any:
        # Django builds the next year's date itself; year 9999 would overflow it (a 500).
        raw = request.GET.get(f"{self.date_hierarchy}__year")
        if raw is not None and not (raw.isdigit() and int(raw) < 9999):
            raise IncorrectLookupParameters(f"year {raw!r} is out of range")
        return super().get_filters(request)

    def get_results(self, request: HttpRequest) -> None:
        super().get_results(request)
        if attribution.enabled():
            # The page's use counts in one query, not a subquery per row of the ledger.
            counts = attribution.use_counts([m.pk for m in self.result_list])
            for m in self.result_list:
                setattr(m, attribution.USE_COUNT, counts[m.pk])


# What the list's filters and date drill-down put in the query string, and nothing else.
ALLOWED_LOOKUPS = frozenset(
    {
        "kind__exact",
        "source__exact",
        "created_at__year",
        "created_at__month",
        "created_at__day",
        "created_at__gte",
        "created_at__lt",
        StatusFilter.parameter_name,
        CompanyFilter.parameter_name,
    }
)


@admin.register(Memory)
class MemoryAdmin(CurationViews, admin.ModelAdmin):
    # Status and last seen first: what an auditor reads first stays on screen at 1,400 px.
    list_display = (
        "status_badge",
        "last_seen",
        "fact",
        "kind",
        "company_name",
        "source",
        "fit_score",
        "created",
    )
    list_display_links = ("fact",)
    list_filter = (StatusFilter, "kind", CompanyFilter, "source")
    search_fields = ("text",)
    search_help_text = "Words or a phrase from the fact's text (any case), or a fact id."
    date_hierarchy = "created_at"
    ordering = ("-id",)
    # Only indexed columns sort: anything else sorts the whole ledger per click. "uses" is
    # listed only when attribution is on (get_list_display).
    sortable_by = ("created", "uses")
    # The status column needs the successor row; one join instead of a query per row.
    list_select_related = ("superseded_by",)
    list_per_page = 50
    paginator = LedgerPaginator
    show_full_result_count = False
    # Facet counts are one COUNT per filter choice over the whole table.
    show_facets = admin.ShowFacets.NEVER
    actions = ["forget_selected"]

    fieldsets = [
        (None, {"fields": ["text", "kind", "company", "source", "fit_score", "ref"]}),
        (
            "History",
            {
                "fields": [
                    "status_badge",
                    "created",
                    "created_by",
                    "last_seen",
                    "seen_count",
                    "supersedes_link",
                    "superseded_by_link",
                ]
            },
        ),
        ("Deletion", {"fields": ["deleted", "deleted_by", "delete_reason"]}),
        (
            "Keys and index",
            {
                "classes": ["collapse"],
                "fields": ["company_key", "fact_key", "vector_id", "indexed"],
            },
        ),
    ]

    # Attribution columns show only when an app registered a provider (memory.attribution).
    def get_list_display(self, request: HttpRequest) -> Any:
        base = super().get_list_display(request)
        if not attribution.enabled():
            return base
        # Providers register after admin classes are built, so the sort is attached here.
        MemoryAdmin.uses.admin_order_field = attribution.use_expression()
        return (*base, "uses")

    def get_fieldsets(self, request: HttpRequest, obj: Memory | None = None) -> Any:
        base = super().get_fieldsets(request, obj)
        if obj is None or not attribution.enabled():
            return base
        return [*base, ("Decisions this fact steered", {"fields": ["used_in"]})]

    @admin.display(description="uses")
    def uses(self, obj: Memory) -> int:
        return getattr(obj, attribution.USE_COUNT, 0)

    @admin.display(description="used in")
    def used_in(self, obj: Memory) -> str:
        parts = []
        for summary in (attribution.summary_for(obj.pk) or {}).values():
            items = format_html_join("", "<li>{}</li>", ((i,) for i in summary.get("items", [])))
            parts.append(format_html("<p>{}</p><ul>{}</ul>", summary.get("text", ""), items))
        return format_html_join(
            "", "<div class='memory-attribution'>{}</div>", ((p,) for p in parts)
        )

    @admin.display(description="fact")
    def fact(self, obj: Memory) -> str:
        return Truncator(obj.text).chars(90)

    @admin.display(description="company", ordering="company")
    def company_name(self, obj: Memory) -> str:
        return Truncator(obj.company).chars(30) if obj.company else "-"

    @admin.display(description="created", ordering="created_at")
    def created(self, obj: Memory) -> str:
        return _when(obj.created_at)

    @admin.display(description="deleted")
    def deleted(self, obj: Memory) -> str:
        return _when(obj.deleted_at)

    @admin.display(description="indexed")
    def indexed(self, obj: Memory) -> str:
        return _when(obj.indexed_at)

    @admin.display(description="last seen (times)")
    def last_seen(self, obj: Memory) -> str:
        return format_html(
            "<span class='memory-nowrap'>{} <span title='seen count'>(×{})</span></span>",
            _when(obj.last_seen_at),
            obj.seen_count,
        )

    @admin.display(description="status")
    def status_badge(self, obj: Memory) -> str:
        status = obj.status
        return format_html(
            "<strong class='memory-status memory-status-{}' style='color: {}'>{}</strong>",
            status,
            STATUS_COLOURS[status],
            status,
        )

    @admin.display(description="supersedes")
    def supersedes_link(self, obj: Memory) -> str:
        if obj.supersedes_id is None:
            return "-"
        return self._fact_link(obj.supersedes_id)

    @admin.display(description="superseded by")
    def superseded_by_link(self, obj: Memory) -> str:
        successor = getattr(obj, "superseded_by", None)  # reverse one-to-one; None when absent
        return "-" if successor is None else self._fact_link(successor.pk)

    def _fact_link(self, pk: int) -> str:
        url = reverse("admin:memory_memory_change", args=[quote(pk)])
        return format_html("<a href='{}'>#{}</a>", url, pk)

    def get_ordering(self, request: HttpRequest) -> tuple[str, ...]:
        # In a date drill-down the created_at index serves both the range and the order.
        if any(name.startswith(f"{self.date_hierarchy}__") for name in request.GET):
            return ("-created_at", "-id")
        return self.ordering

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return LedgerChangeList

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        # Only the declared filters: ?text__regex= would be an unindexed scan no filter offers.
        return lookup in ALLOWED_LOOKUPS

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # Every row, deleted and superseded included: the admin is the audit view.
        return Memory.all_objects.order_by(*self.get_ordering(request))

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet, search_term: str
    ) -> tuple[QuerySet, bool]:
        results, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        term = search_term.strip().lstrip("#")
        # Bounded length: a 30-digit "id" would overflow the bigint column.
        if term.isdigit() and len(term) <= 18:
            results |= queryset.filter(pk=int(term))
        return results, may_have_duplicates

    def has_change_permission(self, request: HttpRequest, obj: Memory | None = None) -> bool:
        # Read-only change page; corrections go through correct_view.
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Memory | None = None) -> bool:
        # Facts are forgotten (a soft delete with a reason), never hard-deleted.
        return False

    def get_urls(self) -> list:
        wrap = self.admin_site.admin_view
        return [
            path(
                "<path:object_id>/correct/", wrap(self.correct_view), name="memory_memory_correct"
            ),
            path("<path:object_id>/forget/", wrap(self.forget_view), name="memory_memory_forget"),
            *super().get_urls(),
        ]

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        obj = self.get_object(request, unquote(object_id))
        context = dict(extra_context or {})
        if obj is not None:
            context["chain"] = fact_chain(obj)
            context["can_curate"] = obj.is_live and self.has_curate_permission(request, obj)
        return super().change_view(request, object_id, form_url, context)
