"""The curation admin for the memories ledger: audit every fact, correct or forget it.

Facts are never edited in place and never hard-deleted here. The change page is read-only
and shows the fact's whole correction chain; "Correct", "Forget" and "Add" are forms that
call ``memory.services`` (correct, forget, remember) with the admin user as the actor, so
the admin adds no rules of its own. Correct and forget need the ``memory.change_memory``
permission; adding needs ``memory.add_memory``; viewing needs ``view`` or ``change``.
"""

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import quote, unquote
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.text import Truncator

from memory import services
from memory.admin_filters import CompanyFilter, StatusFilter
from memory.admin_forms import CorrectForm, ForgetForm, RememberForm, add_service_error
from memory.admin_paging import EstimatedCountPaginator
from memory.errors import FactAlreadyDeleted, FactNotFound, MemoryInputError
from memory.models import Memory, Source

# A chain longer than this is not a correction history but a loop of bots; stop walking.
MAX_CHAIN = 100
# The forget action works on an explicit id list; more than this at once is a bulk job for
# the CLI, not a click.
MAX_FORGET_AT_ONCE = 1000

STATUS_COLOURS = {"live": "#2e7d32", "superseded": "#8d6e00", "deleted": "#b00020"}


def fact_chain(memory: Memory) -> list[Memory]:
    """The fact's correction chain, oldest first, the fact itself included.

    Walks ``supersedes`` back and ``superseded_by`` forward; each step is one primary-key
    or unique-index look-up, and chains are a handful of rows long.
    """
    older: list[Memory] = []
    current = memory
    while current.supersedes_id is not None and len(older) < MAX_CHAIN:
        current = Memory.all_objects.get(pk=current.supersedes_id)
        older.append(current)
    newer: list[Memory] = []
    current = memory
    while len(newer) < MAX_CHAIN:
        successor = Memory.all_objects.filter(supersedes_id=current.pk).first()
        if successor is None:
            break
        newer.append(successor)
        current = successor
    return [*reversed(older), memory, *newer]


def _actor(request: HttpRequest) -> str:
    return request.user.get_username()


