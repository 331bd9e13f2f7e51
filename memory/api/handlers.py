"""Django's 400 and 500 views in the API's error shape under /api/: failures before any view."""

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

from memory.api.exceptions import error_body

# Where memory.api's URLs are included (karani_site/urls.py).
API_PREFIX = "/api/"


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if request.path_info.startswith(API_PREFIX):
        body = error_body("bad_request", "the request was refused before it reached the API")
        return JsonResponse(body, status=400)
    return defaults.bad_request(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    # Django has already logged the traceback (settings.LOGGING, django.request).
    if request.path_info.startswith(API_PREFIX):
        body = error_body("server_error", "internal error; it has been logged")
        return JsonResponse(body, status=500)
    return defaults.server_error(request)
