from django.urls import path

from qualify.api import views

# Included before memory.api's URLs, whose last pattern answers every other path with a 404.
urlpatterns = [
    path("context", views.ContextApi.as_view(), name="qualify-context"),
    path("decisions", views.DecisionApi.as_view(), name="qualify-decisions"),
    path("outcomes", views.OutcomeApi.as_view(), name="qualify-outcomes"),
    path("funnel", views.FunnelApi.as_view(), name="qualify-funnel"),
]
