"""How a fact row is written: insert it, or touch its live twin.

Shared by the single writes (memory.services) and the bulk ones (memory.transfer). The
partial unique constraint on live fact keys is the only arbiter between concurrent writers of
one fact; writers of different facts never wait for each other.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F

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


def _touch(fact_key: str, now: datetime) -> Memory | None:
    touched = Memory.objects.filter(fact_key=fact_key).update(
        seen_count=F("seen_count") + 1, last_seen_at=now
    )
    return Memory.objects.get(fact_key=fact_key) if touched else None


def write_fact(
    fact: CleanFact,
    *,
    actor: str,
    now: datetime,
    created_at: datetime | None = None,
    supersedes: Memory | None = None,
) -> RememberResult:
    """Touch the fact's live twin, or insert it."""
    with transaction.atomic():
        existing = _touch(fact.fact_key, now)
        if existing is not None:
            return RememberResult(existing, created=False)
        memory = new_row(fact, actor=actor, now=now, created_at=created_at)
        memory.supersedes = supersedes
        try:
            # A savepoint, so losing the race below leaves the outer transaction usable.
            with transaction.atomic():
                memory.save(force_insert=True)
        except IntegrityError:
            # Another writer inserted the same live fact between our touch and insert (the
            # constraint said so, after waiting for its commit): touch theirs instead.
            existing = _touch(fact.fact_key, now)
            if existing is None:
                raise
            return RememberResult(existing, created=False)
    return RememberResult(memory, created=True)


def index_on_commit(memory_ids: list[int]) -> None:
    # After commit, outside the ledger transaction: the semantic index is best effort.
    transaction.on_commit(lambda: index.added(memory_ids))
