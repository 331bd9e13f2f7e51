from django.http import HttpRequest, JsonResponse
from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.permissions import AllowAny

from memory.api import views
from memory.api.exceptions import error_body


def not_found(request: HttpRequest, *args: object) -> JsonResponse:
    """Any other path under /api/: the API's JSON 404 instead of Django's HTML page."""
    return JsonResponse(error_body("not_found", "no such API endpoint"), status=404)


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
