"""One error shape for the whole API: ``{"error": {"code", "message", "fields"}}``.

DRF's own exceptions, the memory service's errors and database outages all end up here, so
a client parses one shape and the API never answers an HTML page or a bare 500.
"""

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import set_rollback

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


def _validation(exc: exceptions.ValidationError) -> Response:
    detail = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
    fields = {name: _flatten(value) for name, value in detail.items()}
    first_field, first_messages = next(iter(fields.items()))
    message = (
        first_messages[0]
        if first_field == "non_field_errors"
        else (f"{first_field}: {first_messages[0]}")
    )
    return Response(error_body("invalid", message, fields), status=status.HTTP_400_BAD_REQUEST)


def _api_exception(exc: exceptions.APIException) -> Response:
    headers: dict[str, str] = {}
    # APIView.handle_exception puts the first authentication class's challenge here; without
    # WWW-Authenticate a 401 would not be a valid 401 (DRF downgrades it to 403).
    if getattr(exc, "auth_header", None):
        headers["WWW-Authenticate"] = exc.auth_header  # type: ignore[attr-defined]
    if getattr(exc, "wait", None) is not None:
        headers["Retry-After"] = str(int(exc.wait))  # type: ignore[attr-defined]
    code = exc.get_codes() if not isinstance(exc.detail, dict | list) else exc.default_code
    return Response(
        error_body(str(code), " ".join(_flatten(exc.detail))),
        status=exc.status_code,
        headers=headers,
    )


def _field_of(exc: MemoryInputError, view: Any) -> str | None:
    """The request's name for the input the service refused (recall's ``q`` is its query)."""
    if exc.field is None:
        return None
    return getattr(view, "field_names", {}).get(exc.field, exc.field)


def _server_error(exc: Exception, context: dict[str, Any]) -> Response:
    request = context.get("request")
    path = request.path if request is not None else "?"
    # The traceback goes to the configured log (settings.LOGGING: stderr) under Django's own
    # logger; the client gets the one shape, never Django's HTML page.
    request_log.error("Internal Server Error: %s", path, exc_info=exc)
    response = Response(
        error_body("server_error", "internal error; it has been logged"),
        status=status.HTTP_500_INTERNAL_SERVER_ERROR,
    )
    response._has_been_logged = True  # type: ignore[attr-defined]  # Django would log it again
    return response


def handle(exc: Exception, context: dict[str, Any]) -> Response:
    """DRF's EXCEPTION_HANDLER."""
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()

    if isinstance(exc, exceptions.ValidationError):
        return _validation(exc)
    if isinstance(exc, exceptions.APIException):
        set_rollback()
        return _api_exception(exc)
    if isinstance(exc, SecretRefused):
        field = _field_of(exc, context.get("view")) or "text"
        body = error_body("secret_refused", str(exc), {field: [str(exc)]})
        body["error"]["detected"] = list(exc.kinds)
        return Response(body, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, FactAlreadyDeleted):
        # A conflict with the fact's state, not malformed input: same answer for correcting
        # and for deleting a fact that is already gone.
        return Response(error_body("fact_deleted", str(exc)), status=status.HTTP_409_CONFLICT)
    if isinstance(exc, MemoryInputError):
        field = _field_of(exc, context.get("view"))
        fields = {field: [str(exc)]} if field else None
        return Response(error_body("invalid", str(exc), fields), status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, FactNotFound):
        return Response(error_body("not_found", str(exc)), status=status.HTTP_404_NOT_FOUND)
    if isinstance(exc, DatabaseError):
        set_rollback()
        log.error("database error answered 503: %s", first_line(exc))
        return Response(
            error_body("database_unavailable", "the ledger database is unavailable; retry later"),
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": "5"},
        )
    if isinstance(exc, RequestDataTooBig):
        # Django refuses to read a body over DATA_UPLOAD_MAX_MEMORY_SIZE; it would answer
        # with its HTML 400 page.
        return Response(
            error_body(
                "request_too_large",
                f"the request body is over the {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,}-byte limit",
            ),
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    # Anything else is a bug: logged with its traceback, answered in the one shape.
    set_rollback()
    return _server_error(exc, context)
