"""The one door for reads from memory: recall, standing preferences, get_fact, list_facts
(validated like writes), and the credentials found in stored texts."""

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from django.db.models import QuerySet

from memory import index, keyword, modes, redaction
from memory.errors import FactNotFound, MemoryInputError
from memory.models import Kind, Memory, Source

# A posting's description as qualify's prompt reads it, which the secrets screen reads too.
from memory.reading import plain  # noqa: F401
from memory.validation import (
    DEFAULT_LIMIT,
    clean_choice,
    clean_company,
    clean_id,
    clean_limit,
    clean_text,
)

LIST_STATUSES = ("live", "deleted", "all")


@dataclass(frozen=True)
class RecalledFact:
    # keyword.ROW_FIELDS in order, then the score: a row unpacks straight into one.
    id: int
    text: str
    kind: str
    company: str | None
    ref: str | None
    created_at: datetime
    last_seen_at: datetime
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "score": round(self.score, 6),
            "created_at": self.created_at.isoformat(),
            "last_seen_at": self.last_seen_at.isoformat(),
        }


@dataclass(frozen=True)
class RecallResult:
    mode: str
    fallback: bool
    results: list[RecalledFact]

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "results": [r.to_dict() for r in self.results]}


def recall(*, query: str, company: str | None = None, limit: int = DEFAULT_LIMIT) -> RecallResult:
    """Ranked live facts for a query, scoped to a company (plus global facts) when given."""
    query = clean_text(query, what="query")
    _, company_key = clean_company(company)
    limit = clean_limit(limit)
    mode = modes.current()
    if mode == modes.OFF:
        return RecallResult(mode=mode, fallback=False, results=[])
    if mode == modes.MEM0:
        # None means the index is down: fall back to keyword (ADR 0009); stale candidates
        # (a since-forgotten fact's vector) are dropped by _materialise.
        semantic = index.search(query=query, company_key=company_key, limit=limit)
        if semantic is not None:
            return RecallResult(mode=mode, fallback=False, results=_materialise(semantic)[:limit])
    hits = keyword.search(query=query, company_key=company_key, limit=limit)
    return RecallResult(mode=mode, fallback=mode == modes.MEM0, results=_materialise(hits))


MAX_QUERIES = 64


def _clean_queries(queries: Any) -> list[str]:
    if not isinstance(queries, list) or not 1 <= len(queries) <= MAX_QUERIES:
        raise MemoryInputError(
            f"queries must be a list of 1 to {MAX_QUERIES} texts", field="queries"
        )
    return [clean_text(q, what="query") for q in queries]


def recall_many(
    *,
    queries: list[str],
    company: str | None = None,
    limit: int = DEFAULT_LIMIT,
    per_side: bool = False,
) -> tuple[list[list[RecalledFact]], bool]:
    """Each query's ranked live facts, scoped as ``recall``, and whether recall fell back to
    keywords. Semantic mode ranks by the dense half alone, so every list's scores are cosine
    similarities on one scale and can be compared across queries; keyword mode (and semantic
    mode with the index down) ranks each query as ``recall`` does. With a company and
    ``per_side``, each list holds up to ``limit`` of the company's facts and up to ``limit``
    unscoped ones, so that neither side's candidates crowd out the other's."""
    queries = _clean_queries(queries)
    _, company_key = clean_company(company)
    limit = clean_limit(limit)
    mode = modes.current()
    if mode == modes.OFF:
        return [[] for _ in queries], False
    if mode == modes.MEM0:
        dense = index.nearest_many(
            queries=queries, company_key=company_key, limit=limit, per_side=per_side
        )
        if dense is not None:
            return _materialise_many(dense), False
    hits = keyword.search_many(
        queries=queries, company_key=company_key, limit=limit, per_side=per_side
    )
    return _materialise_many(hits), mode == modes.MEM0


