"""The one door to memory. Every caller (commands, API, MCP, admin, qualify) uses these.

Writes: remember, correct, forget, import_facts. Reads: recall, get_fact.
All functions are keyword-only, validate everything before touching the database, and raise
``memory.errors`` exceptions with one-line messages.
"""

import functools
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import F, QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from memory import bitmaps, index, keyword, modes
from memory import text as textmod
from memory.errors import FactAlreadyDeleted, FactNotFound, MemoryInputError, SecretRefused

# Kind and Source are part of the door's vocabulary: callers (qualify) name them as
# services.Kind / services.Source and never import memory.models.
from memory.models import Kind, Memory, Source
from memory.credentials import find_secrets

log = logging.getLogger("karani.memory")

DEFAULT_LIMIT = 5
MAX_LIMIT = 100
MAX_REASON_CHARS = 500
MAX_REF_CHARS = 200
MAX_COMPANY_CHARS = 200
MAX_ACTOR_CHARS = 150


# --- validation ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CleanFact:
    text: str
    kind: str
    company: str | None
    company_key: str | None
    source: str
    fit_score: int | None
    ref: str | None
    fact_key: str


def clean_text(value: Any, *, what: str = "text", max_chars: int = textmod.MAX_TEXT_CHARS) -> str:
    if not isinstance(value, str):
        raise MemoryInputError(f"{what} must be a string")
    if textmod.has_control_chars(value):
        raise MemoryInputError(f"{what} contains NUL or other control characters")
    stripped = value.strip()
    if not stripped:
        raise MemoryInputError(f"{what} is empty")
    if len(stripped) > max_chars:
        raise MemoryInputError(f"{what} is {len(stripped)} characters; the limit is {max_chars}")
    return stripped


def clean_company(value: Any) -> tuple[str | None, str | None]:
    """(display name, key) for a company, or (None, None) for global."""
    if value is None:
        return None, None
    if not isinstance(value, str):
        raise MemoryInputError("company must be a string")
    if textmod.has_control_chars(value):
        raise MemoryInputError("company contains NUL or other control characters")
    display = textmod.collapse(value)
    key = textmod.company_key(value)
    if not key:
        raise MemoryInputError(
            "company name is empty after normalisation; omit it for a global fact"
        )
    # The key can outgrow the name ("ß" casefolds to "ss"); both share the column limit.
    if max(len(display), len(key)) > MAX_COMPANY_CHARS:
        raise MemoryInputError(f"company is longer than {MAX_COMPANY_CHARS} characters")
    return display, key


