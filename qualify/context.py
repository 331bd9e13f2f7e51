"""Working context at decision time: recalled facts and few-shot examples for one posting.

Facts come from ``memory.services.recall`` only. A memory outage must never kill a batch,
so every recall failure degrades to an empty block (the decision is then recorded with no
facts) and is logged once per posting.
"""

import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import Prefetch

from memory import services as memory
from qualify.models import MAX_FACTS_PER_DECISION, Outcome, Posting, Qualification, company_key

log = logging.getLogger("karani.qualify")

MAX_QUERY_CHARS = 500
FEW_SHOT_EXAMPLES = 3
FEW_SHOT_CANDIDATES = 50  # newest verdicts-with-outcomes looked at when choosing examples
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
    return settings.KARANI_MEMORY != "off"


def recall_query(posting: Posting) -> str:
    parts = [posting.company.name, posting.title, posting.role_category]
    return " ".join(" ".join(p.split()) for p in parts if p)[:MAX_QUERY_CHARS]


def recall_facts(posting: Posting, *, query: str, limit: int) -> list[ContextFact]:
    """Facts for the posting's company (plus global ones). May raise: callers decide."""
    result = memory.recall(query=query, company=posting.company.name, limit=limit)
    own = company_key(posting.company.name)
    facts = []
    for f in result.results:
        # The service already scopes; checking again keeps another company's facts out of a
        # prompt even if an index backend ever misapplies its filter.
        if f.company is not None and company_key(f.company) != own:
            continue
        facts.append(ContextFact(id=f.id, text=f.text, kind=f.kind, company=f.company))
    return facts[:limit]


@dataclass(frozen=True)
class WorkingFacts:
    facts: list[ContextFact]
    error: str | None  # why the block is empty when memory failed


def working_facts(posting: Posting) -> WorkingFacts:
    """The memory block's facts; never raises (empty block on any failure)."""
    if not memory_enabled():
        return WorkingFacts(facts=[], error=None)
    try:
        facts = recall_facts(posting, query=recall_query(posting), limit=fact_cap())
    except Exception as exc:  # any failure at all: the invariant is "the batch goes on"
        reason = f"{type(exc).__name__}: {str(exc).strip()[:200]}"
        log.warning("recall failed for posting %s; empty memory block (%s)", posting.pk, reason)
        return WorkingFacts(facts=[], error=reason)
    return WorkingFacts(facts=facts, error=None)


def few_shot_examples(posting: Posting, *, limit: int = FEW_SHOT_EXAMPLES) -> list[dict[str, Any]]:
    """Past verdicts with what happened next, as structured events.

    Chosen from the newest live verdicts (other postings) that have at least one outcome:
    same role category first, then the rest, newest first; at most ``limit``. Company names
    are left out: examples calibrate verdicts, they are not facts about a company.
    """
    candidates = list(
        Qualification.objects.decided()
        .exclude(posting_id=posting.pk)
        # One filter() call, so both conditions apply to the same joined outcome row; the
        # id test turns the LEFT JOIN into "has at least one live outcome".
        .filter(outcomes__id__isnull=False, outcomes__deleted_at__isnull=True)
        .distinct()
        .select_related("posting")
        .order_by("-created_at", "-id")[:FEW_SHOT_CANDIDATES]
    )
    category = posting.role_category.casefold()
    # sorted() is stable: within each group the newest-first order is kept.
    chosen = sorted(candidates, key=lambda q: q.posting.role_category.casefold() != category)
    chosen = chosen[:limit]
    outcomes = Outcome.objects.order_by("occurred_at", "id")
    by_id = {
        q.pk: q
        for q in Qualification.objects.filter(pk__in=[q.pk for q in chosen]).prefetch_related(
            Prefetch("outcomes", queryset=outcomes, to_attr="live_outcomes")
        )
    }
    return [_example(by_id[q.pk], q.posting) for q in chosen]


def _example(q: Qualification, posting: Posting) -> dict[str, Any]:
    stages = [o.stage for o in q.live_outcomes]
    reached = [s for s in PROGRESS if s in stages]
    return {
        "posting": {
            "title": posting.title,
            "role_category": posting.role_category or None,
            "remote": posting.remote,
        },
        "verdict": q.verdict,
        "fit_score": q.fit_score,
        "stages": stages,
        "furthest_stage": reached[-1] if reached else None,
    }
