"""The shapes the qualify endpoints read and answer (checks of meaning live in the services)."""

from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from memory.api.serializers import choice_field
from memory.api.strict import StrictSerializer, Timestamp
from memory.api.textfields import HTTP_URL, Text, anycase, blank_class, non_blank
from memory.services import Kind
from qualify import remote_policy
from qualify.decisions import MAX_MODEL_CHARS, MAX_REASONS_CHARS, MAX_STANDING
from qualify.funnel import STEPS
from qualify.inputs import MAX_PROMPT_VERSION_CHARS, MAX_TASK_CHARS, max_chars
from qualify.models import (
    MAX_EXTERNAL_ID_CHARS,
    MAX_FACTS_PER_DECISION,
    MAX_WHY_CHARS,
    Arm,
    Remote,
    Stage,
    Verdict,
)
from qualify.outcomes import MAX_NOTE_CHARS

REMOTE_HELP = (
    f"the policy ({', '.join(Remote.values)}; on-site, in office...) with any detail after it,"
    " as boards write it: 'Hybrid (2 days)'. A decision's posting keeps the detail in location"
)


def _text(name: str, *, blank: str = "allowed", **kwargs) -> Text:
    kwargs.setdefault("required", False)
    kwargs.setdefault("trim_whitespace", False)  # the service normalises spaces itself
    return Text(
        blank=blank,
        max_length=kwargs.pop("max_length", None) or max_chars(name),
        **kwargs,
    )


def external_id(*, blank: str = "refused", **kwargs) -> Text:
    kwargs.setdefault("required", blank == "refused")
    return _text(
        "external_id",
        blank=blank,
        max_length=MAX_EXTERNAL_ID_CHARS,
        help_text="your own key for the posting (its URL, an ATS job id)",
        **kwargs,
    )


# How a remote policy may start (qualify.remote_policy), in either case, any spaces between:
# nothing, or a way of writing it, ended by the value's end or an edge before its detail.
_WAYS = sorted((w for ways in remote_policy.WAYS.values() for w in ways), key=len, reverse=True)


def remote_form() -> str:
    space = blank_class()
    ways = "|".join(anycase(way).replace(" ", f"[{space}]+") for way in _WAYS)
    return f"[{space}]*(?:$|(?:{ways})(?:$|[ :;,/()\\[\\]\\-\u2013\u2014]))"


SAY_WHAT = "say what the context is for: a company and title, or a task"


class SubjectSerializer(StrictSerializer):
    """What a working context is about: a posting's fields, or an agent's task."""

    company = _text("company", help_text="the employer: its facts plus global ones")
    title = _text("title")
    role_category = _text("role_category")
    external_id = external_id(blank="allowed")
    limit = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=2**31 - 1,
        help_text=f"facts wanted; more than {MAX_FACTS_PER_DECISION} is capped",
    )


@extend_schema_serializer(component_name="ContextQuery")
class ContextQuerySerializer(SubjectSerializer):
    # A query string cannot say "these two, or that one": by GET, both (docs/api.md).
    company = _text("company", blank="refused", required=True, help_text="the employer")
    title = _text("title", blank="refused", required=True)


@extend_schema_serializer(component_name="ContextRequest")
class ContextRequestSerializer(SubjectSerializer):
    location = _text("location")
    remote = _text("remote", form=remote_form, help_text=REMOTE_HELP)
    salary = _text("salary")
    description = _text("description")
    task = _text("task", max_length=MAX_TASK_CHARS, help_text="an agent's free-text task")

    @staticmethod
    def schema_any_of() -> list[dict]:
        """A company and a title, or a task, each holding a visible character."""
        visible = {"pattern": non_blank()}
        return [
            {
                "required": ["company", "title"],
                "properties": {"company": visible, "title": visible},
            },
            {"required": ["task"], "properties": {"task": visible}},
        ]

    def validate(self, data: dict) -> dict:
        def given(name: str) -> bool:
            return bool(str(data.get(name) or "").split())

        if not (given("company") and given("title")) and not given("task"):
            raise serializers.ValidationError({"title": [SAY_WHAT]})
        return data


@extend_schema_serializer(component_name="ContextFact")
class ContextFactSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    text = serializers.CharField()
    kind = serializers.ChoiceField(choices=Kind.choices)
    company = serializers.CharField(allow_null=True)
    score = serializers.FloatField()
    why = serializers.CharField(allow_blank=True, help_text="what in the posting brought it here")