def _clean_choice(value: Any, *, what: str, choices: list[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise MemoryInputError(f"unknown {what} {value!r}; use one of: {', '.join(choices)}")
    return value


def _clean_fit_score(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise MemoryInputError("fit score must be a whole number from 0 to 100")
    if not 0 <= value <= 100:
        raise MemoryInputError(f"fit score {value} is outside 0-100")
    return value


def _clean_ref(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return clean_text(value, what="ref", max_chars=MAX_REF_CHARS)


def _clean_reason(value: Any) -> str:
    if value is None or (isinstance(value, str) and not value.strip()):
        raise MemoryInputError("a reason is required")
    return clean_text(value, what="reason", max_chars=MAX_REASON_CHARS)


def _clean_actor(value: Any) -> str:
    if not value:
        return ""
    if not isinstance(value, str):
        raise MemoryInputError("actor must be a string")
    return value[:MAX_ACTOR_CHARS]


def _refuse_secrets(value: str, *, what: str = "text") -> None:
    found = find_secrets(value)
    if found:
        kinds = ", ".join(f.kind for f in found)
        raise SecretRefused(
            f"refused: {what} looks like it contains a credential ({kinds}); nothing was stored",
            field=what,
            kinds=tuple(f.kind for f in found),
        )


def validate_fact(
    *,
    text: Any,
    kind: Any = Kind.NOTE,
    company: Any = None,
    source: Any = Source.TEACH,
    fit_score: Any = None,
    ref: Any = None,
) -> CleanFact:
    """Everything remember() checks, without writing. Raises MemoryInputError."""
    clean = clean_text(text)
    kind = _clean_choice(kind, what="kind", choices=Kind.values)
    source = _clean_choice(source, what="source", choices=Source.values)
    display, key = clean_company(company)
    score = _clean_fit_score(fit_score)
    ref_clean = _clean_ref(ref)
    _refuse_secrets(clean)
    if ref_clean:
        _refuse_secrets(ref_clean, what="ref")
    return CleanFact(
        text=clean,
        kind=kind,
        company=display,
        company_key=key,
        source=source,
        fit_score=score,
        ref=ref_clean,
        fact_key=textmod.fact_key(text=clean, kind=kind, company_key=key),
    )


# --- writes -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RememberResult:
    memory: Memory
    created: bool

    @property
    def id(self) -> int:
        return self.memory.pk

    @property
    def seen_count(self) -> int:
        return self.memory.seen_count

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "created": self.created, "seen_count": self.seen_count}


def remember(
    *,
    text: str,
    kind: str = Kind.NOTE,
    company: str | None = None,
    source: str = Source.TEACH,
    fit_score: int | None = None,
    ref: str | None = None,
    actor: str = "",
) -> RememberResult:
    """Store a fact, or touch its live twin (same text, kind and company)."""
    fact = validate_fact(
        text=text, kind=kind, company=company, source=source, fit_score=fit_score, ref=ref
    )
    result = _write(fact, actor=_clean_actor(actor), now=timezone.now())
    if result.created:
        _index_on_commit([result.id])
    return result


def _touch(fact_key: str, now: datetime) -> Memory | None:
    # UPDATE ... RETURNING (SQLite >= 3.35): the touched row in the same statement. On
    # PostgreSQL karani_remember() touches in the database (_write_pg).
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Memory._meta.db_table} SET seen_count = seen_count + 1,"
            " last_seen_at = %s WHERE fact_key = %s AND deleted_at IS NULL"
            f" RETURNING {_columns()}",
            [connection.ops.adapt_datetimefield_value(now), fact_key],
        )
        row = cursor.fetchone()
    return None if row is None else _memory_from_row(row)


def _columns(prefix: str = "") -> str:
    return ", ".join(
        prefix + connection.ops.quote_name(f.column) for f in Memory._meta.concrete_fields
    )


def _memory_from_row(row: tuple) -> Memory:
    """A Memory from raw column values in concrete-field order, through the backend's
    converters, as the ORM would build it."""
    attnames, converters = _row_converters(connection.vendor)
    values = list(row)
    for i, col, convert in converters:
        values[i] = convert(values[i], col, connection)
    return Memory.from_db(connection.alias, attnames, values)


@functools.cache
def _row_converters(vendor: str) -> tuple[list[str], list[tuple[int, Any, Any]]]:
    # Looked up once per backend: asking every field for its converters on every write
    # cost ~0.3 ms, more than the conversions (on Postgres there are almost none).
    fields = Memory._meta.concrete_fields
    converters = []
    for i, model_field in enumerate(fields):
        col = model_field.get_col(Memory._meta.db_table)
        for convert in connection.ops.get_db_converters(col) + col.get_db_converters(connection):
            converters.append((i, col, convert))
    return [f.attname for f in fields], converters


def _row_fields(
    fact: CleanFact, *, actor: str, now: datetime, created_at: datetime | None
) -> dict[str, Any]:
    """The columns of a new fact row, shared by the single and the bulk write paths."""
    return {
        "text": fact.text,
        "kind": fact.kind,
        "company": fact.company,
        "company_key": fact.company_key,
        "source": fact.source,
        "fit_score": fact.fit_score,
        "ref": fact.ref,
        "fact_key": fact.fact_key,
        "created_at": created_at or now,
        "last_seen_at": now,
        "created_by": actor,
    }


def _write(
    fact: CleanFact,
    *,
    actor: str,
    now: datetime,
    created_at: datetime | None = None,
    supersedes: Memory | None = None,
) -> RememberResult:
    """Touch the fact's live twin, or insert it and set its keyword bits."""
    if connection.vendor == "postgresql":
        return _write_pg(fact, actor=actor, now=now, created_at=created_at, supersedes=supersedes)
    with transaction.atomic():
        bitmaps.lock_writes()
        existing = _touch(fact.fact_key, now)
        if existing is not None:
            return RememberResult(existing, created=False)
        try:
            # A savepoint, so losing the race below leaves the outer transaction usable.
            with transaction.atomic():
                memory = Memory.all_objects.create(
                    **_row_fields(fact, actor=actor, now=now, created_at=created_at),
                    supersedes=supersedes,
                )
                _index_keywords([memory])
        except IntegrityError:
            # Another writer inserted the same live fact between our touch and insert (the
            # partial unique constraint said so, after waiting for its commit): touch theirs.
            existing = _touch(fact.fact_key, now)
            if existing is None:
                raise
            return RememberResult(existing, created=False)
    return RememberResult(memory, created=True)


def _write_pg(
    fact: CleanFact,
    *,
    actor: str,
    now: datetime,
    created_at: datetime | None,
    supersedes: Memory | None,
) -> RememberResult:
    """The same steps in one statement: karani_remember() (migration 0009).

    Outside a transaction (a plain remember()) the statement is the whole transaction, so a
    new fact costs one round trip instead of seven; inside one (correct(), an import's
    fallback) it joins it, as the Python path would.
    """
    fields = _row_fields(fact, actor=actor, now=now, created_at=created_at)
    adapt = connection.ops.adapt_datetimefield_value
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT r.created, {_columns('(r.fact).')} FROM karani_remember("
            "%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::text[], %s, %s, %s) AS r",
            [
                bitmaps.WRITE_LOCK_KEY,
                fields["text"],
                fields["kind"],
                fields["company"],
                fields["company_key"],
                fields["source"],
                fields["fit_score"],
                fields["ref"],
                fields["fact_key"],
                adapt(fields["created_at"]),
                adapt(fields["last_seen_at"]),
                fields["created_by"],
                supersedes.pk if supersedes is not None else None,
                sorted(set(bitmaps.fact_terms(textmod.tokens(fact.text), fact.company_key))),
                bitmaps.BLOCK_BITS,
                bitmaps.sparse_max(),
                bitmaps.BLOCK_BYTES,
            ],
        )
        created, *row = cursor.fetchone()
    return RememberResult(_memory_from_row(tuple(row)), created=created)


def _index_keywords(memories: Iterable[Memory]) -> None:
    bitmaps.add((m.pk, bitmaps.fact_terms(textmod.tokens(m.text), m.company_key)) for m in memories)


def _index_on_commit(memory_ids: list[int]) -> None:
    # After commit, outside the ledger transaction: the semantic index is best effort.
    transaction.on_commit(lambda: index.added(memory_ids))


def _live_for_update(memory_id: Any) -> Memory:
    if isinstance(memory_id, bool) or not isinstance(memory_id, int) or memory_id < 1:
        raise MemoryInputError(f"fact id must be a positive whole number, not {memory_id!r}")
    try:
        memory = Memory.all_objects.select_for_update().get(pk=memory_id)
    except Memory.DoesNotExist:
        raise FactNotFound(f"no fact with id {memory_id}") from None
    if memory.deleted_at is not None:
        raise FactAlreadyDeleted(
            f"fact {memory_id} was already deleted on {memory.deleted_at:%Y-%m-%d %H:%M} "
            f"({memory.delete_reason})"
        )
    return memory


def _soft_delete(memory: Memory, *, reason: str, actor: str, now: datetime) -> None:
    memory.deleted_at = now
    memory.delete_reason = reason
    memory.deleted_by = actor
    memory.save(update_fields=["deleted_at", "delete_reason", "deleted_by"])
    # The keyword index holds live facts only; the fact itself stays, as history.
    bitmaps.remove(
        [(memory.pk, bitmaps.fact_terms(textmod.tokens(memory.text), memory.company_key))]
    )


def forget(*, id: int, reason: str, actor: str = "") -> Memory:
    """Soft-delete a live fact with a reason. Returns the (now deleted) row."""
    reason = _clean_reason(reason)
    actor = _clean_actor(actor)
    with transaction.atomic():
        bitmaps.lock_writes()
        memory = _live_for_update(id)
        _soft_delete(memory, reason=reason, actor=actor, now=timezone.now())
    transaction.on_commit(lambda: index.removed([memory.pk]))
    return memory


def correct(*, id: int, text: str, reason: str, actor: str = "") -> Memory:
    """Replace a live fact's text: the old row is soft-deleted, a new row supersedes it.

    Both happen in one transaction. Kind, company, fit score and ref carry over.
    """
    reason = _clean_reason(reason)
    actor = _clean_actor(actor)
    new_text = clean_text(text)
    _refuse_secrets(new_text)
    now = timezone.now()
    with transaction.atomic():
        bitmaps.lock_writes()
        old = _live_for_update(id)
        fact = validate_fact(
            text=new_text,
            kind=old.kind,
            company=old.company,
            source=Source.CORRECTION,
            fit_score=old.fit_score,
            ref=old.ref,
        )
        if fact.fact_key == old.fact_key:
            raise MemoryInputError(f"the new text is the same fact as {old.pk}; nothing to correct")
        twin = Memory.objects.filter(fact_key=fact.fact_key).values_list("pk", flat=True).first()
        if twin is not None:
            raise MemoryInputError(
                f"the corrected text is already live as fact {twin}; forget {old.pk} instead"
            )
        _soft_delete(old, reason=reason, actor=actor, now=now)
        result = _write(fact, actor=actor, now=now, supersedes=old)
        if not result.created:  # a concurrent writer beat us to the same text
            raise MemoryInputError(
                f"the corrected text is already live as fact {result.id}; forget {old.pk} instead"
            )
    transaction.on_commit(lambda: index.removed([old.pk]))
    _index_on_commit([result.id])
    return result.memory


# --- bulk import --------------------------------------------------------------------------


@dataclass
class ImportReport:
    created: int = 0
    touched: int = 0
    rejected: list[tuple[int, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "created": self.created,
            "touched": self.touched,
            "rejected": len(self.rejected),
            "rejects": [{"line": n, "error": e} for n, e in self.rejected],
        }


IMPORT_FIELDS = {"text", "kind", "company", "ref", "created_at", "fit_score", "source"}


def _parse_created_at(value: Any) -> datetime | None:
    if value is None:
        return None
    parsed = parse_datetime(value) if isinstance(value, str) else None
    if parsed is None:
        raise MemoryInputError(f"created_at {value!r} is not an ISO 8601 date-time")
    if timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed, timezone.get_default_timezone())
    if parsed > timezone.now():
        raise MemoryInputError("created_at is in the future")
    return parsed


def import_facts(
    *, records: Iterable[tuple[int, Any]], actor: str = "", batch_size: int = 500
) -> ImportReport:
    """Import ``(line_number, record)`` pairs; a bad record is reported, never fatal.

    Each record is a dict with ``text`` and optional ``kind``, ``company``, ``ref``,
    ``created_at``, ``fit_score`` and ``source`` (default ``import``). Same validation and
    dedupe as remember(). Batches commit independently, so a crash mid-file keeps what
    was already imported, and re-running the file only touches those rows.
    """
    report = ImportReport()
    actor = _clean_actor(actor)
    batch: list[tuple[int, CleanFact, datetime | None]] = []
    for line_no, record in records:
        try:
            batch.append((line_no, *_clean_import_record(record)))
        except MemoryInputError as exc:
            report.rejected.append((line_no, str(exc)))
            continue
        if len(batch) >= batch_size:
            _import_batch(batch, report, actor)
            batch = []
    if batch:
        _import_batch(batch, report, actor)
    return report


def _clean_import_record(record: Any) -> tuple[CleanFact, datetime | None]:
    if not isinstance(record, dict):
        raise MemoryInputError("each line must be a JSON object")
    unknown = set(record) - IMPORT_FIELDS
    if unknown:
        raise MemoryInputError(f"unknown field(s): {', '.join(sorted(unknown))}")
    if "text" not in record:
        raise MemoryInputError("text is missing")
    fact = validate_fact(
        text=record["text"],
        kind=record.get("kind") or Kind.NOTE,
        company=record.get("company"),
        source=record.get("source") or Source.IMPORT,
        fit_score=record.get("fit_score"),
        ref=record.get("ref"),
    )
    return fact, _parse_created_at(record.get("created_at"))


def _live_twins(fact_keys: set[str]) -> set[str]:
    """Which of these facts already have a live row, locked until the batch commits.

    The lock (Postgres; SQLite's IMMEDIATE transactions already serialise writers) keeps a
    concurrent forget from deleting a twin between this read and the batch's touch.
    """
    return set(
        Memory.objects.filter(fact_key__in=fact_keys)
        .order_by("pk")
        .select_for_update()
        .values_list("fact_key", flat=True)
    )


def _import_batch(
    batch: list[tuple[int, CleanFact, datetime | None]], report: ImportReport, actor: str
) -> None:
    now = timezone.now()
    with transaction.atomic():
        bitmaps.lock_writes()
        live = _live_twins({f.fact_key for _, f, _ in batch})
        fresh: dict[str, Memory] = {}
        # Touches of rows that were live before the batch: applied in one UPDATE per fact.
        touches: dict[str, int] = {}
        for _, fact, created_at in batch:
            if fact.fact_key in live or fact.fact_key in fresh:
                touches[fact.fact_key] = touches.get(fact.fact_key, 0) + 1
                continue
            fresh[fact.fact_key] = Memory(
                **_row_fields(fact, actor=actor, now=now, created_at=created_at)
            )
        touched_by_fallback = 0
        try:
            with transaction.atomic():
                created = Memory.all_objects.bulk_create(list(fresh.values()))
                _index_keywords(created)
        except IntegrityError:
            # A concurrent writer committed one of the new facts after our read: write the
            # new facts (and their in-file duplicates) row by row, which resolves each
            # collision by touching. Those touches are done by _write, so they leave the
            # pending `touches` and are only counted.
            created = []
            for _, fact, created_at in batch:
                if fact.fact_key not in fresh:
                    continue
                touches.pop(fact.fact_key, None)
                result = _write(fact, actor=actor, now=now, created_at=created_at)
                if result.created:
                    created.append(result.memory)
                else:
                    touched_by_fallback += 1
        for key, count in touches.items():
            Memory.objects.filter(fact_key=key).update(
                seen_count=F("seen_count") + count, last_seen_at=now
            )
    report.created += len(created)
    report.touched += sum(touches.values()) + touched_by_fallback
    _index_on_commit([m.pk for m in created])


# --- reads --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecalledFact:
    id: int
    text: str
    kind: str
    company: str | None
    score: float
    ref: str | None
    created_at: datetime
    last_seen_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text,
            "kind": self.kind,
            "company": self.company,
            "score": round(self.score, 6),
            "ref": self.ref,
            "created_at": self.created_at.isoformat(),
            "last_seen_at": self.last_seen_at.isoformat(),
        }


