"""The candidate's standing preferences: every live unscoped preference, shown to every decision
that uses memory as a part of its own beside the ranked block, within a character budget
(KARANI_STANDING_BUDGET). Over budget, the ones bearing most on the posting are shown and the
part says how many it left out and where a person sees them all."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.urls import NoReverseMatch, reverse

from memory import selectors
from qualify import constraint
from qualify.conf import settings

HEADER = "## Standing preferences: the candidate's own criteria, shown in every decision"
INSTRUCTION = (
    "These are the candidate's standing preferences, in their own words; a correction "
    "replaces what it corrects."
)
LIST_COMMAND = "karani list --kind preference --global"
# The characters the part's header and instruction take, before any preference.
OPENING_CHARS = len(HEADER) + 1 + len(INSTRUCTION)


@dataclass(frozen=True)
class StandingPart:
    """The preferences shown (best first, as ``ContextFact``-like objects) and how many were not."""

    facts: list[Any]
    omitted: int
    budget: int

    @property
    def total(self) -> int:
        return len(self.facts) + self.omitted


def where_to_see_all() -> str:
    """The command, and the admin's list of them when the admin is installed."""
    try:
        url = reverse("admin:memory_memory_changelist")
    except NoReverseMatch:
        return f"`{LIST_COMMAND}`"
    return f"`{LIST_COMMAND}` or {url}?company=-&kind__exact=preference&status=live"


def line(fact: Any) -> str:
    # Neither id nor reason: the model needs neither to apply a preference (the response and
    # the decision's record carry both), so the budget goes on the candidate's own words.
    return f"- {fact.text}"


def omitted_line(omitted: int) -> str:
    return (
        f"- ({omitted} more standing preferences left out here, bearing least on this "
        f"posting; all of them: {where_to_see_all()})"
    )


def render(part: StandingPart) -> str:
    """The part as the model sees it; empty when the candidate has no standing preferences."""
    if part.total == 0:
        return ""
    lines = [HEADER, INSTRUCTION, *(line(f) for f in part.facts)]
    if part.omitted:
        lines.append(omitted_line(part.omitted))
    return "\n".join(lines)


def rank(
    found: list[selectors.RecalledFact],
    score_of: Callable[[selectors.RecalledFact], float],
    budget: int | None = None,
) -> list[selectors.RecalledFact]:
    """Best first: a hard constraint before a soft preference (qualify.constraint), then the
    posting's score for the fact, then the shorter (more of them fit), then the newest
    (``found`` is newest first, and sorting keeps that order among equals). When all of them
    fit ``budget``, the posting's score alone orders them, and nothing is parsed."""
    if fits_whole(found, budget):
        return sorted(found, key=lambda f: -score_of(f))
    return sorted(found, key=lambda f: (not constraint.is_hard(f.text), -score_of(f), len(f.text)))


def fits_whole(facts: list[Any], budget: int | None = None) -> bool:
    """Whether the part shows every one of ``facts`` within ``budget`` characters."""
    budget = settings.KARANI_STANDING_BUDGET if budget is None else budget
    return OPENING_CHARS + sum(len(line(f)) + 1 for f in facts) <= budget


def fit(ranked: list[Any], budget: int | None = None) -> StandingPart:
    """The first of ``ranked`` (best first) whose rendered part stays within ``budget``
    characters; one that does not fit is left out and the next tried."""
    budget = settings.KARANI_STANDING_BUDGET if budget is None else budget
    if not ranked:
        return StandingPart(facts=[], omitted=0, budget=budget)
    if fits_whole(ranked, budget):
        return StandingPart(facts=list(ranked), omitted=0, budget=budget)
    used = OPENING_CHARS
    # Room for the "left out" line, kept whenever not every preference can be shown.
    reserve = len(omitted_line(len(ranked))) + 1
    shown = []
    for fact in ranked:
        cost = len(line(fact)) + 1
        if used + cost + reserve <= budget:
            shown.append(fact)
            used += cost
    return StandingPart(facts=shown, omitted=len(ranked) - len(shown), budget=budget)
