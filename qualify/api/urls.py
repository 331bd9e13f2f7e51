from django.urls import path

from memory.api.exceptions import resource
from qualify.api import views

# Each resource's last pattern answers its other paths (the other spelling, or the JSON 404)
# and nothing else, so a project may include these before or after memory.api's URLs.
urlpatterns = [
    path("context", views.ContextApi.as_view(), name="qualify-context"),
    resource("context"),
    path("decisions", views.DecisionApi.as_view(), name="qualify-decisions"),
    resource("decisions"),
    path("outcomes", views.OutcomeApi.as_view(), name="qualify-outcomes"),
    resource("outcomes"),
    path("funnel", views.FunnelApi.as_view(), name="qualify-funnel"),
    resource("funnel"),
]