@dataclass(frozen=True)
class RecallResult:
    mode: str
    fallback: bool
    results: list[RecalledFact]

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "fallback": self.fallback,
            "results": [r.to_dict() for r in self.results],
        }


def clean_limit(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MemoryInputError(f"limit must be a whole number from 1 to {MAX_LIMIT}")
    if not 1 <= value <= MAX_LIMIT:
        raise MemoryInputError(f"limit {value} is outside 1-{MAX_LIMIT}")
    return value


def recall(*, query: str, company: str | None = None, limit: int = DEFAULT_LIMIT) -> RecallResult:
    """Ranked live facts for a query, scoped to a company (plus global facts) when given."""
    query = clean_text(query, what="query")
    _, company_key = clean_company(company)
    limit = clean_limit(limit)
    mode = modes.current()
    if mode == modes.OFF:
        return RecallResult(mode=mode, fallback=False, results=[])
    if mode == modes.MEM0:
        # Candidates may be stale (a vector of a since-forgotten fact): _materialise keeps
        # live rows only. None means the index is down: fall back to keyword (ADR 0009).
        semantic = index.search(query=query, company_key=company_key, limit=limit)
        if semantic is not None:
            return RecallResult(mode=mode, fallback=False, results=_materialise(semantic)[:limit])
    hits = keyword.search(query=query, company_key=company_key, limit=limit)
    return RecallResult(mode=mode, fallback=mode == modes.MEM0, results=_materialise(hits))


def _recalled_rows(ids: list[int]) -> list[tuple]:
    """The live rows of ``ids`` as plain tuples of keyword.ROW_FIELDS."""
    if connection.vendor == "postgresql":
        # Raw SQL: compiling the ORM query costs twice the query itself (0.8 vs 0.4 ms), on
        # every recall. Postgres hands back aware datetimes, as the ORM would.
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT {', '.join(keyword.ROW_FIELDS)} FROM {Memory._meta.db_table}"
                " WHERE id = ANY(%s) AND deleted_at IS NULL",
                [ids],
            )
            return cursor.fetchall()
    # Elsewhere the ORM's converters turn stored text into datetimes.
    return list(Memory.objects.filter(pk__in=ids).values_list(*keyword.ROW_FIELDS))


