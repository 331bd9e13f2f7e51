"""Output serializers more than one view returns, and the error shape for the schema."""

from typing import Any

from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from memory import attribution
from memory.api.strict import Timestamp, utc_z
from memory.models import Kind, Memory
from memory.services import EXPORT_FIELDS
from memory.validation import MAX_COMPANY_CHARS, MAX_REF_CHARS


def choice_field(choices: Any, *, what: str, **kwargs: Any) -> serializers.ChoiceField:
    """A ChoiceField whose refusal lists the valid values, as the service's does."""
    valid = ", ".join(str(value) for value in serializers.ChoiceField(choices=choices).choices)
    # Passed to the constructor: DRF rebuilds each declared field from its arguments.
    messages = {"invalid_choice": f'unknown {what} "{{input}}"; use one of: {valid}'}
    return serializers.ChoiceField(choices=choices, error_messages=messages, **kwargs)


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
    id = serializers.IntegerField()
    text = serializers.CharField()
    kind = serializers.ChoiceField(choices=Kind.choices)
    company = serializers.CharField(allow_null=True, max_length=MAX_COMPANY_CHARS)
    score = serializers.FloatField(help_text="higher is better; keyword scores are whole points")
    ref = serializers.CharField(allow_null=True, max_length=MAX_REF_CHARS)
    created_at = Timestamp()
    last_seen_at = Timestamp()


@extend_schema_serializer(component_name="Fact")
class FactSerializer(serializers.ModelSerializer):
    status = serializers.ChoiceField(choices=("live", "deleted", "superseded"), read_only=True)
    supersedes = serializers.IntegerField(
        source="supersedes_id", allow_null=True, read_only=True, help_text="id this corrected"
    )
    superseded_by = serializers.SerializerMethodField(help_text="id of the correction, if any")

    class Meta:
        model = Memory
        # Every exported column, then the two the ledger derives.
        fields = (*EXPORT_FIELDS, "status", "superseded_by")
        read_only_fields = fields

    def get_superseded_by(self, memory: Memory) -> int | None:
        successor = getattr(memory, "superseded_by", None)
        return successor.pk if successor is not None else None


@extend_schema_serializer(component_name="FactDetail")
class FactDetailSerializer(FactSerializer):
    attribution = serializers.SerializerMethodField(
        help_text=(
            "per registered app (qualify: 'decisions'), the decisions whose prompts carried "
            "this fact; null when no app reports attribution"
        )
    )

    class Meta(FactSerializer.Meta):
        fields = (*FactSerializer.Meta.fields, "attribution")

    def get_attribution(self, memory: Memory) -> dict[str, Any] | None:
        summary = attribution.summary_for(memory.pk)
        for report in (summary or {}).values():
            # An app reports its recent rows' moments as Python writes them; answer them in Z.
            for row in report.get("recent", []) if isinstance(report, dict) else []:
                if "created_at" in row:
                    row["created_at"] = utc_z(row["created_at"])
        return summary