@admin.register(Memory)
class MemoryAdmin(admin.ModelAdmin):
    list_display = (
        "fact",
        "kind",
        "company",
        "source",
        "fit_score",
        "created_at",
        "last_seen",
        "status_badge",
    )
    list_display_links = ("fact",)
    list_filter = (StatusFilter, "kind", CompanyFilter, "source")
    search_fields = ("text__anycase_contains",)
    search_help_text = "Words or a phrase from the fact's text (any case), or a fact id."
    date_hierarchy = "created_at"
    ordering = ("-id",)
    # Sorting by an unindexed column means sorting a million rows per click; id and
    # created_at have indexes.
    sortable_by = ("created_at",)
    # The status column needs the successor row; one join instead of a query per row.
    list_select_related = ("superseded_by",)
    list_per_page = 50
    paginator = EstimatedCountPaginator
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
                    "created_at",
                    "created_by",
                    "last_seen_at",
                    "seen_count",
                    "supersedes_link",
                    "superseded_by_link",
                ]
            },
        ),
        ("Deletion", {"fields": ["deleted_at", "deleted_by", "delete_reason"]}),
        (
            "Keys and index",
            {
                "classes": ["collapse"],
                "fields": ["company_key", "fact_key", "vector_id", "indexed_at"],
            },
        ),
    ]
    readonly_fields = [f for _, opts in fieldsets for f in opts["fields"]]

    # --- list columns -------------------------------------------------------------------

    @admin.display(description="fact")
    def fact(self, obj: Memory) -> str:
        return Truncator(obj.text).chars(120)

    @admin.display(description="last seen (times)")
    def last_seen(self, obj: Memory) -> str:
        return format_html(
            "{} <span title='seen count'>(×{})</span>",
            obj.last_seen_at.strftime("%Y-%m-%d %H:%M"),
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
        successor = Memory.all_objects.filter(supersedes_id=obj.pk).values_list("pk", flat=True)
        pk = successor.first()
        return "-" if pk is None else self._fact_link(pk)

    def _fact_link(self, pk: int) -> str:
        url = reverse("admin:memory_memory_change", args=[quote(pk)])
        return format_html("<a href='{}'>#{}</a>", url, pk)

    # --- queryset and search ------------------------------------------------------------

    def get_ordering(self, request: HttpRequest) -> tuple[str, ...]:
        # Inside a date drill-down, newest-created first lets the created_at index serve both
        # the range and the order. With "-id" PostgreSQL walks the id index backwards and
        # filters, expecting matches to be spread evenly; they are bunched (ids grow with
        # time), so an old month meant skipping most of the table first.
        if any(name.startswith(f"{self.date_hierarchy}__") for name in request.GET):
            return ("-created_at", "-id")
        return self.ordering

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

    # --- permissions: no in-place edit, no hard delete ----------------------------------

    def has_change_permission(self, request: HttpRequest, obj: Memory | None = None) -> bool:
        # Read-only change page; corrections go through correct_view.
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Memory | None = None) -> bool:
        return False

    def has_curate_permission(self, request: HttpRequest, obj: Memory | None = None) -> bool:
        """Correct and forget: the model's change permission, used for history-keeping edits."""
        return request.user.has_perm(f"{self.opts.app_label}.change_{self.opts.model_name}")

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    # --- pages --------------------------------------------------------------------------

    def get_urls(self) -> list:
        wrap = self.admin_site.admin_view
        info = self.opts.app_label, self.opts.model_name
        return [
            path(
                "<path:object_id>/correct/",
                wrap(self.correct_view),
                name="{}_{}_correct".format(*info),
            ),
            path(
                "<path:object_id>/forget/",
                wrap(self.forget_view),
                name="{}_{}_forget".format(*info),
            ),
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

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """Teach a fact through services.remember: dedupe and secret refusal included."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = RememberForm(request.POST if request.method == "POST" else None)
        if form.is_bound and form.is_valid():
            data = form.cleaned_data
            try:
                result = services.remember(
                    text=data["text"],
                    kind=data["kind"],
                    company=data["company"] or None,
                    ref=data["ref"] or None,
                    source=Source.TEACH,
                    actor=_actor(request),
                )
            except MemoryInputError as exc:
                add_service_error(form, exc)
            else:
                if result.created:
                    self.log_addition(request, result.memory, "Remembered through the admin.")
                    messages.success(request, f"Remembered as fact #{result.id}.")
                else:
                    messages.warning(
                        request,
                        f"Already known, touched: fact #{result.id} "
                        f"(now seen {result.seen_count} times). Nothing new was written.",
                    )
                return self._redirect_to_fact(result.id)
        return self._render(
            request,
            "admin/memory/memory/remember.html",
            {"title": "Remember a fact", "form": form, "add": True},
        )

    def correct_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        memory = self._live_fact_or_redirect(request, object_id)
        if isinstance(memory, HttpResponse):
            return memory
        form = CorrectForm(
            request.POST if request.method == "POST" else None, initial={"text": memory.text}
        )
        if form.is_bound and form.is_valid():
            try:
                new = services.correct(
                    id=memory.pk,
                    text=form.cleaned_data["text"],
                    reason=form.cleaned_data["reason"],
                    actor=_actor(request),
                )
            except FactNotFound:
                raise Http404(f"no fact with id {memory.pk}") from None
            except MemoryInputError as exc:
                add_service_error(form, exc)
            else:
                reason = form.cleaned_data["reason"]
                self.log_change(request, memory, f"Corrected by #{new.pk}: {reason}")
                self.log_addition(request, new, f"Correction of #{memory.pk}: {reason}")
                messages.success(request, f"Fact #{memory.pk} corrected: #{new.pk} supersedes it.")
                return self._redirect_to_fact(new.pk)
        return self._render(
            request,
            "admin/memory/memory/correct.html",
            {"title": f"Correct fact #{memory.pk}", "form": form, "original": memory},
        )

    def forget_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        memory = self._live_fact_or_redirect(request, object_id)
        if isinstance(memory, HttpResponse):
            return memory
        form = ForgetForm(request.POST if request.method == "POST" else None)
        if form.is_bound and form.is_valid():
            reason = form.cleaned_data["reason"]
            try:
                services.forget(id=memory.pk, reason=reason, actor=_actor(request))
            except FactNotFound:
                raise Http404(f"no fact with id {memory.pk}") from None
            except MemoryInputError as exc:
                add_service_error(form, exc)
            else:
                self.log_change(request, memory, f"Forgotten: {reason}")
                messages.success(request, f"Fact #{memory.pk} forgotten (soft-deleted).")
                return self._redirect_to_fact(memory.pk)
        return self._render(
            request,
            "admin/memory/memory/forget.html",
            {"title": f"Forget fact #{memory.pk}", "form": form, "original": memory},
        )

    @admin.action(
        description="Forget selected facts (soft delete, with a reason)", permissions=["curate"]
    )
    def forget_selected(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        if not self.has_curate_permission(request):
            raise PermissionDenied
        live = queryset.filter(deleted_at__isnull=True).order_by("pk")
        ids = list(live.values_list("pk", flat=True)[: MAX_FORGET_AT_ONCE + 1])
        if len(ids) > MAX_FORGET_AT_ONCE:
            self.message_user(
                request,
                f"More than {MAX_FORGET_AT_ONCE} live facts selected; narrow the selection "
                "or use `karani forget` for bulk work.",
                messages.ERROR,
            )
            return None
        if not ids:
            self.message_user(request, "None of the selected facts is live.", messages.WARNING)
            return None
        form = ForgetForm(request.POST if "apply" in request.POST else None)
        if form.is_bound and form.is_valid():
            done = self._forget_many(request, ids, form)
            if done is not None:
                self.message_user(request, done, messages.SUCCESS)
                return None
        return self._render(
            request,
            "admin/memory/memory/forget_selected.html",
            {
                "title": f"Forget {len(ids)} facts",
                "form": form,
                "ids": ids,
                "preview": Memory.all_objects.filter(pk__in=ids[:50]).order_by("pk"),
                "action_name": "forget_selected",
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            },
        )

    def _forget_many(self, request: HttpRequest, ids: list[int], form: ForgetForm) -> str | None:
        """Forget every id in one transaction; a message, or None with the error on the form."""
        reason = form.cleaned_data["reason"]
        forgotten: list[Memory] = []
        gone = 0
        try:
            # All or nothing: a bad reason or a crash leaves no half-forgotten selection.
            with transaction.atomic():
                for pk in ids:
                    try:
                        forgotten.append(
                            services.forget(id=pk, reason=reason, actor=_actor(request))
                        )
                    except (FactAlreadyDeleted, FactNotFound):
                        gone += 1  # forgotten by someone else since the page was drawn
        except MemoryInputError as exc:
            add_service_error(form, exc)
            return None
        for memory in forgotten:
            self.log_change(request, memory, f"Forgotten: {reason}")
        extra = f" ({gone} were already deleted)" if gone else ""
        return f"Forgot {len(forgotten)} facts{extra}."

    # --- helpers ------------------------------------------------------------------------

    def _live_fact_or_redirect(self, request: HttpRequest, object_id: str) -> Memory | HttpResponse:
        memory = self.get_object(request, unquote(object_id))
        if memory is None:
            raise Http404(f"no fact with id {object_id!r}")
        if not self.has_curate_permission(request, memory):
            raise PermissionDenied
        if not memory.is_live:
            messages.error(
                request,
                f"Fact #{memory.pk} is already deleted ({memory.delete_reason}); "
                "only live facts can be corrected or forgotten.",
            )
            return self._redirect_to_fact(memory.pk)
        return memory

    def _redirect_to_fact(self, pk: int) -> HttpResponseRedirect:
        return HttpResponseRedirect(reverse("admin:memory_memory_change", args=[quote(pk)]))

    def _render(self, request: HttpRequest, template: str, context: dict[str, Any]) -> HttpResponse:
        return TemplateResponse(
            request,
            template,
            {
                **self.admin_site.each_context(request),
                "opts": self.opts,
                "app_label": self.opts.app_label,
                **context,
            },
        )