def _materialise(hits: list[keyword.Hit]) -> list[RecalledFact]:
    # Keyword hits on Postgres carry their rows already; semantic hits never do.
    missing = [h.memory_id for h in hits if h.row is None]
    rows = {row[0]: row for row in _recalled_rows(missing)} if missing else {}
    out = []
    for hit in hits:
        row = hit.row or rows.get(hit.memory_id)
        if row is None:  # deleted between ranking and fetch: never return a dead fact
            continue
        pk, text, kind, company, ref, created_at, last_seen_at = row
        out.append(
            RecalledFact(
                id=pk,
                text=text,
                kind=kind,
                company=company,
                score=hit.score,
                ref=ref,
                created_at=created_at,
                last_seen_at=last_seen_at,
            )
        )
    return out


def compact_index() -> dict[str, Any]:
    """Store each term's keyword-index rows together (memory.bitmaps.compact)."""
    return bitmaps.compact()


def keyword_index_layout() -> dict[str, Any]:
    """The keyword index's size and closeness to term order (memory.bitmaps.layout)."""
    return bitmaps.layout()


def get_fact(*, id: int) -> Memory:
    """One fact by id, live or deleted (the audit view)."""
    if isinstance(id, bool) or not isinstance(id, int) or id < 1:
        raise MemoryInputError(f"fact id must be a positive whole number, not {id!r}")
    try:
        return Memory.all_objects.select_related("supersedes").get(pk=id)
    except Memory.DoesNotExist:
        raise FactNotFound(f"no fact with id {id}") from None


