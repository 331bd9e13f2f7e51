"""Few-shot examples at decision time: other postings' verdicts and what happened next."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Exists, OuterRef, Prefetch

from qualify.models import PROGRESS, Outcome, Posting, Qualification

FEW_SHOT_EXAMPLES = 3
FEW_SHOT_CANDIDATES = 50  # newest verdicts-with-outcomes looked at when choosing examples


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
