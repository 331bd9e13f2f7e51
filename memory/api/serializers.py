"""Output serializers shared by several views, and the error shape for the schema.

Per-operation Input/Output serializers live nested in their view (views.py); these are the
pieces more than one operation returns. Each names its OpenAPI component explicitly so
drf-spectacular never has to guess (or warn about) a name.
"""

from django.utils.functional import cached_property
from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers
from rest_framework.utils.serializer_helpers import BindingDict

from memory.models import Kind, Memory, Source
from memory.services import MAX_COMPANY_CHARS, MAX_REF_CHARS

KIND_CHOICES = Kind.choices
SOURCE_CHOICES = Source.choices
STATUS_CHOICES = ("live", "deleted", "superseded")


class FlatInputSerializer(serializers.Serializer):
    """A request's input (query string or body), validated with fields built once per class.

    DRF builds a serializer's fields for every instance: a deep copy of each declared field
    and its validators, on every request, ~0.1 ms for recall's three (a deep copy of 16
    objects). Input fields hold no per-request state (``run_validation`` reads only their
    own settings, and the root's ``partial``, always False here), so each class binds one
    set to a prototype instance and every instance validates with it. The validation, its
    errors and the OpenAPI schema are DRF's own. Only for flat input serializers: no nested
    serializers, no context, no ``partial``.
    """

    @cached_property
    def fields(self) -> BindingDict:
        cls = type(self)
        shared = cls.__dict__.get("_shared_fields")
        if shared is None:
            prototype = cls()
            shared = BindingDict(prototype)
            for name, field in prototype.get_fields().items():
                shared[name] = field
            prototype.__dict__["fields"] = shared
            # A race between two threads builds two equal sets; either one is kept.
            cls._shared_fields = shared
        return shared


@extend_schema_serializer(component_name="ErrorDetail")
class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="machine-readable: invalid, secret_refused, ...")
    message = serializers.CharField(help_text="one line a person can act on")
    fields = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="field name -> messages, on 400",
    )
    detected = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="secret_refused only: the credential types found",
    )


@extend_schema_serializer(component_name="Error")
class ErrorSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()


@extend_schema_serializer(component_name="RecalledFact")
class RecalledFactSerializer(serializers.Serializer):
    """Read from ``RecalledFact.to_dict()``: the same fields and formats as the CLI's JSON."""

    id = serializers.IntegerField()
    text = serializers.CharField()
    kind = serializers.ChoiceField(choices=KIND_CHOICES)
    company = serializers.CharField(allow_null=True, max_length=MAX_COMPANY_CHARS)
    score = serializers.FloatField()
    ref = serializers.CharField(allow_null=True, max_length=MAX_REF_CHARS)
    created_at = serializers.DateTimeField()
    last_seen_at = serializers.DateTimeField()


@extend_schema_serializer(component_name="Fact")
class FactSerializer(serializers.ModelSerializer):
    """One ledger row, deleted or live, with its place in a correction chain."""

    status = serializers.ChoiceField(choices=STATUS_CHOICES, read_only=True)
    supersedes = serializers.IntegerField(
        source="supersedes_id", allow_null=True, read_only=True, help_text="id this corrected"
    )
    superseded_by = serializers.SerializerMethodField(help_text="id of the correction, if any")

    class Meta:
        model = Memory
        fields = (
            "id",
            "text",
            "kind",
            "company",
            "source",
            "fit_score",
            "ref",
            "created_at",
            "last_seen_at",
            "seen_count",
            "created_by",
            "status",
            "deleted_at",
            "delete_reason",
            "deleted_by",
            "supersedes",
            "superseded_by",
        )
        read_only_fields = fields

    def get_superseded_by(self, memory: Memory) -> int | None:
        successor = getattr(memory, "superseded_by", None)
        return successor.pk if successor is not None else None