LIST_STATUSES = ("live", "deleted", "all")


def list_facts(
    *,
    kind: str | None = None,
    company: str | None = None,
    source: str | None = None,
    status: str = "live",
) -> QuerySet[Memory]:
    """Facts for browsing (API listing), newest id first; ``company`` means that company only."""
    status = _clean_choice(status, what="status", choices=list(LIST_STATUSES))
    rows = Memory.all_objects.select_related("superseded_by").order_by("-id")
    if status == "live":
        rows = rows.alive()
    elif status == "deleted":
        rows = rows.deleted()
    if kind is not None:
        rows = rows.filter(kind=_clean_choice(kind, what="kind", choices=Kind.values))
    if source is not None:
        rows = rows.filter(source=_clean_choice(source, what="source", choices=Source.values))
    if company is not None:
        rows = rows.filter(company_key=clean_company(company)[1])
    return rows


def iter_all_facts(*, chunk_size: int = 2000) -> Iterator[Memory]:
    """Every row, deleted included, oldest first: what export writes."""
    return Memory.all_objects.order_by("id").iterator(chunk_size=chunk_size)


# --- export / restore ---------------------------------------------------------------------

EXPORT_FIELDS = (
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
    "deleted_at",
    "delete_reason",
    "deleted_by",
    "supersedes",
)


