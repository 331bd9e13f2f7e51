"""Everything decided before the model is asked: arm, prompt version, working context and
the conversation. ``qualify``, ``replay``, the context API and the MCP ``context`` tool all
build through these functions."""

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from qualify import context, holdout, prompts
from qualify.context import ContextFact, Subject
from qualify.few_shot import FewShotPool
from qualify.models import Arm, Posting, Profile


@dataclass(frozen=True)
class WorkingContext:
    """The block a decision gets: which arm and prompt version, the facts and the text."""

    prompt_version: str
    arm: str
    mode: str
    fallback: bool
    facts: list[ContextFact]
    block: str
    memory_error: str | None = None
    standing: list[ContextFact] = field(default_factory=list)
    standing_omitted: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "prompt_version": self.prompt_version,
            "arm": self.arm,
            "mode": self.mode,
            "fallback": self.fallback,
            "standing": [f.to_dict() for f in self.standing],
            "standing_omitted": self.standing_omitted,
            "facts": [f.to_dict() for f in self.facts],
            "block": self.block,
        }


def version_for(arm: str, *, agent_mode: bool = False) -> prompts.PromptVersion:
    """The prompt version of a live decision in ``arm``: pre-memory when memory is off or the
    posting is held out."""
    if not context.memory_enabled() or arm == Arm.HOLDOUT:
        name = prompts.PRE_MEMORY  # no memory block, no recall tool
    else:
        name = prompts.MEMORY_AGENT if agent_mode else prompts.MEMORY_AWARE
    return prompts.VERSIONS[name]


def build_working_context(
    subject: Subject, *, key: int | str | None = None, limit: int | None = None
) -> WorkingContext:
    """The block for ``subject``; ``key`` (an external id or posting id) draws its holdout
    arm as qualify does, and a held-out subject gets no facts and the pre-memory version."""
    arm = holdout.arm_for(key) if key is not None else Arm.NONE
    version = version_for(arm)
    if version.memory_aware:
        selection = context.select(subject, limit=limit)
    else:
        selection = context.Selection.none()
    return WorkingContext(
        prompt_version=version.name,
        arm=arm,
        mode=selection.mode,
        fallback=selection.fallback,
        facts=selection.facts,
        block=prompts.render_context(version, selection) if version.memory_aware else "",
        memory_error=selection.error,
        standing=selection.standing,
        standing_omitted=selection.standing_omitted,
    )


@dataclass
class Prepared:
    version: prompts.PromptVersion
    arm: str
    messages: list[dict[str, Any]]
    facts: list[ContextFact]  # the ranked block's
    memory_error: str | None
    standing: list[ContextFact] = field(default_factory=list)
    standing_omitted: int = 0


def prompt_for(
    version: prompts.PromptVersion,
    *,
    posting: Posting,
    profile: Profile,
    pool: FewShotPool | None = None,
    before: datetime | None = None,
    arm: str = Arm.NONE,
) -> Prepared:
    """The conversation for ``posting`` under ``version``, with memory and few-shot examples
    as of ``before`` (replay's original decision, so the posting's outcome never leaks in)."""
    examples: list[dict[str, Any]] = []
    selection = context.Selection.none()
    if version.memory_aware:
        examples = (pool or FewShotPool.load()).examples_for(posting, before=before)
        subject = Subject.of(posting)
        if version.seed_block:
            selection = context.select_seed(subject, before=before)
        elif version.standing or not version.agent:
            selection = context.select(subject, before=before, with_standing=version.standing)
        if version.agent:  # agent mode recalls the rest through its tool
            selection = replace(selection, facts=[])
    messages = prompts.build_messages(
        version, profile=profile, posting=posting, selection=selection, examples=examples
    )
    return Prepared(
        version=version,
        arm=arm,
        messages=messages,
        facts=selection.facts,
        memory_error=selection.error,
        standing=selection.standing,
        standing_omitted=selection.standing_omitted,
    )


def prepare_prompt(
    *,
    posting: Posting,
    profile: Profile,
    agent_mode: bool = False,
    pool: FewShotPool | None = None,
) -> Prepared:
    """The live path: the posting's holdout arm picks pre-memory or memory-aware."""
    arm = holdout.arm_for(holdout.key_of(posting))
    version = version_for(arm, agent_mode=agent_mode)
    return prompt_for(version, posting=posting, profile=profile, pool=pool, arm=arm)
