"""DRF's content negotiation, without the parsing when the client accepts anything.

Nearly every API client sends no Accept header, ``*/*`` or ``application/json``; for
those DRF's negotiation always picks the first renderer (the API has one, JSON) after
parsing the header into media types and ranking them, every request. Those cases are
answered directly here, with the media type DRF would give; anything else (another type,
parameters, a ``?format=``) goes through DRF's negotiation unchanged, 406 included.
"""

from typing import Any

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request

# An absent header counts as */*, as in DRF; an empty one is DRF's 406, so it is not here.
_ANYTHING = frozenset(("*/*", "application/json"))


class ContentNegotiation(DefaultContentNegotiation):
    def select_renderer(
        self, request: Request, renderers: list[Any], format_suffix: str | None = None
    ) -> tuple[Any, str]:
        accept = request.META.get("HTTP_ACCEPT", "*/*")
        if (
            accept in _ANYTHING
            and renderers
            and renderers[0].media_type == "application/json"
            and not format_suffix
            and self.settings.URL_FORMAT_OVERRIDE not in request.query_params
        ):
            return renderers[0], renderers[0].media_type
        return super().select_renderer(request, renderers, format_suffix)
