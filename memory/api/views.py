"""One APIView per operation: input serializer (shapes only), memory's door, output serializer."""

from datetime import datetime
from typing import Any

from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_serializer,
)
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from memory import selectors, services, validation
from memory.api.base import ALWAYS, ApiView, error_responses, validated
from memory.api.permissions import CanWriteMemory
from memory.api.serializers import (
    ErrorSerializer,
    FactDetailSerializer,
    FactSerializer,
    RecalledFactSerializer,
    choice_field,
)
from memory.api.strict import StrictSerializer
from memory.api.textfields import Text
from memory.models import Kind, Memory, Source
from memory.text import MAX_TEXT_CHARS

# Largest id the BigAutoField can hold: a bigger number is simply "no such fact".
MAX_ID = 2**63 - 1
MAX_PAGE_SIZE = 200
# DRF's cursors are a few dozen characters; a longer one is not one the API made.
MAX_CURSOR_CHARS = 200

_MEANING = {404: "no such fact", 409: "the fact is already deleted"}


def _errors(*codes: int) -> dict[int, OpenApiResponse]:
    return error_responses((*ALWAYS, *codes), _MEANING)


def _fact_id(raw: str) -> int:
    # Anything that is not a usable id is a 404, like an unknown one.
    field = serializers.IntegerField(min_value=1, max_value=MAX_ID)
    try:
        return field.run_validation(raw)
    except serializers.ValidationError:
        raise NotFound(f"no fact with id {raw!r}") from None


def _as_written(row: Memory, *, stamp: datetime | None, since: datetime) -> Memory:
    """A row this request wrote has no correction yet: say so without a re-read, which could
    fail after the commit and make the client retry a write that happened."""
    if stamp is not None and stamp >= since and not Memory.superseded_by.is_cached(row):
        Memory.superseded_by.related.set_cached_value(row, None)
    return row


_ID_PARAM = OpenApiParameter(
    "id", OpenApiTypes.INT, OpenApiParameter.PATH, description="fact id (1 or more)"
)


class WriteApi(ApiView):
    # A list, not `&`: IsAuthenticated fails first so anonymous writers get 401, not 403.
    permission_classes = [IsAuthenticated, CanWriteMemory]
    throttle_scope = "write"
    write_permission = "memory.add_memory"


class ReadWriteApi(WriteApi):
    # GET reads (any authenticated user, see CanWriteMemory), unthrottled.
    def get_throttles(self) -> list[Any]:
        return [] if self.request.method == "GET" else super().get_throttles()


class RecallApi(ApiView):
    throttle_scope = "recall"
    field_names = {"query": "q"}

    @extend_schema_serializer(component_name="RecallQuery")
    class InputSerializer(StrictSerializer):
        q = Text(max_length=MAX_TEXT_CHARS, help_text="what to recall")
        company = Text(
            blank="allowed",
            required=False,
            max_length=validation.MAX_COMPANY_CHARS,
            help_text="scope: this company's facts plus global ones (omit for all)",
        )
        limit = serializers.IntegerField(
            required=False,
            min_value=1,
            max_value=validation.MAX_LIMIT,
            default=validation.DEFAULT_LIMIT,
        )

    @extend_schema_serializer(component_name="RecallResult")
    class OutputSerializer(serializers.Serializer):
        mode = serializers.ChoiceField(choices=("off", "basic", "mem0"))
        fallback = serializers.BooleanField(help_text="true when mem0 recall fell back to keywords")
        results = RecalledFactSerializer(many=True)

    @extend_schema(
        operation_id="memories_recall",
        summary="Recall the facts most relevant to a query, best first",
        parameters=[InputSerializer],
        responses={200: OutputSerializer, **_errors()},
    )
    def get(self, request: Request) -> Response:
        data = validated(self.InputSerializer, request.query_params)
        result = selectors.recall(
            query=data["q"], company=data.get("company") or None, limit=data["limit"]
        )
        return Response(self.OutputSerializer(result).data)


class FactPagination(CursorPagination):
    ordering = "-id"
    page_size = 50
    page_size_query_param = "limit"
    max_page_size = MAX_PAGE_SIZE

    def decode_cursor(self, request: Request) -> Cursor | None:
        cursor = super().decode_cursor(request)
        # DRF hands the position to the id filter unchecked: "p=abc" would be a 500 there.
        position = cursor.position if cursor is not None else None
        if position is not None and not (position.isdigit() and int(position) <= MAX_ID):
            raise NotFound(self.invalid_cursor_message)
        return cursor


