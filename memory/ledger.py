"""How a fact row is written: insert it, or touch its live twin.

Shared by the single writes (memory.services) and the bulk ones (memory.transfer). The
partial unique constraint on live fact keys is the only arbiter between concurrent writers of
one fact; writers of different facts never wait for each other.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection, transaction

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
    """Touch the fact's live twin, or insert it.

    The insert is an upsert against the partial unique constraint, so a writer that loses a
    race with another writer of the same fact touches the winner's row, in the database.
    The touch goes first so that a duplicate, the common repeat, never uses up an id.
    """
    row = new_row(fact, actor=actor, now=now, created_at=created_at)
    row.supersedes = supersedes
    row.fill_terms()
    if connection.vendor == "postgresql":
        # One statement: the insert runs only when the touch found no live twin.
        touch_sql, touch_params = _touch(fact.fact_key, now)
        insert_sql, insert_params = _upsert(row, guarded=True)
        sql = (
            f"WITH touched AS ({touch_sql}), inserted AS ({insert_sql})"
            " SELECT * FROM touched UNION ALL SELECT * FROM inserted"
        )
        memory = next(iter(Memory.all_objects.raw(sql, touch_params + insert_params)))
    else:
        # SQLite has no writes inside WITH: the touch, then the insert if it found nothing.
        memory = next(iter(Memory.all_objects.raw(*_touch(fact.fact_key, now))), None)
        memory = memory or next(iter(Memory.all_objects.raw(*_upsert(row))))
    # A touch always leaves seen_count above 1; only a fresh insert returns 1.
    return RememberResult(memory, created=memory.seen_count == 1)


def _touch(fact_key: str, now: datetime) -> tuple[str, list]:
    qn = connection.ops.quote_name
    stamp = Memory._meta.get_field("last_seen_at").get_db_prep_save(now, connection)
    sql = (
        f"UPDATE {qn(Memory._meta.db_table)} SET seen_count = seen_count + 1,"
        " last_seen_at = %s WHERE fact_key = %s AND deleted_at IS NULL"
        f" RETURNING {_returning()}"
    )
    return sql, [stamp, fact_key]


def _returning() -> str:
    return ", ".join(connection.ops.quote_name(f.column) for f in Memory._meta.concrete_fields)


def _upsert(row: Memory, guarded: bool = False) -> tuple[str, list]:
    fields = [f for f in Memory._meta.concrete_fields if not f.primary_key]
    qn = connection.ops.quote_name
    table = qn(Memory._meta.db_table)
    if guarded:
        # Typed placeholders: a SELECT, unlike VALUES, gives the columns no types to infer.
        casts = ", ".join(f"%s::{f.db_type(connection)}" for f in fields)
        source = f"SELECT {casts} WHERE NOT EXISTS (SELECT 1 FROM touched)"
    else:
        source = f"VALUES ({', '.join(['%s'] * len(fields))})"
    sql = (
        f"INSERT INTO {table} ({', '.join(qn(f.column) for f in fields)}) {source}"
        " ON CONFLICT (fact_key) WHERE deleted_at IS NULL DO UPDATE SET"
        f" seen_count = {table}.seen_count + 1, last_seen_at = excluded.last_seen_at"
        f" RETURNING {_returning()}"
    )
    return sql, [f.get_db_prep_save(getattr(row, f.attname), connection) for f in fields]


def index_on_commit(memory_ids: list[int]) -> None:
    # After commit, outside the ledger transaction: the semantic index is best effort.
    transaction.on_commit(lambda: index.added(memory_ids))
