"""The API's schema and browsable docs, set up by the apps themselves: karani's title and
description, and Swagger UI and Redoc from drf-spectacular-sidecar's local files when that app
is installed. A key the project's own SPECTACULAR_SETTINGS names wins over karani's."""

from typing import Any

from django.apps import apps
from django.conf import settings
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerView,
    _get_sidecar_url,
)
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

DEFAULTS: dict[str, Any] = {
    "TITLE": "karani memory API",
    "DESCRIPTION": "Remember, recall, list, correct and forget facts in karani's ledger; "
    "record and read qualify's decisions, outcomes and funnel.",
    "VERSION": "1",
}


def _named_by_project(key: str) -> bool:
    return key in getattr(settings, "SPECTACULAR_SETTINGS", {})


def _ours() -> dict[str, Any]:
    return {key: value for key, value in DEFAULTS.items() if not _named_by_project(key)}


def _local(key: str) -> bool:
    """Whether ``key``'s asset comes from the sidecar's static files rather than a CDN."""
    return not _named_by_project(key) and apps.is_installed("drf_spectacular_sidecar")


class _Public:
    # The schema and its docs describe the API, they do not expose data: no token needed.
    authentication_classes: list = []
    permission_classes = [AllowAny]
    # Django's 400 and 500 answer here in the API's shape (memory.api.exceptions).
    karani_api = True


class SchemaView(_Public, SpectacularAPIView):
    @property
    def custom_settings(self) -> dict[str, Any]:  # type: ignore[override]
        return _ours()

    # The schema describes karani's endpoints, not itself.
    @extend_schema(exclude=True)
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


class SwaggerView(_Public, SpectacularSwaggerView):
    @property
    def title(self) -> str:  # type: ignore[override]
        return _ours().get("TITLE") or settings.SPECTACULAR_SETTINGS["TITLE"]

    @staticmethod
    def _swagger_ui_resource(filename: str) -> str:
        if _local("SWAGGER_UI_DIST"):
            return _get_sidecar_url(f"swagger-ui-dist/{filename}")
        return SpectacularSwaggerView._swagger_ui_resource(filename)

    @staticmethod
    def _swagger_ui_favicon() -> str:
        if _local("SWAGGER_UI_FAVICON_HREF"):
            return _get_sidecar_url("swagger-ui-dist/favicon-32x32.png")
        return SpectacularSwaggerView._swagger_ui_favicon()


class RedocView(_Public, SpectacularRedocView):
    @property
    def title(self) -> str:  # type: ignore[override]
        return _ours().get("TITLE") or settings.SPECTACULAR_SETTINGS["TITLE"]

    @staticmethod
    def _redoc_standalone() -> str:
        if _local("REDOC_DIST"):
            return _get_sidecar_url("redoc/bundles/redoc.standalone.js")
        return SpectacularRedocView._redoc_standalone()
