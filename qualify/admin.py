"""Admin: postings, companies and the profile are editable; verdicts and outcomes are
events and read-only. Delete means soft delete everywhere (no row is ever removed)."""

from typing import Any

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.core.validators import ProhibitNullCharactersValidator
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from memory import selectors
from qualify import context, funnel, funnel_chart, standing
from qualify.models import (
    Arm,
    Company,
    FactPart,
    FunnelReport,
    Outcome,
    Posting,
    Profile,
    Qualification,
    ReplayAnswer,
)
from qualify.text import PolicedModelForm


class StatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("deleted", "deleted"), ("all", "all")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        # The default is live rows.
        return {"all": queryset, "deleted": queryset.deleted()}.get(self.value(), queryset.alive())


class SoftDeleteAdmin(admin.ModelAdmin):
    list_filter: tuple[Any, ...] = (StatusFilter,)
    form = PolicedModelForm

    def formfield_for_dbfield(
        self, db_field: models.Field, request: HttpRequest, **kwargs: Any
    ) -> Any:
        # A refused character is the text policy's to name (PolicedModelForm), in the one
        # message every door gives, not Django's own "Null characters" line.
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if field is not None:
            field.validators = [
                v for v in field.validators if not isinstance(v, ProhibitNullCharactersValidator)
            ]
        return field

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> tuple:
        # Soft delete removes nothing: no cascade to list, and PROTECT'ed events do not block.
        objs = list(objs)
        return [str(o) for o in objs], {self.model._meta.verbose_name_plural: len(objs)}, set(), []

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        obj.soft_delete()

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        queryset.soft_delete()


@admin.register(Company)
class CompanyAdmin(SoftDeleteAdmin):
    list_display = ("name", "created_at", "deleted_at")
    search_fields = ("name",)


@admin.register(Posting)
class PostingAdmin(SoftDeleteAdmin):
    list_display = ("id", "title", "company", "role_category", "remote", "created_at")
    list_select_related = ("company",)
    list_filter = (StatusFilter, "remote")
    search_fields = ("title", "company__name", "role_category")
    autocomplete_fields = ("company",)
    # A URL typed without a scheme is a web page: https, as Django 6 will assume.
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}


@admin.register(Profile)
class ProfileAdmin(SoftDeleteAdmin):
    list_display = ("__str__", "updated_at")
    readonly_fields = ("updated_at",)


class ReadOnlyEventAdmin(admin.ModelAdmin):
    """Events are history: visible, never added, changed or deleted here."""

    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def _fact_link(pk: int) -> str:
    return format_html(
        '<a href="{}">fact {}</a>', reverse("admin:memory_memory_change", args=[pk]), pk
    )


# The decision page's two parts, in the order the prompt shows them.
PART_TITLES = {
    FactPart.STANDING: "Standing preferences (shown whatever the posting)",
    FactPart.BLOCK: "Ranked block",
}

# What each arm means, in words a reader of one decision's page needs (qualify.holdout).
ARM_WORDS = {
    Arm.MEMORY: "memory: judged with remembered facts (the randomised memory arm)",
    Arm.HOLDOUT: "holdout: judged without memory, to measure what memory changes",
    Arm.NONE: "not randomised: the holdout was off, memory was off, or it predates the holdout",
}


