from collections.abc import Callable

from django.apps import apps
from django.http import HttpRequest, JsonResponse
from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.permissions import AllowAny

from memory.api import views
from memory.api.exceptions import error_body


def _in_the_api(view: Callable) -> Callable:
    """Marks a view that is not a memory.api.base.ApiView: Django's 400 and 500 answer there in
    the API's shape too (memory.api.exceptions)."""
    view.karani_api = True  # type: ignore[attr-defined]
    return view


@_in_the_api
def not_found(request: HttpRequest, *args: object) -> JsonResponse:
    """Any other path under the API's prefix: its JSON 404 instead of Django's HTML page."""
    return JsonResponse(error_body("not_found", "no such API endpoint"), status=404)


# The schema and its docs describe the API, they do not expose data: readable without a token.
public = {"authentication_classes": [], "permission_classes": [AllowAny]}
SCHEMA = "api-schema"

urlpatterns = [
    path("memories/recall", views.RecallApi.as_view(), name="memories-recall"),
    path("memories", views.MemoryListApi.as_view(), name="memories"),
    path("memories/<str:pk>", views.MemoryDetailApi.as_view(), name="memory-detail"),
    path("memories/<str:pk>/correct", views.MemoryCorrectApi.as_view(), name="memory-correct"),
]
# The schema and its docs need drf-spectacular set up as its docs say (the app installed,
# its DEFAULT_SCHEMA_CLASS); memory.checks warns when the schema class is missing.
if apps.is_installed("drf_spectacular"):
    urlpatterns += [
        path("schema/", _in_the_api(SpectacularAPIView.as_view(**public)), name=SCHEMA),
        path(
            "docs/",
            _in_the_api(SpectacularSwaggerView.as_view(url_name=SCHEMA, **public)),
            name="api-docs",
        ),
        path(
            "redoc/",
            _in_the_api(SpectacularRedocView.as_view(url_name=SCHEMA, **public)),
            name="api-redoc",
        ),
    ]
urlpatterns.append(re_path(r"^.*$", not_found))