def export_record(memory: Memory) -> dict[str, Any]:
    """One row as export writes it: every column needed to restore it exactly."""
    record: dict[str, Any] = {}
    for name in EXPORT_FIELDS:
        value = memory.supersedes_id if name == "supersedes" else getattr(memory, name)
        record[name] = value.isoformat() if isinstance(value, datetime) else value
    return record


def restore_facts(*, records: Iterable[tuple[int, Any]]) -> int:
    """Load an ``export`` file into an empty ledger, ids, history and chains included.

    All or nothing: any bad line aborts the whole restore with its line number.
    """
    if Memory.all_objects.exists():
        raise MemoryInputError("restore needs an empty ledger; this one already has facts")
    rows: list[Memory] = []
    line_of: dict[int, int] = {}
    live_keys: set[str] = set()
    for line_no, record in records:
        try:
            row = _restore_row(record)
            # Checked here, not left to the constraints, so the error names the line.
            if row.pk in line_of:
                raise MemoryInputError(f"id {row.pk} already appears on line {line_of[row.pk]}")
            if row.deleted_at is None:
                if row.fact_key in live_keys:
                    raise MemoryInputError("a second live copy of the same fact")
                live_keys.add(row.fact_key)
        except MemoryInputError as exc:
            raise MemoryInputError(f"line {line_no}: {exc}") from None
        line_of[row.pk] = line_no
        rows.append(row)
    replaced: set[int] = set()
    for row in rows:
        if row.supersedes_id is None:
            continue
        where = f"line {line_of[row.pk]}: supersedes {row.supersedes_id}"
        if row.supersedes_id not in line_of:
            raise MemoryInputError(f"{where}, which is not in the file")
        if row.supersedes_id in replaced:  # a fact is corrected once; its successor after
            raise MemoryInputError(f"{where}, which another row already supersedes")
        replaced.add(row.supersedes_id)
    with transaction.atomic():
        bitmaps.lock_writes()
        if Memory.all_objects.exists():  # someone wrote while we parsed
            raise MemoryInputError("restore needs an empty ledger; this one already has facts")
        # Chains point backwards (a correction supersedes an older id), so id order is
        # insertion order for the foreign key.
        rows.sort(key=lambda m: m.pk)
        Memory.all_objects.bulk_create(rows, batch_size=1000)
        _index_keywords([m for m in rows if m.deleted_at is None])
        _reset_sequence()
    _index_on_commit([m.pk for m in rows if m.deleted_at is None])
    return len(rows)


