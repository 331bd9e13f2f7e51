from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.urls import include, path


def home(request: HttpRequest) -> HttpResponse:
    return HttpResponse("the host's own home page")


urlpatterns = [
    path("", home),
    path("admin/", admin.site.urls),
    # karani's REST API under a prefix of the host's choosing: memory's, then qualify's.
    path("karani/api/", include("memory.api.urls")),
    path("karani/api/", include("qualify.api.urls")),
    path("karani/api/status", lambda request: HttpResponse("the host's own page beside it")),
]
# Any other path under karani's prefix answers the API's JSON 404.
handler404 = "memory.api.exceptions.page_not_found"
