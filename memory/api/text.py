"""The text policy (memory.text) at the API's edge, before the serializers: a refused
character gets the policy's one message, not DRF's own ("Null characters are not allowed"),
and lengths are counted on the text as sent, as the schema's ``maxLength`` counts them."""

from collections.abc import Mapping
from typing import Any

from django.http import QueryDict
from rest_framework import serializers

from memory.errors import MemoryInputError
from memory.text import normalise, refusal, too_long


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


def refuse_too_long(fields: Mapping[str, serializers.Field], data: Any) -> None:
    """Refuse the first text field of ``data`` (as sent, before ``screened`` normalises it) over
    its ``max_length``, with the text policy's one message; lists of objects too."""
    if not isinstance(data, Mapping):
        return
    for name, field in fields.items():
        value = data.get(name)
        limit = getattr(field, "max_length", None)
        if isinstance(field, serializers.CharField) and limit and isinstance(value, str):
            if message := too_long(value, value, field=name, limit=limit):
                raise MemoryInputError(message, field=name)
        elif isinstance(field, serializers.ListSerializer) and isinstance(value, list):
            for item in value:
                refuse_too_long(field.child.fields, item)
