"""The redaction audit log, and the page that lists what the secrets screen flags in stored
texts and redacts it: the admin's `karani secrets [--redact]`, for superusers only."""

from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from memory import selectors, services
from memory.models import Redaction


@admin.register(Redaction)
class RedactionAdmin(admin.ModelAdmin):
    list_display = ("created_at", "actor", "texts", "kinds")
    fields = ("created_at", "actor", "items")
    readonly_fields = fields
    show_full_result_count = False

    @admin.display(description="texts")
    def texts(self, obj: Redaction) -> int:
        return len(obj.items)

    @admin.display(description="kinds")
    def kinds(self, obj: Redaction) -> str:
        return ", ".join(sorted({k for item in obj.items for k in item.get("kinds", [])}))

    # An audit log: written only by a redaction, never added, edited or deleted here.
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_superuser

    def get_urls(self) -> list:
        view = self.admin_site.admin_view(self.secrets_view)
        return [path("secrets/", view, name="memory_redaction_secrets"), *super().get_urls()]

    def secrets_view(self, request: HttpRequest) -> HttpResponse:
        if not (request.user.is_active and request.user.is_superuser):
            raise PermissionDenied
        if request.method == "POST":
            record = services.redact(actor=request.user.get_username())
            if record is None:
                messages.info(request, "Nothing to redact.")
            else:
                messages.success(
                    request, f"Redacted {len(record.items)} stored texts (audit #{record.pk})."
                )
            return HttpResponseRedirect(reverse("admin:memory_redaction_secrets"))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Credentials in stored texts",
            "findings": selectors.stored_credentials(),
        }
        return TemplateResponse(request, "admin/memory/redaction/secrets.html", context)
