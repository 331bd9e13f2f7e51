from collections.abc import Callable

from django.apps import apps
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404, path, re_path, resolve
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.permissions import AllowAny

from memory.api import views
from memory.api.exceptions import error_body


def _in_the_api(view: Callable) -> Callable:
    """Marks a view that is not a memory.api.base.ApiView: Django's 400 and 500 answer there in
    the API's shape too (memory.api.exceptions)."""
    view.karani_api = True  # type: ignore[attr-defined]
    return view


def _is_api_view(view: Callable) -> bool:
    view_class = getattr(view, "view_class", None)
    return getattr(view, "karani_api", False) or getattr(view_class, "karani_api", False)


def _other_spelling(path_info: str) -> str:
    return path_info[:-1] if path_info.endswith("/") else f"{path_info}/"


# Exempt from Django's CSRF check, which would answer a POST here with its HTML 403 page
# before this view ran; it writes nothing, and the views it hands over to are DRF's own
# (csrf-exempt too, with DRF's session check answering in JSON).
@_in_the_api
@csrf_exempt
def not_found(request: HttpRequest, *args: object) -> HttpResponse:
    """Any other path under the API's prefix: the endpoint under its other spelling (with or
    without the trailing slash, so both work), else the API's JSON 404 whatever the method."""
    other = _other_spelling(request.path_info)
    try:
        match = resolve(other, getattr(request, "urlconf", None))
    except Resolver404:
        match = None
    if match is not None and match.func is not not_found and _is_api_view(match.func):
        return match.func(request, *match.args, **match.kwargs)
    message = f"no such API endpoint: {request.path_info}"
    return JsonResponse(error_body("not_found", message), status=404)


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
