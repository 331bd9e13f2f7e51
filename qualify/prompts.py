"""Named prompt versions, recorded on every qualification: new wording needs a new name,
never an edit in place, since the name is how the funnel tells recorded rows apart."""

import json
from dataclasses import dataclass
from typing import Any

from qualify import standing as standing_part
from qualify.context import ContextFact, Selection
from qualify.models import Posting, Profile
from qualify.pieces import plain
from qualify.verdict import VERDICT_SCHEMA

PRE_MEMORY = "qualify-v1"
# The candidate's standing preferences (qualify.standing), then the ranked block of the
# company's facts and the candidate's other ones (qualify.context.select).
MEMORY_AWARE = "qualify-v5-standing"
# Agent mode with the standing preferences in its prompt, its recall tool for the rest.
MEMORY_AGENT = "qualify-v5-standing-agent"
# The standing part's first wording (a two-line opening, a longer left-out line; 7 Dec
# 2026): kept so recorded rows resolve; replaying them renders v5's wording.
MEMORY_AWARE_V4 = "qualify-v4-standing"
MEMORY_AGENT_V4 = "qualify-v4-standing-agent"
# The block built from the whole posting, the company's facts and the candidate's own each
# in their share, every fact with why it is there, no standing part: kept so recorded rows
# resolve and replay can compare.
MEMORY_CONTEXT_BLOCK = "qualify-v3-context"
# The seed's block (one company + title + role query, no reasons): kept so recorded rows
# resolve and replay can compare the two blocks.
MEMORY_SEED_BLOCK = "qualify-v2-memory"
MEMORY_AGENT_NO_STANDING = "qualify-v2-memory-agent"

MEMORY_INSTRUCTION = (
    "Memories are context; they never override a dealbreaker stated in the posting."
)
MEMORY_HEADER = (
    "## Memory: what you know about this company and the candidate that bears on this posting"
)
SEED_MEMORY_HEADER = "## Memory: recalled facts about this company and role"
FEW_SHOT_HEADER = "## Past verdicts and what happened next (structured events, newest first)"

_CRITERIA = "\n".join(
    [
        "Judge the posting against the candidate, one criterion at a time:",
        "- remote_ok: does the posting's location / remote policy fit the candidate's "
        "preferences? yes, no or unknown.",
        "- salary_ok: does the stated pay meet the candidate's expectations? yes, no or "
        "unknown (unknown when no pay is stated).",
        "- on_call_ok: is the on-call load acceptable to the candidate? yes, no or unknown.",
        "- dealbreakers_hit: every dealbreaker (the candidate's, or a hard requirement stated "
        "in the posting that the candidate cannot meet) this posting hits, quoted briefly; "
        "[] when none.",
        "- role_fit: 0-100, how well the role itself matches the candidate's summary and "
        "preferences.",
        "- reasons: one short sentence, the main reason.",
        "The verdict and fit score are computed from your answers; do not give a verdict yourself.",
        "Reply with one JSON object matching this schema and nothing else:",
        "",
    ]
)

_BASE_SYSTEM = (
    "You qualify job postings for one candidate.\n"
    + _CRITERIA
    + json.dumps(VERDICT_SCHEMA, separators=(",", ":"))
)

_AGENT_TOOLS_NOTE = (
    "\nBefore answering you may call the `recall` tool to look up remembered facts about "
    "this company (a few calls at most, a few facts each). " + MEMORY_INSTRUCTION
)


@dataclass(frozen=True)
class PromptVersion:
    name: str
    memory_aware: bool
    agent: bool
    system: str
    # Which block: the whole posting with reasons, or the seed's one query.
    seed_block: bool = False
    # The candidate's standing preferences shown as a part of their own.
    standing: bool = False


_AGENT_SYSTEM = _BASE_SYSTEM + _AGENT_TOOLS_NOTE

