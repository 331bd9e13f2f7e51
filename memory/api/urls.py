from django.apps import apps
from django.urls import path

from memory.api import views
from memory.api.exceptions import resource

SCHEMA = "api-schema"

urlpatterns = [
    path("memories/recall", views.RecallApi.as_view(), name="memories-recall"),
    path("memories", views.MemoryListApi.as_view(), name="memories"),
    path("memories/<str:pk>", views.MemoryDetailApi.as_view(), name="memory-detail"),
    path("memories/<str:pk>/correct", views.MemoryCorrectApi.as_view(), name="memory-correct"),
    resource("memories"),
]
# The schema and its docs need drf-spectacular set up as its docs say (the app installed,
# its DEFAULT_SCHEMA_CLASS); memory.checks warns when the schema class is missing.
if apps.is_installed("drf_spectacular"):
    from memory.api import docs  # drf-spectacular's views import its app's settings

    urlpatterns += [
        path("schema/", docs.SchemaView.as_view(), name=SCHEMA),
        path("docs/", docs.SwaggerView.as_view(url_name=SCHEMA), name="api-docs"),
        path("redoc/", docs.RedocView.as_view(url_name=SCHEMA), name="api-redoc"),
    ]