@admin.register(Qualification)
class QualificationAdmin(ReadOnlyEventAdmin):
    list_display = (
        "id",
        "posting",
        "verdict",
        "fit_score",
        "prompt_version",
        "mode",
        "arm",
        "fact_count",
        "latency",
        "error",
        "created_at",
    )
    list_filter = ("verdict", "prompt_version", "mode", "arm")
    list_select_related = ("posting__company",)
    search_fields = ("posting__title", "posting__company__name")
    # Every field, the model's own reasons included (for audit: memory never gets them).
    readonly_fields = (
        "created_at",
        "deleted_at",
        "memory_block",
        "arm_words",
        "fact_links",
        "latency",
    )
    # On a decision's page these fields read as words and links instead of raw values.
    SHOWN_AS = {"arm": "arm_words", "fact_ids": "fact_links", "latency_ms": "latency"}

    def get_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        shown = [self.SHOWN_AS.get(name, name) for name in super().get_fields(request, obj)]
        fields = list(dict.fromkeys(shown))
        if obj is not None and not obj.latency_ms:
            fields.remove("latency")  # nothing was measured: a decision recorded by the API
        return fields

    @admin.display(description="arm")
    def arm_words(self, obj: Qualification) -> str:
        return ARM_WORDS.get(obj.arm, obj.arm)

    @admin.display(description="facts")
    def fact_links(self, obj: Qualification) -> str:
        if not obj.fact_ids:
            return "(none)"
        return format_html_join(", ", "{}", ((_fact_link(pk),) for pk in obj.fact_ids))

    # 0 is what a decision recorded without a model call (the API, MCP) stores: not measured.
    @admin.display(description="latency", ordering="latency_ms")
    def latency(self, obj: Qualification) -> str | None:
        return f"{obj.latency_ms:,} ms" if obj.latency_ms else None

    @admin.display(description="memory block (the facts the model saw, and why)")
    def memory_block(self, obj: Qualification) -> str:
        rows = list(obj.decision_facts.order_by("id").values_list("memory_id", "why", "part"))
        if not rows:
            return "(no remembered facts)"
        ids = [memory_id for memory_id, _, _ in rows]
        # Deleted facts too: the block is history, as the model saw it.
        found = selectors.list_facts(status="all").filter(pk__in=ids)
        texts = dict(found.values_list("id", "text"))
        parts = []
        for part, title in PART_TITLES.items():
            lines = [(pk, why) for pk, why, p in rows if p == part]
            if not lines:
                continue
            # Lines, not a list: the admin's aligned forms indent a <ul> past the field's value.
            if part == FactPart.STANDING:
                page = reverse("admin:qualify_standing")
                title = format_html('{} (<a href="{}">the standing part now</a>)', title, page)
            parts.append(format_html("<div><strong>{}</strong></div>", title))
            parts.append(
                format_html_join(
                    "",
                    "<div>[{}] {} <em>(why: {})</em></div>",
                    (
                        (_fact_link(pk), texts.get(pk, "(fact not found)"), why or "not recorded")
                        for pk, why in lines
                    ),
                )
            )
        return mark_safe("".join(parts))  # each piece escaped by format_html above

    def get_urls(self) -> list:
        view = self.admin_site.admin_view(self.standing_view)
        return [path("standing/", view, name="qualify_standing"), *super().get_urls()]

    def standing_view(self, request: HttpRequest) -> HttpResponse:
        """The standing preferences as the model will see them before any posting ranks
        them (hard constraints first, then the shorter), the budget used and what it left
        out."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        part, _ = context.standing({})
        text = standing.render(part)
        shown = {f.id for f in part.facts}
        left_out = [f for f in selectors.standing_preferences() if f.id not in shown]
        extra = {
            **self.admin_site.each_context(request),
            "title": "Standing preferences",
            "opts": self.model._meta,
            "text": text,
            "used": len(text),
            "budget": part.budget,
            "shown": [(_fact_link(f.id), f.text) for f in part.facts],
            "left_out": [(_fact_link(f.id), f.text) for f in left_out],
        }
        return TemplateResponse(request, "admin/qualify/standing.html", extra)


@admin.register(Outcome)
class OutcomeAdmin(ReadOnlyEventAdmin):
    list_display = ("id", "posting", "stage", "occurred_at", "note", "qualification")
    list_filter = ("stage",)
    list_select_related = ("posting__company",)


@admin.register(ReplayAnswer)
class ReplayAnswerAdmin(ReadOnlyEventAdmin):
    """`karani replay`'s evaluation records: never part of the live ledger."""

    list_display = (
        "id",
        "run",
        "posting",
        "prompt_version",
        "verdict",
        "fit_score",
        "progressed",
        "error",
        "memory_error",
    )
    list_filter = ("prompt_version", "verdict", "progressed")
    list_select_related = ("run", "posting__company")


@admin.register(FunnelReport)
class FunnelReportAdmin(ReadOnlyEventAdmin):
    """The funnel chart, in place of a change list."""

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.has_perm("qualify.view_qualification")

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        result = funnel.compute()
        svg = funnel_chart.render(result, fmt="svg").decode("utf-8")
        context = {
            **self.admin_site.each_context(request),
            "title": "Funnel chart",
            "opts": self.model._meta,
            # Drawn by matplotlib from our own counts and version names: safe to inline.
            "chart_svg": mark_safe(svg[svg.index("<svg") :]),
            "steps": funnel.STEPS,
            "rows": [
                (r, [(n, None if rate is None else rate * 100) for n, rate in r.cells])
                for r in result.versions
            ],
            "arms": result.arms,
            "arm_steps": [s.to_dict() for s in result.arms.steps],
            "min_sample": funnel.MIN_SAMPLE,
            "not_counted": [
                (result.not_counted[key], what) for key, what in funnel.NOT_COUNTED.items()
            ],
        }
        return TemplateResponse(request, "admin/qualify/funnel.html", context)
