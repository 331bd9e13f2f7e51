"""The one decision writer, for `karani qualify`, the API and MCP: in the caller's one
transaction, the posting (on first sight), the decision and the facts it was shown, its verdict
fact (through memory's door) and the soft delete of the verdict it replaces and of that fact.

Races are ordered by row locks taken before any read that decides what to write: the posting's
(re-judgings and outcomes) and then its company's (verdict facts, which twin postings of one
company may share). On SQLite the IMMEDIATE transaction (karani_site.settings) holds the
database's write lock from its first statement, which orders the same races.
"""

import logging
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from memory import services as memory
from memory.errors import FactAlreadyDeleted
from memory.text import company_key
from qualify import verdict_fact
from qualify.models import (
    Company,
    DecisionFact,
    FactPart,
    Outcome,
    Posting,
    Profile,
    Qualification,
)

log = logging.getLogger("karani.qualify")


def answer_head(event: Qualification | Outcome, *, created: bool) -> dict[str, Any]:
    """The fields every recorded posting event answers with first (a decision, an outcome)."""
    return {
        "id": event.pk,
        "created": created,
        "external_id": event.posting.external_id,
        "posting_id": event.posting_id,
    }


@dataclass(frozen=True)
class Decided:
    """A decision as written (or found), and what happened to its verdict fact."""

    qualification: Qualification
    created: bool  # False: an exact repeat, no decision was written
    replaced: int | None = None  # the earlier live verdict this one superseded
    fact_error: str | None = None  # the verdict fact could not be written (memory failed)
    fact_written: bool = False  # this call wrote the verdict fact (a repeat: it was missing)

    def to_dict(self) -> dict[str, Any]:
        q = self.qualification
        return {
            **answer_head(q, created=self.created),
            "verdict": q.verdict,
            "fit_score": q.fit_score,
            "prompt_version": q.prompt_version,
            "arm": q.arm,
            "fact_ids": list(q.fact_ids),
            "replaced": self.replaced,
            "verdict_fact_id": q.verdict_fact_id,
            "fact_written": self.fact_written,
            "fact_error": self.fact_error,
        }


def company_named(name: str) -> Company:
    """The live company with this name (case and spacing ignored), created if needed."""
    return Company.objects.get_or_create(name_key=company_key(name), defaults={"name": name})[0]


def _lock_company(company_id: int) -> None:
    # Twin postings' verdict facts are one memory row: their writers take turns here.
    list(Company.all_objects.select_for_update().filter(pk=company_id).values_list("pk"))


def locked_posting(*, with_company: bool = True, **lookup: Any) -> Posting | None:
    """The live posting ``lookup`` names (with its company), row-locked (and its company, for
    a decision) until the transaction ends; call it first in the transaction."""
    posting = (
        Posting.objects.select_for_update(of=("self",))
        .select_related("company")
        .filter(**lookup)
        .first()
    )
    if posting is not None and with_company:
        _lock_company(posting.company_id)
    return posting


def new_posting(*, company: str, **fields: Any) -> Posting:
    """A posting seen for the first time, its company locked as locked_posting would."""
    posting = Posting.objects.create(company=company_named(company), **fields)
    _lock_company(posting.company_id)
    return posting


def live_verdict(posting: Posting) -> Qualification | None:
    """The posting's live verdict (an error row is not one)."""
    live = Qualification.objects.decided().filter(posting=posting).first()
    if live is not None:
        live.posting = posting
    return live


def write(
    *,
    posting: Posting,
    values: dict[str, Any],
    shown: dict[int, str],
    replacing: Qualification | None = None,
    profile: Profile | None = None,
    standing: dict[int, str] | None = None,
) -> Decided:
    """Write one decision (``values``: Qualification's fields) on a posting locked in this
    transaction, with the facts it was shown (memory id -> why); a verdict replaces
    ``replacing`` and gets its verdict fact, an error row gets none."""
    if replacing is not None:
        Qualification.objects.filter(pk=replacing.pk).update(deleted_at=timezone.now())
    q = Qualification.objects.create(posting=posting, **values)
    DecisionFact.objects.bulk_create(
        [
            *(DecisionFact(qualification=q, memory_id=pk, why=why) for pk, why in shown.items()),
            # The standing preferences it was shown beside the block (never one of the block's).
            *(
                DecisionFact(qualification=q, memory_id=pk, why=why, part=FactPart.STANDING)
                for pk, why in (standing or {}).items()
                if pk not in shown
            ),
        ]
    )
    if q.verdict is None:
        return Decided(q, created=True)
    if replacing is not None:
        _forget_unshared(replacing, by=q)
    fact_error = _write_verdict_fact(q, profile)
    return Decided(
        q,
        created=True,
        replaced=replacing.pk if replacing else None,
        fact_error=fact_error,
        fact_written=fact_error is None,
    )


def repeat(live: Qualification) -> Decided:
    """The answer to an exact repeat: nothing is written, unless the verdict fact is missing
    (memory failed the first time), which is written now and said so."""
    if live.verdict_fact_id is not None:
        return Decided(live, created=False)
    fact_error = _write_verdict_fact(live, None)
    return Decided(live, created=False, fact_error=fact_error, fact_written=fact_error is None)


def _write_verdict_fact(q: Qualification, profile: Profile | None) -> str | None:
    posting = q.posting
    text = verdict_fact.compose(
        verdict=q.verdict,
        fit_score=q.fit_score,
        criteria=q.criteria,
        posting=posting,
        profile=profile,
    )
    try:
        # A savepoint: a memory failure leaves the decision standing (a repeat writes the
        # fact later), and on PostgreSQL does not abort the decision's transaction.
        with transaction.atomic():
            fact = memory.remember(
                text=text,
                kind=memory.Kind.PREFERENCE,
                company=posting.company.name,
                source=memory.Source.VERDICT,
                fit_score=q.fit_score,
                ref=f"qualification:{q.pk}",
                actor="qualify",
            )
            Qualification.all_objects.filter(pk=q.pk).update(verdict_fact_id=fact.id)
    except Exception as exc:
        reason = f"{type(exc).__name__}: {str(exc).strip()[:200]}"
        log.warning("verdict fact for qualification %s not written (%s)", q.pk, reason)
        return reason
    q.verdict_fact_id = fact.id
    return None


def _forget_unshared(old: Qualification, *, by: Qualification) -> None:
    """Forget the replaced verdict's fact unless a twin posting's live verdict (same company,
    title, verdict and score: one memory row) still stands on it."""
    if old.verdict_fact_id is None:
        return
    if Qualification.objects.filter(verdict_fact_id=old.verdict_fact_id).exists():
        return
    try:
        with transaction.atomic():
            memory.forget(
                id=old.verdict_fact_id,
                reason=f"re-judged as qualification {by.pk}",
                actor="qualify",
            )
    except FactAlreadyDeleted:
        pass  # forgotten by hand meanwhile: nothing is left to forget
    except Exception as exc:  # the decision stands; a stale verdict fact is only logged
        log.warning("verdict fact %s not forgotten (%s)", old.verdict_fact_id, exc)
