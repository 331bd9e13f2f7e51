"""How a fact row is written: insert it, or touch its live twin.

Shared by the single writes (memory.services) and the bulk ones (memory.transfer). The
partial unique constraint on live fact keys is the only arbiter between concurrent writers of
one fact; writers of different facts never wait for each other.
"""

from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

from django.db import connection, transaction
from django.db.models import Field

from memory import index
from memory.models import Memory
from memory.validation import CleanFact


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


def new_row(
    fact: CleanFact, *, actor: str, now: datetime, created_at: datetime | None = None
) -> Memory:
    """An unsaved row for a new fact, shared by the single and the bulk write paths."""
    return Memory(
        text=fact.text,
        kind=fact.kind,
        company=fact.company,
        company_key=fact.company_key,
        source=fact.source,
        fit_score=fact.fit_score,
        ref=fact.ref,
        fact_key=fact.fact_key,
        created_at=created_at or now,
        last_seen_at=now,
        created_by=actor,
    )


def write_fact(
    fact: CleanFact,
    *,
    actor: str,
    now: datetime,
    created_at: datetime | None = None,
    supersedes: Memory | None = None,
) -> RememberResult:
    """Insert the fact or touch its live twin in one upsert, so the database settles concurrent
    writers (on PostgreSQL a touch still draws an id: ids are opaque and have gaps)."""
    row = new_row(fact, actor=actor, now=now, created_at=created_at)
    row.supersedes = supersedes
    row.fill_terms()
    sql, fields = _upsert(connection.vendor)
    with connection.cursor() as cursor:
        cursor.execute(
            sql, [f.get_db_prep_save(getattr(row, f.attname), connection) for f in fields]
        )
        pk, seen_count = cursor.fetchone()
    # A touch always leaves seen_count above 1; only a fresh insert returns 1.
    if seen_count > 1:
        twin = Memory.all_objects.get(pk=pk)
        twin.seen_count = seen_count  # this write's count, whatever touches followed it
        return RememberResult(twin, created=False)
    # Stored exactly as built, as Model.save() would leave it.
    row.pk, row._state.adding, row._state.db = pk, False, connection.alias
    row.mark_stored()
    return RememberResult(row, created=True)


@cache
def _upsert(vendor: str) -> tuple[str, list[Field]]:
    fields = [f for f in Memory._meta.concrete_fields if not f.primary_key]
    qn = connection.ops.quote_name
    table = qn(Memory._meta.db_table)
    sql = (
        f"INSERT INTO {table} ({', '.join(qn(f.column) for f in fields)})"
        f" VALUES ({', '.join(['%s'] * len(fields))})"
        " ON CONFLICT (fact_key) WHERE deleted_at IS NULL DO UPDATE SET"
        f" seen_count = {table}.seen_count + 1, last_seen_at = excluded.last_seen_at"
        " RETURNING id, seen_count"
    )
    return sql, fields


def index_on_commit(memory_ids: list[int]) -> None:
    # After commit, outside the ledger transaction: the semantic index is best effort.
    transaction.on_commit(lambda: index.added(memory_ids))