@extend_schema_serializer(component_name="WorkingContext")
class WorkingContextSerializer(serializers.Serializer):
    prompt_version = serializers.CharField(help_text="record the decision under this name")
    arm = serializers.ChoiceField(choices=Arm.choices, help_text="holdout: judge without memory")
    mode = serializers.ChoiceField(choices=("off", "basic", "mem0"))
    fallback = serializers.BooleanField()
    standing = ContextFactSerializer(
        many=True,
        help_text="the candidate's standing preferences shown, bearing most on the posting first",
    )
    standing_omitted = serializers.IntegerField(
        min_value=0, help_text="standing preferences the character budget left out"
    )
    facts = ContextFactSerializer(many=True, help_text="the ranked block's facts, best first")
    block = serializers.CharField(
        allow_blank=True,
        help_text="both parts as the model sees them; empty for a held-out posting",
    )


@extend_schema_serializer(component_name="DecisionFactUsed")
class FactUsedSerializer(StrictSerializer):
    id = serializers.IntegerField(min_value=1, max_value=2**63 - 1)
    why = _text("why", max_length=MAX_WHY_CHARS)


@extend_schema_serializer(component_name="DecisionRequest")
class DecisionRequestSerializer(StrictSerializer):
    # The facts the decision was given, one way or the other (qualify.decisions).
    schema_exclusive = ("fact_ids", "facts")

    external_id = external_id()
    company = _text("company", blank="refused", required=True)
    title = _text("title", blank="refused", required=True)
    verdict = choice_field(Verdict.choices, what="verdict")
    fit_score = serializers.IntegerField(min_value=0, max_value=100)
    prompt_version = _text(
        "prompt_version", blank="refused", required=True, max_length=MAX_PROMPT_VERSION_CHARS
    )
    reasons = _text("reasons", max_length=MAX_REASONS_CHARS)
    fact_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**63 - 1),
        required=False,
        max_length=MAX_FACTS_PER_DECISION,
        help_text="the facts the decision was given (from context)",
    )
    facts = FactUsedSerializer(
        many=True,
        required=False,
        max_length=MAX_FACTS_PER_DECISION,
        help_text="or, instead of fact_ids, with why",
    )
    model = _text("model", max_length=MAX_MODEL_CHARS, help_text="the model that decided")
    standing = FactUsedSerializer(
        many=True,
        required=False,
        max_length=MAX_STANDING,
        help_text="the standing preferences the context showed beside the facts, with why",
    )
    role_category = _text("role_category")
    location = _text("location")
    remote = _text("remote", form=remote_form, help_text=REMOTE_HELP)
    salary = _text("salary")
    description = _text("description")
    url = _text("url", form=HTTP_URL, help_text="the posting's http(s) URL")


@extend_schema_serializer(component_name="Decision")
class DecisionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    created = serializers.BooleanField(help_text="false: an exact repeat, nothing written")
    external_id = serializers.CharField()
    posting_id = serializers.IntegerField()
    verdict = serializers.ChoiceField(choices=Verdict.choices)
    fit_score = serializers.IntegerField()
    prompt_version = serializers.CharField()
    arm = serializers.ChoiceField(choices=Arm.choices)
    fact_ids = serializers.ListField(child=serializers.IntegerField())
    replaced = serializers.IntegerField(
        allow_null=True, help_text="the earlier verdict this one superseded"
    )
    verdict_fact_id = serializers.IntegerField(
        allow_null=True, help_text="the memory fact that says this verdict (null: not written)"
    )
    fact_written = serializers.BooleanField(
        help_text="this call wrote the verdict fact (on a repeat: it was missing)"
    )
    fact_error = serializers.CharField(
        allow_null=True, help_text="the verdict fact was not written (memory outage); repeat"
    )


class HistoryQuerySerializer(StrictSerializer):
    external_id = external_id()


class _FactGiven(serializers.Serializer):
    id = serializers.IntegerField()
    why = serializers.CharField(allow_blank=True)


