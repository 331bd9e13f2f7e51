"""Which decisions used a fact: qualify's provider for memory.attribution, the decisions whose
prompts carried a fact, with each decision's verdict and the furthest stage its posting
reached."""

from typing import Any

from django.db.models import Count, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce

from qualify.models import PROGRESS, DecisionFact, Outcome, Qualification, Verdict

ENDINGS = ("rejected", "withdrawn")
RECENT = 10


def _uses_per_fact() -> Any:
    """Uses by live decisions (not errors, not deleted verdicts), grouped by fact."""
    return (
        DecisionFact.objects.filter(
            qualification__deleted_at__isnull=True, qualification__verdict__isnull=False
        )
        .order_by()
        .values("memory_id")
        .annotate(n=Count("id"))
    )


def furthest(stages: list[str]) -> str | None:
    """The furthest progress stage reached, else how it ended, else None (no outcome yet)."""
    reached = [s for s in PROGRESS if s in stages]
    if reached:
        return reached[-1]
    return next((s for s in ENDINGS if s in stages), None)


class DecisionAttribution:
    name = "decisions"

    def use_count(self) -> Any:
        uses = _uses_per_fact().filter(memory_id=OuterRef("pk")).values("n")
        return Coalesce(Subquery(uses), Value(0))

    def use_counts(self, memory_ids: list[int]) -> dict[int, int]:
        return dict(_uses_per_fact().filter(memory_id__in=memory_ids).values_list("memory_id", "n"))

    def summary_for(self, memory_id: int) -> dict[str, Any]:
        carried = Qualification.objects.decided().filter(decision_facts__memory_id=memory_id)
        decisions = dict(carried.values_list("id", "verdict"))
        stages: dict[int, list[str]] = {}
        # Joined, not an id list: a global fact may sit in more decisions than SQLite binds.
        for qualification_id, stage in Outcome.objects.filter(
            qualification__in=carried.values("id")
        ).values_list("qualification_id", "stage"):
            stages.setdefault(qualification_id, []).append(stage)
        reached = {
            step: sum(1 for s in stages.values() if set(s) & set(PROGRESS[i:]))
            for i, step in enumerate(PROGRESS)
        }
        qualified = sum(1 for v in decisions.values() if v == Verdict.QUALIFIED)
        recent = carried.select_related("posting__company").order_by("-created_at", "-id")[:RECENT]
        recent_rows = [
            {
                "qualification": q.pk,
                "posting": q.posting_id,
                "title": q.posting.title,
                "company": q.posting.company.name,
                "verdict": q.verdict,
                "fit_score": q.fit_score,
                "prompt_version": q.prompt_version,
                "furthest_stage": furthest(stages.get(q.pk, [])),
                "created_at": q.created_at.isoformat(),
            }
            for q in recent
        ]
        return {
            "decisions": len(decisions),
            "qualified": qualified,
            "rejected": len(decisions) - qualified,
            "reached": reached,
            "text": _text(len(decisions), qualified, reached),
            "recent": recent_rows,
            "items": [
                f"{r['verdict']} (fit {r['fit_score']}): {r['title']} at {r['company']}, "
                f"furthest stage {r['furthest_stage'] or 'none yet'} "
                f"(qualification {r['qualification']})"
                for r in recent_rows
            ],
        }


def _text(decisions: int, qualified: int, reached: dict[str, int]) -> str:
    """E.g. 'in 12 decisions: 9 qualified, 3 rejected; 5 applied, 3 reached interview'."""
    if not decisions:
        return "in no decisions yet"
    noun = "decision" if decisions == 1 else "decisions"
    text = f"in {decisions} {noun}: {qualified} qualified, {decisions - qualified} rejected"
    progress = [
        f"{n} applied" if step == "applied" else f"{n} reached {step}"
        for step, n in reached.items()
        if n
    ]
    return f"{text}; {', '.join(progress)}" if progress else text


provider = DecisionAttribution()
