"""Input serializers that take a request as written: a field the endpoint does not know is
named and refused (a typo must not drop a value), and in a JSON body a value of the wrong JSON
type (``"50"`` for a number, ``7`` for a text) is refused, never converted."""

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.http import QueryDict
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers

from memory.validation import fits_json_type, json_type


def _expects(field: serializers.Field) -> str | None:
    """The JSON type ``field`` takes, or None when it takes several."""
    if isinstance(field, serializers.BooleanField):
        return "boolean"
    if isinstance(field, serializers.IntegerField):
        return "integer"
    if isinstance(field, serializers.FloatField | serializers.DecimalField):
        return "number"
    if isinstance(field, serializers.CharField | serializers.ChoiceField):
        return "string"
    if isinstance(field, serializers.ListField | serializers.ListSerializer):
        return "array"
    if isinstance(field, serializers.Serializer | serializers.DictField):
        return "object"
    return None


def article_of(name: str) -> str:
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"


def _type_error(field: serializers.Field, value: Any) -> str | None:
    """Why ``value`` is not of the type ``field`` takes, or None when it is (or is null, which
    the field itself judges)."""
    expected = _expects(field)
    if value is None or expected is None:
        return None
    if not fits_json_type(value, {expected}):
        return f"must be {article_of(expected)}, not {article_of(json_type(value))}"
    child = getattr(field, "child", None)
    if isinstance(field, serializers.ListField) and child is not None:
        inner = _expects(child)
        if inner is not None and not all(fits_json_type(item, {inner}) for item in value):
            return f"must be an array of {inner}s"
    return None


class StrictSerializer(serializers.Serializer):
    """Refuses unknown fields by name, and (in a JSON body, not a query string, whose values
    are all text) values of the wrong JSON type."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            known = ", ".join(self.fields)
            unknown = {
                name: [f"unknown field; this endpoint takes: {known}"]
                for name in data
                if name not in self.fields
            }
            if unknown:
                raise serializers.ValidationError(unknown)
            if isinstance(data, QueryDict):
                # DRF reads "status=" as absent; the schema says it is a value, and a wrong one.
                empty = {
                    name: ["is empty: give a value, or leave the parameter out"]
                    for name, field in self.fields.items()
                    if data.get(name) == "" and not getattr(field, "allow_blank", False)
                }
                if empty:
                    raise serializers.ValidationError(empty)
            else:
                wrong = {
                    name: [error]
                    for name, field in self.fields.items()
                    if name in data and (error := _type_error(field, data[name]))
                }
                if wrong:
                    raise serializers.ValidationError(wrong)
        return super().to_internal_value(data)


class StrictSerializerSchema(OpenApiSerializerExtension):
    """The schema says so too: a request body with another field does not match it."""

    target_class = StrictSerializer
    match_subclasses = True

    def map_serializer(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        # drf-spectacular leaves out the limit of a nested list (many=True, max_length=...).
        for name, field in self.target.fields.items():
            limit = getattr(field, "max_length", None)
            if isinstance(field, serializers.ListSerializer) and limit is not None:
                schema["properties"][name]["maxItems"] = limit
        # A rule across fields (a company and title, or a task) as the serializer states it.
        any_of = getattr(self.target, "schema_any_of", None)
        any_of = any_of() if callable(any_of) else any_of
        rules = {"anyOf": any_of} if any_of else {}
        # Fields that exclude each other (fact_ids or facts): not all of them at once.
        if exclusive := getattr(self.target, "schema_exclusive", None):
            rules["not"] = {"required": list(exclusive)}
        return {**schema, "additionalProperties": False, **rules}


class StrictSchema(AutoSchema):
    """A view's schema where a body with a rule across fields (``schema_any_of``) is required:
    no one field is, yet no body at all breaks the rule."""

    def _get_request_body(self, direction: str = "request") -> dict[str, Any] | None:
        body = super()._get_request_body(direction)
        if body is not None and getattr(self.get_request_serializer(), "schema_any_of", None):
            body["required"] = True
        return body


class Timestamp(serializers.DateTimeField):
    """A moment as every answer writes it: ISO 8601 in UTC ending in ``Z``, also when a
    service hands it over as Python's ``isoformat()`` text (``+00:00``)."""

    def to_representation(self, value: Any) -> Any:
        if isinstance(value, str) and value:
            value = datetime.fromisoformat(value)
        return super().to_representation(value)


def utc_z(value: Any) -> Any:
    """``value`` (a datetime, its ISO text, or None) as the API writes a moment."""
    return None if value is None else Timestamp().to_representation(value)
