"""The text policy (memory.text) at the API's edge, before the serializers: a refused
character gets the policy's one message, not DRF's own ("Null characters are not allowed"),
and lengths are counted on the text as it will be stored (CRLF counts once)."""

from typing import Any

from django.http import QueryDict

from memory.errors import MemoryInputError
from memory.text import normalise, refusal


def screened(data: Any) -> Any:
    """``data`` (a parsed JSON body or the query string) with every string checked and
    normalised as multi-line text; the services collapse their single-line fields."""
    if isinstance(data, QueryDict):
        clean = QueryDict(mutable=True)
        for name, values in data.lists():
            clean.setlist(name, [_string(value, name) for value in values])
        return clean
    return _value(data, "body")


def _value(value: Any, name: str) -> Any:
    if isinstance(value, str):
        return _string(value, name)
    if isinstance(value, dict):
        return {key: _value(item, str(key)) for key, item in value.items()}
    if isinstance(value, list):
        return [_value(item, name) for item in value]
    return value


def _string(value: str, name: str) -> str:
    message = refusal(value, field=name)
    if message:
        raise MemoryInputError(message, field=name)
    return normalise(value, multiline=True)