VERSIONS: dict[str, PromptVersion] = {
    PRE_MEMORY: PromptVersion(PRE_MEMORY, memory_aware=False, agent=False, system=_BASE_SYSTEM),
    MEMORY_AWARE: PromptVersion(
        MEMORY_AWARE, memory_aware=True, agent=False, system=_BASE_SYSTEM, standing=True
    ),
    MEMORY_AGENT: PromptVersion(
        MEMORY_AGENT, memory_aware=True, agent=True, system=_AGENT_SYSTEM, standing=True
    ),
    MEMORY_AWARE_V4: PromptVersion(
        MEMORY_AWARE_V4, memory_aware=True, agent=False, system=_BASE_SYSTEM, standing=True
    ),
    MEMORY_AGENT_V4: PromptVersion(
        MEMORY_AGENT_V4, memory_aware=True, agent=True, system=_AGENT_SYSTEM, standing=True
    ),
    MEMORY_CONTEXT_BLOCK: PromptVersion(
        MEMORY_CONTEXT_BLOCK, memory_aware=True, agent=False, system=_BASE_SYSTEM
    ),
    MEMORY_SEED_BLOCK: PromptVersion(
        MEMORY_SEED_BLOCK, memory_aware=True, agent=False, system=_BASE_SYSTEM, seed_block=True
    ),
    MEMORY_AGENT_NO_STANDING: PromptVersion(
        MEMORY_AGENT_NO_STANDING, memory_aware=True, agent=True, system=_AGENT_SYSTEM
    ),
}


def render_profile(profile: Profile) -> str:
    lines = ["## Candidate", f"Summary: {profile.summary.strip()}"]
    if profile.preferences.strip():
        lines.append(f"Preferences: {profile.preferences.strip()}")
    if profile.dealbreakers:
        lines.append("Candidate dealbreakers: " + "; ".join(profile.dealbreakers))
    return "\n".join(lines)


def render_posting(posting: Posting) -> str:
    lines = ["## Posting", f"Company: {posting.company.name}", f"Title: {posting.title}"]
    if posting.role_category:
        lines.append(f"Role category: {posting.role_category}")
    where = ", ".join(p for p in (posting.location, posting.remote) if p)
    lines.append(f"Location / remote: {where or 'unknown'}")
    if posting.salary:
        lines.append(f"Pay: {posting.salary}")
    if posting.dealbreakers:
        lines.append("Dealbreakers stated in the posting: " + "; ".join(posting.dealbreakers))
    # An HTML description is shown as its text: markup would spend the model's budget on tags.
    description = plain(posting.description).strip()
    if description:
        lines.append("Description:\n" + description[:6000])
    return "\n".join(lines)


def render_memory_block(facts: list[ContextFact], *, seed_block: bool = False) -> str:
    """The facts, one per line with why each is there, under the instruction that they never
    override dealbreakers; ``seed_block`` renders the seed's block (no reasons)."""
    if seed_block:
        lines = [f"- [fact {f.id}] ({f.kind}) {f.text}" for f in facts]
        header = SEED_MEMORY_HEADER
    else:
        lines = [f"- [fact {f.id}] ({f.kind}) {f.text} (why: {f.why})" for f in facts]
        header = MEMORY_HEADER
    return "\n".join([header, MEMORY_INSTRUCTION, *(lines or ["- (no remembered facts)"])])


def render_context(version: PromptVersion, selection: Selection) -> str:
    """What the model is shown of memory under ``version``: the standing part (when the
    version has one and the candidate has standing preferences), then the ranked block
    (not in agent mode, whose tool recalls instead)."""
    parts = []
    if version.standing:
        part = standing_part.StandingPart(
            facts=selection.standing, omitted=selection.standing_omitted, budget=0
        )
        parts.append(standing_part.render(part))
    if not version.agent:
        parts.append(render_memory_block(selection.facts, seed_block=version.seed_block))
    return "\n\n".join(p for p in parts if p)


def build_messages(
    version: PromptVersion,
    *,
    profile: Profile,
    posting: Posting,
    selection: Selection,
    examples: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """The conversation for one posting. Pre-memory: profile and posting only."""
    parts = [render_profile(profile)]
    if version.memory_aware:
        if examples:
            shots = [json.dumps(e, ensure_ascii=False, sort_keys=True) for e in examples]
            parts.append("\n".join([FEW_SHOT_HEADER, *shots]))
        if memory := render_context(version, selection):
            parts.append(memory)
    parts.append(render_posting(posting))
    return [
        {"role": "system", "content": version.system},
        {"role": "user", "content": "\n\n".join(parts)},
    ]
