"""What every karani API view sets on itself, so a host project's ``REST_FRAMEWORK`` never
changes how the API authenticates, parses, answers, fails or throttles."""

from collections.abc import Callable
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from rest_framework import throttling
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.views import APIView

from memory import clock
from memory.api import exceptions
from memory.api.parsers import JSONParser
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
