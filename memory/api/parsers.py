"""DRF's JSON parser, answering JSON nested deeper than Python decodes as a parse error."""

from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            # DRF's parser only turns ValueError into a 400.
            raise ParseError("JSON parse error - nested too deeply") from None
