"""The candidate's standing preferences: every live unscoped preference, shown to every decision
that uses memory as a part of its own beside the ranked block, within a character budget
(KARANI_STANDING_BUDGET). Over budget, the ones bearing most on the posting are shown and the
part says how many it left out and where a person sees them all."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memory import selectors
from qualify import constraint
from qualify.conf import settings

# One line tells the model what these are: every character of it is one the candidate's own
# words cannot use, so it is the whole message and nothing more.
INSTRUCTION = (
    "These are the candidate's standing preferences, in their own words; a correction "
    "replaces what it corrects."
)
HEADER = f"## {INSTRUCTION}"
LIST_COMMAND = "karani list --kind preference --global"
# The characters the part's opening line takes, before any preference.
OPENING_CHARS = len(HEADER)


@dataclass(frozen=True)
class StandingPart:
    """The preferences shown (best first, as ``ContextFact``-like objects) and how many were not."""

    facts: list[Any]
    omitted: int
    budget: int

    @property
    def total(self) -> int:
        return len(self.facts) + self.omitted


def line(fact: Any) -> str:
    # Neither id nor reason: the model needs neither to apply a preference (the response and
    # the decision's record carry both), so the budget goes on the candidate's own words.
    return f"- {fact.text}"


def omitted_line(omitted: int) -> str:
    # The command works wherever karani is installed, admin or not; the response carries the
    # count too (``standing_omitted``).
    return f"- ({omitted} more left out, bearing least on this posting; all: `{LIST_COMMAND}`)"


def render(part: StandingPart) -> str:
    """The part as the model sees it; empty when the candidate has no standing preferences."""
    if part.total == 0:
        return ""
    lines = [HEADER, *(line(f) for f in part.facts)]
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
    used = OPENING_CHARS
    for fact in facts:
        # Stops at the first one past the budget: a ledger may hold a thousand.
        used += len(line(fact)) + 1
        if used > budget:
            return False
    return True


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
