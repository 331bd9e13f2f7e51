"""The admin's remember, correct and forget pages: each a form in front of one service call."""

from collections.abc import Callable
from typing import Any

from django import forms
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
# More than this at once is a bulk job for the CLI, not a click.
MAX_FORGET_AT_ONCE = 1000


def fact_chain(memory: Memory) -> list[Memory]:
    """The fact's correction chain, oldest first, the fact itself included."""
    chain = [memory]
    while chain[0].supersedes_id is not None and len(chain) <= MAX_CHAIN:
        chain.insert(0, Memory.all_objects.get(pk=chain[0].supersedes_id))
    for _ in range(MAX_CHAIN):
        successor = Memory.all_objects.filter(supersedes_id=chain[-1].pk).first()
        if successor is None:
            break
        chain.append(successor)
    return chain


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

        def save(data: dict[str, Any]) -> HttpResponse:
            result = services.remember(**data, source=Source.TEACH, actor=_actor(request))
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

        form = RememberForm(request.POST if request.method == "POST" else None)
        context = {"title": "Remember a fact", "add": True}
        return self._form_page(request, form, "remember.html", context, save)

    def correct_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        memory = self._live_fact_or_redirect(request, object_id)
        if isinstance(memory, HttpResponse):
            return memory

        def save(data: dict[str, Any]) -> HttpResponse:
            new = services.correct(id=memory.pk, **data, actor=_actor(request))
            if new.pk == memory.pk:
                messages.warning(request, f"Fact #{memory.pk} already says that; nothing changed.")
                return self._redirect_to_fact(memory.pk)
            self.log_change(request, memory, f"Corrected by #{new.pk}: {data['reason']}")
            self.log_addition(request, new, f"Correction of #{memory.pk}: {data['reason']}")
            messages.success(request, f"Fact #{memory.pk} corrected: #{new.pk} supersedes it.")
            return self._redirect_to_fact(new.pk)

        data = request.POST if request.method == "POST" else None
        form = CorrectForm(data, initial={"text": memory.text})
        context = {"title": f"Correct fact #{memory.pk}", "original": memory}
        return self._form_page(request, form, "correct.html", context, save)

    def forget_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        memory = self._live_fact_or_redirect(request, object_id)
        if isinstance(memory, HttpResponse):
            return memory

        def save(data: dict[str, Any]) -> HttpResponse:
            services.forget(id=memory.pk, reason=data["reason"], actor=_actor(request))
            self.log_change(request, memory, f"Forgotten: {data['reason']}")
            messages.success(request, f"Fact #{memory.pk} forgotten (soft-deleted).")
            return self._redirect_to_fact(memory.pk)

        form = ForgetForm(request.POST if request.method == "POST" else None)
        context = {"title": f"Forget fact #{memory.pk}", "original": memory}
        return self._form_page(request, form, "forget.html", context, save)

    @admin.action(
        description="Forget selected facts (soft delete, with a reason)", permissions=["curate"]
    )
    def forget_selected(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
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

        def save(data: dict[str, Any]) -> None:
            forgotten: list[Memory] = []
            gone = 0
            # All or nothing: a bad reason or a crash leaves no half-forgotten selection.
            with transaction.atomic():
                for pk in ids:
                    try:
                        forgotten.append(
                            services.forget(id=pk, reason=data["reason"], actor=_actor(request))
                        )
                    except (FactAlreadyDeleted, FactNotFound):
                        gone += 1  # forgotten by someone else since the page was drawn
            for memory in forgotten:
                self.log_change(request, memory, f"Forgotten: {data['reason']}")
            extra = f" ({gone} were already deleted)" if gone else ""
            self.message_user(request, f"Forgot {len(forgotten)} facts{extra}.", messages.SUCCESS)

        form = ForgetForm(request.POST if "apply" in request.POST else None)
        context = {
            "title": f"Forget {len(ids)} facts",
            "ids": ids,
            "preview": Memory.all_objects.filter(pk__in=ids[:50]).order_by("pk"),
            "action_name": "forget_selected",
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        }
        return self._form_page(request, form, "forget_selected.html", context, save)

    def _form_page(
        self,
        request: HttpRequest,
        form: forms.Form,
        template: str,
        context: dict[str, Any],
        save: Callable[[dict[str, Any]], HttpResponse | None],
    ) -> HttpResponse | None:
        """What ``save`` answers for valid input, else the form, with any service refusal."""
        if form.is_bound and form.is_valid():
            try:
                return save(form.cleaned_data)
            except FactNotFound as exc:
                raise Http404(str(exc)) from None
            except MemoryInputError as exc:
                add_service_error(form, exc)
        return TemplateResponse(
            request,
            f"admin/memory/memory/{template}",
            {
                **self.admin_site.each_context(request),
                "opts": self.opts,
                "app_label": self.opts.app_label,
                "form": form,
                **context,
            },
        )

    def _live_fact_or_redirect(self, request: HttpRequest, object_id: str) -> Memory | HttpResponse:
        memory = self.get_object(request, unquote(object_id))
        if memory is None:
            raise Http404(f"no fact with id {object_id!r}")
        if not self.has_curate_permission(request, memory):
            raise PermissionDenied
        if not memory.is_live:
            # A corrected fact names its successor: the fact the curator meant to change.
            successor = getattr(memory, "superseded_by", None)
            how = "deleted" if successor is None else f"corrected by #{successor.pk}"
            messages.error(
                request,
                f"Fact #{memory.pk} is already {how} ({memory.delete_reason}); "
                "only live facts can be corrected or forgotten.",
            )
            return self._redirect_to_fact(memory.pk)
        return memory

    def _redirect_to_fact(self, pk: int) -> HttpResponseRedirect:
        return HttpResponseRedirect(reverse("admin:memory_memory_change", args=[quote(pk)]))
