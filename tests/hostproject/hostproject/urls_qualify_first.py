from django.contrib import admin
from django.http import HttpResponse
from django.urls import include, path

from hostproject.urls import handler404, home  # noqa: F401  (Django reads handler404 here)

urlpatterns = [
    path("", home),
    path("admin/", admin.site.urls),
    # The same includes as hostproject.urls, in the other order.
    path("karani/api/", include("qualify.api.urls")),
    path("karani/api/", include("memory.api.urls")),
    path("karani/api/status", lambda request: HttpResponse("the host's own page beside it")),
]
