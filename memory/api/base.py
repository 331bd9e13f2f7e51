"""What every karani API view sets on itself, so a host project's ``REST_FRAMEWORK`` never
changes how the API authenticates, parses, answers, fails or throttles."""

from collections.abc import Callable, Iterable
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers, throttling
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.views import APIView

from memory import clock
from memory.api import exceptions, transport
from memory.api.parsers import JSONParser
from memory.api.serializers import ErrorSerializer
from memory.api.text import refuse_too_long, screened
from memory.conf import settings

THROTTLE_SCOPES = ("recall", "write")


class ScopedRateThrottle(throttling.ScopedRateThrottle):
    """DRF's scoped throttle at karani's rates, ``KARANI_API_RECALL_RATE`` and
    ``KARANI_API_WRITE_RATE`` (a host's own ``recall`` or ``write`` scope never applies here),
    on memory's clock, so tests move time instead of waiting out a window."""

    @staticmethod
    def timer() -> float:
        return clock.now()

    def get_rate(self) -> str | None:
        if self.scope not in THROTTLE_SCOPES:
            raise ImproperlyConfigured(f"karani has no throttle rate for the {self.scope!r} scope")
        rate = getattr(settings, f"KARANI_API_{self.scope.upper()}_RATE")
        if rate is None or str(rate).lower() == "off":
            return None
        return str(rate).lower()


class ApiView(APIView):
    # Token first: its WWW-Authenticate challenge is what makes anonymous requests a 401.
    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsAuthenticated]
    parser_classes = [JSONParser]
    renderer_classes = [JSONRenderer]
    throttle_classes = [ScopedRateThrottle]
    versioning_class = None
    # Django's 400 and 500 handlers answer in the API's error shape on such views.
    karani_api = True

    def get_exception_handler(self) -> Callable[[Exception, dict[str, Any]], Any]:
        return exceptions.handle

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        # Here, not in initialize_request: DRF answers what this raises in the one shape.
        transport.check_url(request._request)
        transport.take_chunked_body(request._request)
        super().initial(request, *args, **kwargs)


# What each error status means in every karani API operation; an API adds its own 404 and 409.
ERROR_TEXTS = {
    400: "bad input (field errors in error.fields; a refused secret names its type)",
    401: "no or bad credentials",
    403: "authenticated, but not allowed to write",
    411: "a chunked body on a server that cannot de-chunk it (runserver): send Content-Length",
    413: "the request body is over the upload limit",
    414: "the URL is over 32 KiB; send long text in a body",
    429: "throttled; see Retry-After",
    503: "the ledger database is unavailable",
}
# The errors any operation that takes input can answer.
ALWAYS = (400, 401, 414, 429, 503)


def error_responses(
    codes: Iterable[int], meaning: dict[int, str] | None = None
) -> dict[int, OpenApiResponse]:
    """The schema's error answers for ``codes``, all in the one error shape; ``meaning`` says
    what a status means for this API (its 404, its 409)."""
    texts = {**ERROR_TEXTS, **(meaning or {})}
    return {code: OpenApiResponse(ErrorSerializer, description=texts[code]) for code in codes}


def validated(serializer: type[serializers.Serializer], data: Any) -> dict[str, Any]:
    """``data`` under the text policy, checked by ``serializer``; a refusal is the API's 400."""
    clean = screened(data)
    refuse_too_long(serializer().fields, data)
    body = serializer(data=clean)
    body.is_valid(raise_exception=True)
    return body.validated_data
