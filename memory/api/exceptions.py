"""The API's one error shape, ``{"error": {"code", "message", "fields"}}``, for every failure."""

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import resolve
from django.views import defaults
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler, set_rollback

from memory.errors import (
    FactAlreadyDeleted,
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
    if isinstance(exc, FactAlreadyDeleted):
        # A conflict with the fact's state, not malformed input.
        return Response(error_body("fact_deleted", str(exc)), status=409)
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


def _for_the_api(request: HttpRequest) -> bool:
    """Whether the path is the API's, under whatever prefix the project included it."""
    try:
        match = resolve(request.path_info, getattr(request, "urlconf", None))
    except Exception:  # Resolver404, or the broken URLconf this 500 may be about
        return False
    view_class = getattr(match.func, "view_class", None)
    return getattr(match.func, "karani_api", False) or getattr(view_class, "karani_api", False)


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
