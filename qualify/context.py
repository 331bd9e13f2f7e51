"""Working context at decision time: recalled facts and few-shot examples for one posting."""

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import Exists, OuterRef, Prefetch

from memory import selectors
from memory.selectors import modes
from memory.services import company_key
from qualify.models import MAX_FACTS_PER_DECISION, PROGRESS, Outcome, Posting, Qualification

log = logging.getLogger("karani.qualify")

MAX_QUERY_CHARS = 500
FEW_SHOT_EXAMPLES = 3
FEW_SHOT_CANDIDATES = 50  # newest verdicts-with-outcomes looked at when choosing examples
# Recalling "as of" a past moment drops newer facts after ranking, so it asks for more.
AS_OF_OVERFETCH = 4


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
) -> list[selectors.RecalledFact]:
    """Facts for the posting's company (plus global ones), written before ``before`` if given."""
    asked = limit if before is None else limit * AS_OF_OVERFETCH
    result = selectors.recall(query=query, company=posting.company.name, limit=asked)
    # Checked again, so a misapplied scope in any index backend never leaks into a prompt.
    own = company_key(posting.company.name)
    facts = [
        f
        for f in result.results
        if (f.company is None or company_key(f.company) == own)
        and (before is None or f.created_at < before)
    ]
    return facts[:limit]


def working_facts(
    posting: Posting, *, before: datetime | None = None
) -> tuple[list[selectors.RecalledFact], str | None]:
    """The memory block's facts, and why it is empty when recall failed. Never raises: a
    memory outage must never stop a batch (the decision is made without facts)."""
    if not memory_enabled():
        return [], None
    try:
        facts = recall_facts(posting, query=recall_query(posting), limit=fact_cap(), before=before)
    except Exception as exc:
        reason = f"{type(exc).__name__}: {str(exc).strip()[:200]}"
        log.warning("recall failed for posting %s; empty memory block (%s)", posting.pk, reason)
        return [], reason
    return facts, None


@dataclass(frozen=True)
class FewShotPool:
    """The example candidates, loaded once per batch: a batch adds verdicts but no outcomes,
    so it cannot change its own pool."""

    candidates: list[Qualification]

    @classmethod
    def load(cls) -> "FewShotPool":
        outcomes = Outcome.objects.order_by("occurred_at", "id")
        rows = (
            Qualification.objects.decided()
            .filter(Exists(outcomes.filter(qualification_id=OuterRef("pk"))))
            .select_related("posting")
            .prefetch_related(Prefetch("outcomes", queryset=outcomes))
            .order_by("-created_at", "-id")[:FEW_SHOT_CANDIDATES]
        )
        return cls(candidates=list(rows))

    def examples_for(self, posting: Posting, *, before: datetime | None = None) -> list[dict]:
        """Other postings' verdicts, decided before ``before`` if given: same role category
        first, newest first within each group."""
        category = posting.role_category.casefold()
        others = [
            q
            for q in self.candidates
            if q.posting_id != posting.pk and (before is None or q.created_at < before)
        ]
        # sort() is stable: within each group the newest-first order is kept.
        others.sort(key=lambda q: q.posting.role_category.casefold() != category)
        return [_example(q) for q in others[:FEW_SHOT_EXAMPLES]]


def _example(q: Qualification) -> dict[str, Any]:
    stages = [o.stage for o in q.outcomes.all()]
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
