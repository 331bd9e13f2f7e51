"""The admin's remember, correct and forget pages: each a form in front of one service call."""

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import quote, unquote
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from memory import services
from memory.admin.forms import CorrectForm, ForgetForm, RememberForm, add_service_error
from memory.errors import FactAlreadyDeleted, FactNotFound, MemoryInputError
from memory.models import Memory, Source

# A chain longer than this is not a correction history but a loop of bots; stop walking.
MAX_CHAIN = 100
# The forget action works on an explicit id list; more than this at once is a bulk job for
# the CLI, not a click.
MAX_FORGET_AT_ONCE = 1000


def fact_chain(memory: Memory) -> list[Memory]:
    """The fact's correction chain, oldest first, the fact itself included."""
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


class CurationViews:
    """Mixed into MemoryAdmin: the views behind Add, Correct and Forget."""

    def has_curate_permission(self, request: HttpRequest, obj: Memory | None = None) -> bool:
        # Correct and forget keep history, so the change permission is what they need.
        return request.user.has_perm(f"{self.opts.app_label}.change_{self.opts.model_name}")

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
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
        # A message, or None with the error put on the form.
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
