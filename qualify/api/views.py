"""One APIView per operation: input serializer (shapes), a qualify service, the answer."""

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import APIException, NotFound
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from memory.api.base import ALWAYS, ApiView, error_responses, validated
from memory.api.permissions import CanWriteMemory
from memory.api.strict import StrictSchema, utc_z
from qualify import decisions, outcomes, selectors
from qualify.api import serializers as shapes
from qualify.errors import DecisionConflict, PostingNotFound

_MEANING = {
    404: "no posting with that external_id; for a decision, no fact with an id it names",
    409: "a different verdict under the same prompt version is already recorded"
    " (decision_conflict), a url another external id holds (url_taken), or a company other"
    " than the posting's (company_mismatch)",
}


def _errors(*codes: int) -> dict[int, OpenApiResponse]:
    return error_responses((*ALWAYS, *codes), _MEANING)


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_code = "decision_conflict"
    default_detail = "a different decision is already recorded"


class QualifyApi(ApiView):
    """memory.api's policies, set on the view (memory.api.base), so a host project's
    REST_FRAMEWORK (or none) changes neither the rights, the throttles nor the one error
    shape."""


class ContextApi(QualifyApi):
    """Reads only, so any authenticated user may ask, by GET or (for long fields) by POST."""

    throttle_scope = "recall"
    schema = StrictSchema()

    def _answer(self, data: dict[str, Any]) -> Response:
        built = selectors.working_context(**data)
        return Response(shapes.WorkingContextSerializer(built.to_dict()).data)

    @extend_schema(
        operation_id="context_retrieve",
        summary="The working-context block for a posting: arm, prompt version, facts with why",
        parameters=[shapes.ContextQuerySerializer],
        responses={200: shapes.WorkingContextSerializer, **_errors()},
    )
    def get(self, request: Request) -> Response:
        return self._answer(validated(shapes.ContextQuerySerializer, request.query_params))

    @extend_schema(
        operation_id="context_build",
        summary="The same, for the posting's whole text (writes nothing)",
        request=shapes.ContextRequestSerializer,
        responses={200: shapes.WorkingContextSerializer, **_errors(411, 413)},
    )
    def post(self, request: Request) -> Response:
        return self._answer(validated(shapes.ContextRequestSerializer, request.data))


class WriteApi(QualifyApi):
    # A list, not `&`: IsAuthenticated fails first so anonymous writers get 401, not 403.
    permission_classes = [IsAuthenticated, CanWriteMemory]
    throttle_scope = "write"


class DecisionApi(WriteApi):
    # Recording a decision is adding a qualification, as in the admin (or the writers group).
    write_permission = "qualify.add_qualification"
    write_action = "recording decisions"

    @property
    def throttle_scope(self) -> str:  # type: ignore[override]
        # Reading a posting's history is a read: it counts against the recall rate.
        return "recall" if self.request.method == "GET" else "write"

    @extend_schema(
        operation_id="decisions_retrieve",
        summary="What was decided on a posting (newest first) and the outcomes that followed",
        parameters=[shapes.HistoryQuerySerializer],
        responses={200: shapes.PostingHistorySerializer, **_errors(404)},
    )
    def get(self, request: Request) -> Response:
        data = validated(shapes.HistoryQuerySerializer, request.query_params)
        try:
            history = selectors.posting_history(**data)
        except PostingNotFound as exc:
            raise NotFound(str(exc)) from None
        return Response(shapes.PostingHistorySerializer(history).data)

    @extend_schema(
        operation_id="decisions_record",
        summary="Record a decision: the posting, the decision event and its verdict fact",
        request=shapes.DecisionRequestSerializer,
        responses={
            201: OpenApiResponse(shapes.DecisionSerializer, description="a new decision"),
            200: OpenApiResponse(shapes.DecisionSerializer, description="an exact repeat"),
            **_errors(403, 404, 409, 411, 413),
        },
    )
    def post(self, request: Request) -> Response:
        data = validated(shapes.DecisionRequestSerializer, request.data)
        try:
            done = decisions.record_decision(**data)
        except DecisionConflict as exc:
            raise Conflict(str(exc), code=getattr(exc, "code", Conflict.default_code)) from None
        code = status.HTTP_201_CREATED if done.created else status.HTTP_200_OK
        return Response(shapes.DecisionSerializer(done.to_dict()).data, status=code)


class OutcomeApi(WriteApi):
    write_permission = "qualify.add_outcome"
    write_action = "recording outcomes"

    @extend_schema(
        operation_id="outcomes_record",
        summary="Record a stage the application reached, and its outcome fact",
        request=shapes.OutcomeRequestSerializer,
        responses={
            201: OpenApiResponse(shapes.OutcomeSerializer, description="a new outcome"),
            200: OpenApiResponse(shapes.OutcomeSerializer, description="already recorded"),
            **_errors(403, 404, 411, 413),
        },
    )
    def post(self, request: Request) -> Response:
        data = validated(shapes.OutcomeRequestSerializer, request.data)
        try:
            done = outcomes.record_outcome(**data)
        except PostingNotFound as exc:
            raise NotFound(str(exc)) from None
        code = status.HTTP_201_CREATED if done.created else status.HTTP_200_OK
        return Response(shapes.OutcomeSerializer(done.to_dict()).data, status=code)


class FunnelApi(QualifyApi):
    throttle_classes: list[Any] = []  # a read, like listing facts

    @extend_schema(
        operation_id="funnel_retrieve",
        summary="The funnel per prompt version and the memory arm against the holdout",
        responses={200: shapes.FunnelSerializer, **error_responses((401, 414, 503), _MEANING)},
    )
    def get(self, request: Request) -> Response:
        report = selectors.funnel_report()
        period = report["arms"]["period"]
        period.update({edge: utc_z(moment) for edge, moment in period.items()})
        return Response(report)