class MemoryListApi(ReadWriteApi):
    @extend_schema_serializer(component_name="FactListQuery")
    class FilterSerializer(StrictSerializer):
        kind = choice_field(Kind.choices, what="kind", required=False)
        company = Text(
            required=False,
            max_length=validation.MAX_COMPANY_CHARS,
            help_text="that company's facts only",
        )
        source = choice_field(Source.choices, what="source", required=False)
        status = choice_field(
            selectors.LIST_STATUSES, what="status", required=False, default="live"
        )
        limit = serializers.IntegerField(
            required=False, min_value=1, max_value=MAX_PAGE_SIZE, help_text="page size (50)"
        )
        cursor = Text(
            required=False, max_length=MAX_CURSOR_CHARS, help_text="from a previous page's links"
        )

    @extend_schema_serializer(component_name="FactPage")
    class PageSerializer(serializers.Serializer):
        next = serializers.URLField(allow_null=True)
        previous = serializers.URLField(allow_null=True)
        results = FactSerializer(many=True)

    @extend_schema_serializer(component_name="RememberRequest")
    class InputSerializer(StrictSerializer):
        text = Text(max_length=MAX_TEXT_CHARS, help_text="the fact, plainly")
        kind = choice_field(Kind.choices, what="kind", default="note")
        company = Text(required=False, allow_null=True, max_length=validation.MAX_COMPANY_CHARS)
        ref = Text(
            blank="empty", required=False, allow_null=True, max_length=validation.MAX_REF_CHARS
        )

    @extend_schema_serializer(component_name="RememberResult")
    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        created = serializers.BooleanField(help_text="false: an exact duplicate was touched")
        seen_count = serializers.IntegerField()

    @extend_schema(
        operation_id="memories_list",
        summary="List facts, newest first (cursor pagination)",
        parameters=[FilterSerializer],
        responses={
            200: PageSerializer,
            404: OpenApiResponse(ErrorSerializer, description="the cursor is not valid"),
            **_errors(),
        },
    )
    def get(self, request: Request) -> Response:
        data = validated(self.FilterSerializer, request.query_params)
        rows = selectors.list_facts(
            kind=data.get("kind"),
            company=data.get("company"),
            source=data.get("source"),
            status=data["status"],
        )
        paginator = FactPagination()
        page = paginator.paginate_queryset(rows, request, view=self)
        return paginator.get_paginated_response(FactSerializer(page, many=True).data)

    @extend_schema(
        operation_id="memories_remember",
        summary="Remember a fact (an exact duplicate only touches the existing one)",
        request=InputSerializer,
        responses={
            201: OpenApiResponse(OutputSerializer, description="a new fact was stored"),
            200: OpenApiResponse(OutputSerializer, description="already known: touched"),
            **_errors(403, 411, 413),
        },
    )
    def post(self, request: Request) -> Response:
        data = validated(self.InputSerializer, request.data)
        result = services.remember(**data, actor=request.user.get_username())
        code = status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        return Response(self.OutputSerializer(result.to_dict()).data, status=code)


class MemoryDetailApi(ReadWriteApi):
    # Forgetting is curation like a correction: the admin's permission, so a grant means the same.
    write_permission = "memory.change_memory"

    @extend_schema_serializer(component_name="ForgetRequest")
    class ForgetSerializer(StrictSerializer):
        reason = Text(
            max_length=validation.MAX_REASON_CHARS, help_text="why it is wrong or obsolete"
        )

    @extend_schema(
        operation_id="memories_retrieve",
        summary="One fact, live or deleted, with its correction chain",
        parameters=[_ID_PARAM],
        responses={200: FactDetailSerializer, **error_responses((401, 404, 414, 503), _MEANING)},
    )
    def get(self, request: Request, pk: str) -> Response:
        memory = selectors.get_fact(id=_fact_id(pk))
        return Response(FactDetailSerializer(memory).data)

    @extend_schema(
        operation_id="memories_forget",
        summary="Forget a fact: a soft delete with a reason (JSON body or ?reason=)",
        parameters=[_ID_PARAM, ForgetSerializer],
        request=None,
        responses={200: FactSerializer, **_errors(403, 404, 409, 411, 413)},
    )
    def delete(self, request: Request, pk: str) -> Response:
        fact_id = _fact_id(pk)
        data = validated(self.ForgetSerializer, request.data or request.query_params)
        since = timezone.now()
        row = services.forget(id=fact_id, reason=data["reason"], actor=request.user.get_username())
        return Response(FactSerializer(_as_written(row, stamp=row.deleted_at, since=since)).data)


class MemoryCorrectApi(WriteApi):
    write_permission = "memory.change_memory"

    @extend_schema_serializer(component_name="CorrectRequest")
    class InputSerializer(StrictSerializer):
        text = Text(max_length=MAX_TEXT_CHARS, help_text="the corrected fact")
        reason = Text(
            max_length=validation.MAX_REASON_CHARS, help_text="why the old text was wrong"
        )

    @extend_schema(
        operation_id="memories_correct",
        summary="Correct a fact: the old row is soft-deleted, a new one supersedes it",
        parameters=[_ID_PARAM],
        request=InputSerializer,
        responses={
            201: OpenApiResponse(FactSerializer, description="the correction, a new fact"),
            200: OpenApiResponse(
                FactSerializer, description="the fact already says that: unchanged, nothing written"
            ),
            **_errors(403, 404, 409, 411, 413),
        },
    )
    def post(self, request: Request, pk: str) -> Response:
        fact_id = _fact_id(pk)
        data = validated(self.InputSerializer, request.data)
        since = timezone.now()
        new = services.correct(id=fact_id, **data, actor=request.user.get_username())
        row = _as_written(new, stamp=new.created_at, since=since)
        code = status.HTTP_200_OK if new.pk == fact_id else status.HTTP_201_CREATED
        return Response(FactSerializer(row).data, status=code)
