"""Facts in bulk: import (a bad line is reported, dedupe as remember), export, and restore."""

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.core.management.color import no_style
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from memory.errors import MemoryInputError
from memory.ledger import index_on_commit, new_row, write_fact
from memory.models import Kind, Memory, Source
from memory.validation import (
    MAX_REASON_CHARS,
    CleanFact,
    clean_actor,
    clean_text,
    clean_timestamp,
    refuse_secrets,
    validate_fact,
)


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


def import_facts(
    *, records: Iterable[tuple[int, Any]], actor: str = "", batch_size: int = 500
) -> ImportReport:
    """Import ``(line_number, record)`` pairs of IMPORT_FIELDS dicts; a bad one is reported.
    Batches commit independently: after a crash, re-running the file touches what went in."""
    report = ImportReport()
    actor = clean_actor(actor)
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
    if report.created:
        refresh_statistics()
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
    return fact, _parse_stamp(record.get("created_at"), "created_at", optional=True)


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
        live = _live_twins({f.fact_key for _, f, _ in batch})
        fresh: dict[str, Memory] = {}
        # Touches of rows that were live before the batch: applied in one UPDATE per fact.
        touches: Counter[str] = Counter()
        for _, fact, created_at in batch:
            if fact.fact_key in live or fact.fact_key in fresh:
                touches[fact.fact_key] += 1
                continue
            fresh[fact.fact_key] = new_row(fact, actor=actor, now=now, created_at=created_at)
        touched_by_fallback = 0
        try:
            with transaction.atomic():
                created = Memory.all_objects.bulk_create(list(fresh.values()))
        except IntegrityError:
            # A concurrent writer committed one of the new facts after our read: write the
            # new facts (and their in-file duplicates) row by row, which resolves each
            # collision by touching. Those touches are done by write_fact, so they leave the
            # pending `touches` and are only counted.
            created = []
            for _, fact, created_at in batch:
                if fact.fact_key not in fresh:
                    continue
                touches.pop(fact.fact_key, None)
                result = write_fact(fact, actor=actor, now=now, created_at=created_at)
                if result.created:
                    created.append(result.memory)
                else:
                    touched_by_fallback += 1
        for key, count in touches.items():
            Memory.objects.filter(fact_key=key).update(
                seen_count=F("seen_count") + count, last_seen_at=now
            )
    report.created += len(created)
    report.touched += touches.total() + touched_by_fallback
    index_on_commit([m.pk for m in created])


def iter_all_facts(*, chunk_size: int = 2000) -> Iterator[Memory]:
    """Every row, deleted included, oldest first: what export writes."""
    return Memory.all_objects.order_by("id").iterator(chunk_size=chunk_size)


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
    """Load an ``export`` file into an empty ledger exactly; a bad line aborts it all, named."""
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
    by_id = {row.pk: row for row in rows}
    for row in rows:
        if row.supersedes_id is None:
            continue
        where = f"line {line_of[row.pk]}: supersedes {row.supersedes_id}"
        if row.supersedes_id not in line_of:
            raise MemoryInputError(f"{where}, which is not in the file")
        # A correction is always newer than what it replaces: itself or a later id is a loop.
        if row.supersedes_id >= row.pk:
            raise MemoryInputError(f"{where}, which is not older than {row.pk}")
        if by_id[row.supersedes_id].deleted_at is None:
            # correct() deletes what it replaces: two live rows in one chain never happen.
            raise MemoryInputError(f"{where}, which is still live")
        if row.supersedes_id in replaced:  # a fact is corrected once; its successor after
            raise MemoryInputError(f"{where}, which another row already supersedes")
        replaced.add(row.supersedes_id)
    with transaction.atomic():
        if Memory.all_objects.exists():  # someone wrote while we parsed
            raise MemoryInputError("restore needs an empty ledger; this one already has facts")
        # Chains point backwards (a correction supersedes an older id), so id order is
        # insertion order for the foreign key.
        rows.sort(key=lambda m: m.pk)
        Memory.all_objects.bulk_create(rows, batch_size=1000)
        _reset_sequence()
    index_on_commit([m.pk for m in rows if m.deleted_at is None])
    refresh_statistics()
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
    ident = _whole(record["id"], "id", MAX_ID)
    seen = _whole(record["seen_count"], "seen_count", MAX_SEEN_COUNT)
    created_at = _parse_stamp(record["created_at"], "created_at")
    last_seen_at = _parse_stamp(record["last_seen_at"], "last_seen_at")
    deleted_at = _parse_stamp(record["deleted_at"], "deleted_at", optional=True)
    reason = record["delete_reason"] or ""
    if not isinstance(reason, str):
        raise MemoryInputError("delete_reason must be a string")
    if deleted_at is not None and not reason.strip():
        raise MemoryInputError("a deleted row needs its delete_reason")
    if reason:
        reason = clean_text(
            reason, what="delete_reason", max_chars=MAX_REASON_CHARS, multiline=False
        )
        refuse_secrets(reason, what="delete_reason")
    supersedes = record["supersedes"]
    if supersedes is not None and (
        isinstance(supersedes, bool) or not isinstance(supersedes, int) or supersedes < 1
    ):
        raise MemoryInputError("supersedes must be a fact id or null")
    row = new_row(
        fact,
        actor=clean_actor(record["created_by"], what="created_by"),
        now=last_seen_at,
        created_at=created_at,
    )
    row.pk = ident
    row.seen_count = seen
    row.deleted_at = deleted_at
    row.delete_reason = reason
    row.deleted_by = clean_actor(record["deleted_by"], what="deleted_by")
    row.supersedes_id = supersedes
    return row


# The columns' own limits (bigint ids, a positive int count): past them the insert would
# fail inside the restore's transaction instead of naming the line.
MAX_ID = 2**63 - 1
MAX_SEEN_COUNT = 2**31 - 1


def _whole(value: Any, what: str, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise MemoryInputError(f"{what} must be a whole number from 1 to {maximum}")
    return value


def _parse_stamp(value: Any, what: str, *, optional: bool = False) -> datetime | None:
    if value is None and optional:
        return None
    return clean_timestamp(value, what=what)


def _reset_sequence() -> None:
    with connection.cursor() as cursor:
        for sql in connection.ops.sequence_reset_sql(no_style(), [Memory]):
            cursor.execute(sql)


def refresh_statistics() -> None:
    """PostgreSQL's planner statistics of the ledger, after a bulk load: until autovacuum
    gets to them (or forever, where it is off), the planner takes ``deleted_at IS NULL`` for
    a few rows and reads a whole 100k ledger through that index to fetch a hundred facts by
    id (docs/operations.md)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {Memory._meta.db_table}")