class _Verdict(serializers.Serializer):
    id = serializers.IntegerField()
    live = serializers.BooleanField(help_text="false: re-judged under a later prompt version")
    verdict = serializers.ChoiceField(choices=Verdict.choices)
    fit_score = serializers.IntegerField()
    prompt_version = serializers.CharField()
    arm = serializers.ChoiceField(choices=Arm.choices)
    reasons = serializers.CharField(allow_blank=True)
    model = serializers.CharField(allow_blank=True)
    decided_at = Timestamp()
    facts = _FactGiven(many=True, help_text="the facts the decision was given, and why")


class _OutcomeSeen(serializers.Serializer):
    id = serializers.IntegerField()
    stage = serializers.ChoiceField(choices=Stage.choices)
    note = serializers.CharField(allow_blank=True)
    occurred_at = Timestamp()
    qualification_id = serializers.IntegerField(allow_null=True)


@extend_schema_serializer(component_name="PostingHistory")
class PostingHistorySerializer(serializers.Serializer):
    external_id = serializers.CharField()
    posting_id = serializers.IntegerField()
    company = serializers.CharField()
    title = serializers.CharField()
    decisions = _Verdict(many=True, help_text="newest first")
    outcomes = _OutcomeSeen(many=True, help_text="in the order they happened")


@extend_schema_serializer(component_name="OutcomeRequest")
class OutcomeRequestSerializer(StrictSerializer):
    external_id = external_id()
    stage = choice_field(Stage.choices, what="stage")
    note = _text("note", max_length=MAX_NOTE_CHARS)


@extend_schema_serializer(component_name="Outcome")
class OutcomeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    created = serializers.BooleanField(help_text="false: already recorded, nothing written")
    external_id = serializers.CharField()
    posting_id = serializers.IntegerField()
    stage = serializers.ChoiceField(choices=Stage.choices)
    note = serializers.CharField(allow_blank=True)
    occurred_at = Timestamp()
    qualification_id = serializers.IntegerField(
        allow_null=True, help_text="the live verdict it is credited to"
    )
    fact_error = serializers.CharField(allow_null=True)


@extend_schema_serializer(component_name="FunnelRate")
class _Rate(serializers.Serializer):
    estimate = serializers.FloatField(allow_null=True)
    low = serializers.FloatField(required=False)
    high = serializers.FloatField(required=False)
    n = serializers.IntegerField()


@extend_schema_serializer(component_name="FunnelArmCounts")
class _Counts(serializers.Serializer):
    decisions = serializers.IntegerField()
    counts = serializers.DictField(child=serializers.IntegerField())


@extend_schema_serializer(component_name="FunnelStep")
class _Step(serializers.Serializer):
    step = serializers.ChoiceField(choices=STEPS)
    over = serializers.CharField()
    memory = _Rate()
    holdout = _Rate()
    difference = serializers.DictField(allow_null=True)
    conclusion = serializers.CharField()


@extend_schema_serializer(component_name="FunnelPeriod")
class _Period(serializers.Serializer):
    # "from" is a keyword: the field is declared by name below.
    to = Timestamp(allow_null=True)


_Period._declared_fields["from"] = Timestamp(allow_null=True)


@extend_schema_serializer(component_name="FunnelArms")
class _Arms(serializers.Serializer):
    status = serializers.CharField(help_text="off, ok, or not enough data yet")
    holdout_fraction = serializers.FloatField()
    min_sample_per_arm = serializers.IntegerField()
    period = _Period()
    memory = _Counts()
    holdout = _Counts()
    steps = _Step(many=True)


@extend_schema_serializer(component_name="FunnelVersion")
class _Version(serializers.Serializer):
    prompt_version = serializers.CharField()
    decisions = serializers.IntegerField()
    with_memory_facts = serializers.IntegerField()
    errors = serializers.IntegerField()
    counts = serializers.DictField(child=serializers.IntegerField())
    rates = serializers.DictField(child=serializers.FloatField(allow_null=True))


@extend_schema_serializer(component_name="FunnelNotCounted")
class _NotCounted(serializers.Serializer):
    outcomes = serializers.IntegerField(help_text="live outcomes left out for this reason")
    what = serializers.CharField(help_text="which outcomes, and why the funnel leaves them out")


@extend_schema_serializer(component_name="Funnel")
class FunnelSerializer(serializers.Serializer):
    steps = serializers.ListField(child=serializers.CharField())
    versions = _Version(many=True)
    arms = _Arms()
    not_counted = _NotCounted(many=True)
