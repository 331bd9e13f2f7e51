from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404, path, re_path, resolve
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.permissions import AllowAny

from memory.api import views
from memory.api.exceptions import API_PREFIX, error_body


def _other_spelling(path_info: str) -> str:
    return path_info[:-1] if path_info.endswith("/") else f"{path_info}/"


# Exempt from Django's CSRF check, which would answer a POST here with its HTML 403 page
# before this view ran; it writes nothing, and the views it hands over to are DRF's own
# (csrf-exempt too, with DRF's session check answering in JSON).
@csrf_exempt
def not_found(request: HttpRequest, *args: object) -> HttpResponse:
    """Any other path under /api/: the endpoint under its other spelling (with or without the
    trailing slash, so both work), else the API's JSON 404 whatever the method."""
    other = _other_spelling(request.path_info)
    try:
        match = resolve(other)
    except Resolver404:
        match = None
    if match is not None and match.func is not not_found and other.startswith(API_PREFIX):
        return match.func(request, *match.args, **match.kwargs)
    message = f"no such API endpoint: {request.path_info}"
    return JsonResponse(error_body("not_found", message), status=404)


# The schema and its docs describe the API, they do not expose data: readable without a token.
public = {"authentication_classes": [], "permission_classes": [AllowAny]}

urlpatterns = [
    path("memories/recall", views.RecallApi.as_view(), name="memories-recall"),
    path("memories", views.MemoryListApi.as_view(), name="memories"),
    path("memories/<str:pk>", views.MemoryDetailApi.as_view(), name="memory-detail"),
    path("memories/<str:pk>/correct", views.MemoryCorrectApi.as_view(), name="memory-correct"),
    path("schema/", SpectacularAPIView.as_view(**public), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema", **public), name="api-docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api-schema", **public), name="api-redoc"),
    re_path(r"^.*$", not_found),
]