def _restore_row(record: Any) -> Memory:
    if not isinstance(record, dict) or set(record) != set(EXPORT_FIELDS):
        raise MemoryInputError("not an export record (run `export` to make one)")
    fact = validate_fact(
        text=record["text"],
        kind=record["kind"],
        company=record["company"],
        source=record["source"],
        fit_score=record["fit_score"],
        ref=record["ref"],
    )
    ident = record["id"]
    if isinstance(ident, bool) or not isinstance(ident, int) or ident < 1:
        raise MemoryInputError("id must be a positive whole number")
    seen = record["seen_count"]
    if isinstance(seen, bool) or not isinstance(seen, int) or seen < 1:
        raise MemoryInputError("seen_count must be a positive whole number")
    deleted_at = _parse_stamp(record["deleted_at"], "deleted_at", optional=True)
    reason = record["delete_reason"] or ""
    if not isinstance(reason, str):
        raise MemoryInputError("delete_reason must be a string")
    if deleted_at is not None and not reason.strip():
        raise MemoryInputError("a deleted row needs its delete_reason")
    supersedes = record["supersedes"]
    if supersedes is not None and (
        isinstance(supersedes, bool) or not isinstance(supersedes, int) or supersedes < 1
    ):
        raise MemoryInputError("supersedes must be a fact id or null")
    return Memory(
        pk=ident,
        text=fact.text,
        kind=fact.kind,
        company=fact.company,
        company_key=fact.company_key,
        source=fact.source,
        fit_score=fact.fit_score,
        ref=fact.ref,
        fact_key=fact.fact_key,
        created_at=_parse_stamp(record["created_at"], "created_at"),
        last_seen_at=_parse_stamp(record["last_seen_at"], "last_seen_at"),
        seen_count=seen,
        created_by=_clean_actor(record["created_by"]),
        deleted_at=deleted_at,
        delete_reason=reason[:MAX_REASON_CHARS],
        deleted_by=_clean_actor(record["deleted_by"]),
        supersedes_id=supersedes,
    )


def _parse_stamp(value: Any, what: str, *, optional: bool = False) -> datetime | None:
    if value is None and optional:
        return None
    parsed = parse_datetime(value) if isinstance(value, str) else None
    if parsed is None:
        raise MemoryInputError(f"{what} {value!r} is not an ISO 8601 date-time")
    return parsed if timezone.is_aware(parsed) else timezone.make_aware(parsed, UTC)


def _reset_sequence() -> None:
    from django.core.management.color import no_style
    from django.db import connection

    with connection.cursor() as cursor:
        for sql in connection.ops.sequence_reset_sql(no_style(), [Memory]):
            cursor.execute(sql)