def similarities(*, queries: list[str], ids: list[int]) -> Any:
    """The semantic index's cosine of each of ``queries`` with each fact of ``ids`` (a float
    array, queries x facts; 0 for a fact not indexed yet), or None outside semantic mode or
    with the index down (rank by keywords)."""
    if not isinstance(ids, list):
        raise MemoryInputError("ids must be a list of fact ids", field="ids")
    return index.similarities(
        queries=_clean_queries(queries), ledger_ids=[clean_id(i) for i in ids]
    )


def _materialise(hits: list[keyword.Hit]) -> list[RecalledFact]:
    return _materialise_many([hits])[0]


def _materialise_many(lists: list[list[keyword.Hit]]) -> list[list[RecalledFact]]:
    # A single keyword search's hits carry their rows already; the others are read at once.
    missing = {h.memory_id for hits in lists for h in hits if h.row is None}
    rows = _rows(missing) if missing else {}  # no query at all when every hit has its row
    # A fact deleted between ranking and fetch has no row: never return a dead fact.
    return [
        [
            RecalledFact(*row, score=hit.score)
            for hit in hits
            if (row := hit.row or rows.get(hit.memory_id)) is not None
        ]
        for hits in lists
    ]


@dataclass(frozen=True)
class Preference:
    """A standing preference as ranking reads it: its id and its words."""

    id: int
    text: str


def standing_preferences(*, before: datetime | None = None) -> list[Preference]:
    """Every live unscoped preference (written before ``before`` if given), newest first: the
    candidate's standing criteria, which every decision shows whatever the posting says
    (qualify's context). Id and text alone, since a ledger may hold a thousand of them and a
    posting shows a score; ``facts`` reads the shown ones whole."""
    if modes.current() == modes.OFF:
        return []
    rows = Memory.objects.filter(kind=Kind.PREFERENCE, company_key__isnull=True)
    if before is not None:
        rows = rows.filter(created_at__lt=before)
    return [
        Preference(*row) for row in rows.order_by("-created_at", "-id").values_list("id", "text")
    ]


def facts(ids: list[int]) -> list[RecalledFact]:
    """The live facts of ``ids``, in that order (score 0); one forgotten since is left out."""
    rows = _rows(ids)
    return [RecalledFact(*rows[pk], score=0.0) for pk in ids if pk in rows]


def _rows(ids: Iterable[int]) -> dict[int, tuple]:
    """The live facts of ``ids`` as keyword.ROW_FIELDS rows, by id."""
    return {
        row[0]: row for row in Memory.objects.filter(pk__in=ids).values_list(*keyword.ROW_FIELDS)
    }


def get_fact(*, id: int) -> Memory:
    """One fact by id, live or deleted (the audit view)."""
    try:
        return Memory.all_objects.select_related("supersedes").get(pk=clean_id(id))
    except Memory.DoesNotExist:
        raise FactNotFound(f"no fact with id {id}") from None


def list_facts(
    *,
    kind: str | None = None,
    company: str | None = None,
    source: str | None = None,
    status: str = "live",
    unscoped: bool = False,
) -> QuerySet[Memory]:
    """Facts for browsing (API listing), newest id first; ``company`` means that company only,
    ``unscoped`` the facts of no company (the candidate's own)."""
    status = clean_choice(status, what="status", choices=list(LIST_STATUSES))
    rows = Memory.all_objects.select_related("superseded_by").order_by("-id")
    if status == "live":
        rows = rows.alive()
    elif status == "deleted":
        rows = rows.deleted()
    if kind is not None:
        rows = rows.filter(kind=clean_choice(kind, what="kind", choices=Kind.values))
    if source is not None:
        rows = rows.filter(source=clean_choice(source, what="source", choices=Source.values))
    if company is not None:
        rows = rows.filter(company_key=clean_company(company)[1])
    if unscoped:
        rows = rows.filter(company_key__isnull=True)
    return rows


def stored_credentials() -> list[redaction.Finding]:
    """Every stored text the current secrets screen flags, by table, row id, field and kinds;
    never the value (memory.services.redact replaces them)."""
    return redaction.find()
