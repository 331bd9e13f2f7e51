from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.urls import include, path


def home(request: HttpRequest) -> HttpResponse:
    return HttpResponse("the host's own home page")


urlpatterns = [
    path("", home),
    path("admin/", admin.site.urls),
    # karani's REST API under a prefix of the host's choosing.
    path("karani/api/", include("memory.api.urls")),
]
