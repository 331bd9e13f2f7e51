"""The API's one error shape, ``{"error": {"code", "message", "fields"}}``, for every failure."""

import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import URLPattern, URLResolver, get_resolver, re_path, resolve
from django.urls.exceptions import Resolver404
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler, set_rollback

from memory.errors import (
    FactAlreadyDeleted,
    FactAlreadyLive,
    FactNotFound,
    MemoryInputError,
    SecretRefused,
    first_line,
)

log = logging.getLogger("karani.api")
request_log = logging.getLogger("django.request")


def error_body(code: str, message: str, fields: dict[str, list[str]] | None = None) -> dict:
    return {"error": {"code": code, "message": message, "fields": fields or {}}}


def _flatten(detail: Any) -> list[str]:
    if isinstance(detail, dict):
        return [f"{k}: {m}" for k, v in detail.items() for m in _flatten(v)]
    if isinstance(detail, list):
        return [m for item in detail for m in _flatten(item)]
    return [str(detail)]


def _validation_body(detail: Any) -> dict:
    detail = detail if isinstance(detail, dict) else {"non_field_errors": detail}
    fields = {name: _flatten(value) for name, value in detail.items()}
    first_field, first_messages = next(iter(fields.items()))
    prefix = "" if first_field == "non_field_errors" else f"{first_field}: "
    return error_body("invalid", prefix + first_messages[0], fields)


def handle(exc: Exception, context: dict[str, Any]) -> Response:
    # DRF's own handler answers its exceptions, Http404 and PermissionDenied, with their
    # WWW-Authenticate and Retry-After headers; only the body is reshaped here.
    response = exception_handler(exc, context)
    if response is not None:
        if isinstance(exc, exceptions.ValidationError):
            response.data = _validation_body(exc.detail)
        else:
            data = response.data
            detail = data.get("detail", data) if isinstance(data, dict) else data
            code = getattr(detail, "code", None) or getattr(exc, "default_code", "error")
            response.data = error_body(str(code), " ".join(_flatten(detail)))
        return response
    if isinstance(exc, FactAlreadyDeleted | FactAlreadyLive):
        # A conflict with the ledger's state, not malformed input.
        code = "fact_deleted" if isinstance(exc, FactAlreadyDeleted) else "fact_exists"
        return Response(error_body(code, str(exc)), status=409)
    if isinstance(exc, MemoryInputError):
        # The request's name for the input (recall's ``q`` is the service's query).
        field = getattr(context.get("view"), "field_names", {}).get(exc.field, exc.field)
        secret = isinstance(exc, SecretRefused)
        code = "secret_refused" if secret else "invalid"
        body = error_body(code, str(exc), {field: [str(exc)]} if field else None)
        if secret:
            body["error"]["detected"] = list(exc.kinds)
        return Response(body, status=400)
    if isinstance(exc, FactNotFound):
        return Response(error_body("not_found", str(exc)), status=404)
    if isinstance(exc, DatabaseError):
        set_rollback()
        log.error("database error answered 503: %s", first_line(exc))
        message = "the ledger database is unavailable; retry later"
        return Response(
            error_body("database_unavailable", message), 503, headers={"Retry-After": "5"}
        )
    if isinstance(exc, RequestDataTooBig):
        # Django would answer a body over DATA_UPLOAD_MAX_MEMORY_SIZE with its HTML 400 page.
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        message = f"the request body is over the {limit:,}-byte limit"
        return Response(error_body("request_too_large", message), status=413)
    # Anything else is a bug: its traceback goes to the log, the client gets the one shape.
    set_rollback()
    request = context.get("request")
    request_log.error(
        "Internal Server Error: %s", request.path if request is not None else "?", exc_info=exc
    )
    response = Response(error_body("server_error", "internal error; it has been logged"), 500)
    response._has_been_logged = True  # type: ignore[attr-defined]  # Django would log it again
    return response


def _is_api_view(view: Callable) -> bool:
    view_class = getattr(view, "view_class", None)
    return getattr(view, "karani_api", False) or getattr(view_class, "karani_api", False)


def _under_an_api_include(resolver: URLResolver, path: str) -> bool:
    """Whether ``path`` lies under the prefix of an include whose own patterns are karani's API
    views (memory's or qualify's URLs, under whatever prefix and in whatever order)."""
    for pattern in resolver.url_patterns:
        if not isinstance(pattern, URLResolver):
            continue
        match = pattern.pattern.match(path)
        if match is None:
            continue
        own = [p.callback for p in pattern.url_patterns if isinstance(p, URLPattern)]
        if any(_is_api_view(view) for view in own) or _under_an_api_include(pattern, match[0]):
            return True
    return False


def _for_the_api(request: HttpRequest) -> bool:
    """Whether the path is the API's: one of its endpoints, or any other path under the prefix
    the project included karani's API at."""
    urlconf = getattr(request, "urlconf", None)
    try:
        return _is_api_view(resolve(request.path_info, urlconf).func)
    except Resolver404:
        pass
    except Exception:  # the broken URLconf this 500 may be about
        return False
    try:
        return _under_an_api_include(get_resolver(urlconf), request.path_info.lstrip("/"))
    except Exception:
        return False


def _other_spelling(path_info: str) -> str:
    return path_info[:-1] if path_info.endswith("/") else f"{path_info}/"


def _in_the_api(view: Callable) -> Callable:
    """Marks a view that is not a memory.api.base.ApiView: Django's 400, 404 and 500 answer
    there in the API's shape too."""
    view.karani_api = True  # type: ignore[attr-defined]
    return view


# Exempt from Django's CSRF check, which would answer a POST here with its HTML 403 page
# before this view ran; it writes nothing, and the views it hands over to are DRF's own
# (csrf-exempt too, with DRF's session check answering in JSON).
@_in_the_api
@csrf_exempt
def not_found(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    """A path under one of the API's resources that no endpoint answers: the endpoint under its
    other spelling (with or without the trailing slash, so both work), else the JSON 404."""
    try:
        match = resolve(_other_spelling(request.path_info), getattr(request, "urlconf", None))
    except Resolver404:
        match = None
    if match is not None and match.func is not not_found and _is_api_view(match.func):
        return match.func(request, *match.args, **match.kwargs)
    message = f"no such API endpoint: {request.path_info}"
    return JsonResponse(error_body("not_found", message), status=404)


def resource(name: str) -> URLPattern:
    """Every other path under one of the API's resources (``memories``, ``decisions``...): the
    other spelling or the JSON 404. It matches only its own resource's paths, so the apps'
    URLs can be included in any order, and a host's own paths beside them still resolve."""
    return re_path(rf"^{name}(?:/.*)?$", not_found)


# Django's 400 and 500 views (a project's handler400/handler500), for failures before any
# view: the API's paths get the same shape, every other path Django's own page.
def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _for_the_api(request):
        body = error_body("bad_request", "the request was refused before it reached the API")
        return JsonResponse(body, status=400)
    return defaults.bad_request(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    # Django has already logged the traceback (settings.LOGGING, django.request).
    if _for_the_api(request):
        body = error_body("server_error", "internal error; it has been logged")
        return JsonResponse(body, status=500)
    return defaults.server_error(request)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A project's handler404: any path under the API's prefix that matches none of its
    resources answers the JSON 404 (or the other spelling); Django's page everywhere else."""
    if _for_the_api(request):
        return not_found(request)
    return defaults.page_not_found(request, exception)
