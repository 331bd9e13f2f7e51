"""One error shape for the whole API: ``{"error": {"code", "message", "fields"}}``.

DRF's own exceptions, the memory service's errors and database outages all end up here, so
a client parses one shape and the API never answers an HTML page or a bare 500.
"""

import logging
import re
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.db import DatabaseError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import set_rollback

from memory.errors import FactAlreadyDeleted, FactNotFound, MemoryInputError, SecretRefused

log = logging.getLogger("karani.api")


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


# The service's one-line messages start with the input they are about ("text contains
# ...", "unknown kind ...", "company name is empty ..."): enough to point at the field.
_FIELD_AT_START = re.compile(
    r"^(?:unknown )?(text|query|company|kind|source|status|ref|reason|limit)\b"
)


def _field_of(message: str, view: Any) -> str | None:
    match = _FIELD_AT_START.match(message)
    if match is None:
        return None
    # The view's name for it where the API differs from the service (recall's ?q=).
    return getattr(view, "field_names", {}).get(match.group(1), match.group(1))


def handle(exc: Exception, context: dict[str, Any]) -> Response | None:
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
        fields = {exc.field: [str(exc)]}
        body = error_body("secret_refused", str(exc), fields)
        body["error"]["detected"] = list(exc.kinds)
        return Response(body, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, FactAlreadyDeleted):
        # A conflict with the fact's state, not malformed input: same answer for correcting
        # and for deleting a fact that is already gone.
        return Response(error_body("fact_deleted", str(exc)), status=status.HTTP_409_CONFLICT)
    if isinstance(exc, MemoryInputError):
        field = _field_of(str(exc), context.get("view"))
        fields = {field: [str(exc)]} if field else None
        return Response(error_body("invalid", str(exc), fields), status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, FactNotFound):
        return Response(error_body("not_found", str(exc)), status=status.HTTP_404_NOT_FOUND)
    if isinstance(exc, DatabaseError):
        set_rollback()
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        log.error("database error answered 503: %s", first)
        return Response(
            error_body("database_unavailable", "the ledger database is unavailable; retry later"),
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": "5"},
        )
    # Anything else is a bug: let Django log it and answer its 500.
    return None
