"""Working context at decision time: recalled facts and few-shot examples for one posting.

Facts come from ``memory.selectors.recall`` only. A memory outage must never kill a batch,
so every recall failure degrades to an empty block (the decision is then recorded with no
facts) and is logged once per posting.
"""

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import Exists, OuterRef

from memory import modes, selectors
from memory.text import company_key
from qualify.models import MAX_FACTS_PER_DECISION, Outcome, Posting, Qualification

log = logging.getLogger("karani.qualify")

MAX_QUERY_CHARS = 500
FEW_SHOT_EXAMPLES = 3
FEW_SHOT_CANDIDATES = 50  # newest verdicts-with-outcomes looked at when choosing examples
# Recalling "as of" a past moment drops newer facts after ranking, so it asks for more.
AS_OF_OVERFETCH = 4
PROGRESS = ("applied", "screen", "interview", "offer")


@dataclass(frozen=True)
class ContextFact:
    id: int
    text: str
    kind: str
    company: str | None


def fact_cap() -> int:
    """Facts per decision: KARANI_MEMORY_TOP_K, never more than 10 whatever is configured."""
    return max(1, min(settings.KARANI_MEMORY_TOP_K, MAX_FACTS_PER_DECISION))


def memory_enabled() -> bool:
    return modes.current() != modes.OFF


def recall_query(posting: Posting) -> str:
    parts = [posting.company.name, posting.title, posting.role_category]
    return " ".join(" ".join(p.split()) for p in parts if p)[:MAX_QUERY_CHARS]


def recall_facts(
    posting: Posting, *, query: str, limit: int, before: datetime | None = None
) -> list[ContextFact]:
    """Facts for the posting's company (plus global ones), written before ``before`` when
    given. May raise: callers decide."""
    asked = limit if before is None else limit * AS_OF_OVERFETCH
    result = selectors.recall(query=query, company=posting.company.name, limit=asked)
    # The selector already scopes; checking again (with memory's own company key) keeps
    # another company's facts out of a prompt even if an index backend ever misapplies it.
    own = company_key(posting.company.name)
    facts = []
    for f in result.results:
        if f.company is not None and company_key(f.company) != own:
            continue
        if before is not None and f.created_at >= before:
            continue
        facts.append(ContextFact(id=f.id, text=f.text, kind=f.kind, company=f.company))
    return facts[:limit]


@dataclass(frozen=True)
class WorkingFacts:
    facts: list[ContextFact]
    error: str | None  # why the block is empty when memory failed


def working_facts(posting: Posting, *, before: datetime | None = None) -> WorkingFacts:
    """The memory block's facts; never raises (empty block on any failure)."""
    if not memory_enabled():
        return WorkingFacts(facts=[], error=None)
    try:
        facts = recall_facts(posting, query=recall_query(posting), limit=fact_cap(), before=before)
    except Exception as exc:  # any failure at all: the invariant is "the batch goes on"
        reason = f"{type(exc).__name__}: {str(exc).strip()[:200]}"
        log.warning("recall failed for posting %s; empty memory block (%s)", posting.pk, reason)
        return WorkingFacts(facts=[], error=reason)
    return WorkingFacts(facts=facts, error=None)


@dataclass(frozen=True)
class FewShotPool:
    """The example candidates, loaded once per batch (two queries).

    Examples need outcomes, which people record; a batch only adds verdicts without
    outcomes, so the pool cannot change because of the batch itself, and an outcome
    recorded meanwhile simply joins the next batch's pool.
    """

    candidates: list[tuple[Qualification, list[str]]]

    @classmethod
    def load(cls) -> "FewShotPool":
        # EXISTS rather than a join + DISTINCT: the newest-verdicts index is walked in order
        # and each row probes the outcomes index, stopping at FEW_SHOT_CANDIDATES hits.
        has_outcome = Outcome.objects.filter(qualification_id=OuterRef("pk"))
        rows = list(
            Qualification.objects.decided()
            .filter(Exists(has_outcome))
            .select_related("posting")
            .only(
                "id",
                "verdict",
                "fit_score",
                "created_at",
                "posting__title",
                "posting__role_category",
                "posting__remote",
            )
            .order_by("-created_at", "-id")[:FEW_SHOT_CANDIDATES]
        )
        stages: dict[int, list[str]] = {q.pk: [] for q in rows}
        for qualification_id, stage in (
            Outcome.objects.filter(qualification_id__in=list(stages))
            .order_by("occurred_at", "id")
            .values_list("qualification_id", "stage")
        ):
            stages[qualification_id].append(stage)
        return cls(candidates=[(q, stages[q.pk]) for q in rows])

    def examples_for(
        self, posting: Posting, *, limit: int = FEW_SHOT_EXAMPLES, before: datetime | None = None
    ) -> list[dict[str, Any]]:
        """Same role category first, then the rest, newest first within each; other
        postings only, decided before ``before`` when given."""
        category = posting.role_category.casefold()
        others = [
            (q, s)
            for q, s in self.candidates
            if q.posting_id != posting.pk and (before is None or q.created_at < before)
        ]
        # sorted() is stable: within each group the newest-first order is kept.
        others.sort(key=lambda pair: pair[0].posting.role_category.casefold() != category)
        return [_example(q, s) for q, s in others[:limit]]


def _example(q: Qualification, stages: list[str]) -> dict[str, Any]:
    reached = [s for s in PROGRESS if s in stages]
    return {
        "posting": {
            "title": q.posting.title,
            "role_category": q.posting.role_category or None,
            "remote": q.posting.remote,
        },
        "verdict": q.verdict,
        "fit_score": q.fit_score,
        "stages": stages,
        "furthest_stage": reached[-1] if reached else None,
    }
