"""Everything decided before the model is asked: arm, prompt version, working context and
the conversation. ``qualify`` and ``replay`` build prompts through the same function."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory.selectors import RecalledFact
from qualify import context, holdout, prompts
from qualify.models import Arm, Posting, Profile


@dataclass
class Prepared:
    version: prompts.PromptVersion
    arm: str
    messages: list[dict[str, Any]]
    facts: list[RecalledFact]
    memory_error: str | None


def prompt_for(
    version: prompts.PromptVersion,
    *,
    posting: Posting,
    profile: Profile,
    pool: context.FewShotPool | None = None,
    before: datetime | None = None,
    arm: str = Arm.NONE,
) -> Prepared:
    """The conversation for ``posting`` under ``version``, with memory and few-shot examples
    as of ``before`` (replay's original decision, so the posting's outcome never leaks in)."""
    examples: list[dict[str, Any]] = []
    facts, memory_error = [], None
    if version.memory_aware:
        examples = (pool or context.FewShotPool.load()).examples_for(posting, before=before)
        if not version.agent:  # agent mode recalls through its tool instead
            facts, memory_error = context.working_facts(posting, before=before)
    messages = prompts.build_messages(
        version, profile=profile, posting=posting, facts=facts, examples=examples
    )
    return Prepared(
        version=version, arm=arm, messages=messages, facts=facts, memory_error=memory_error
    )


def prepare_prompt(
    *,
    posting: Posting,
    profile: Profile,
    agent_mode: bool = False,
    pool: context.FewShotPool | None = None,
) -> Prepared:
    """The live path: the posting's holdout arm picks pre-memory or memory-aware."""
    arm = holdout.arm_for(posting.pk)
    if not context.memory_enabled() or arm == Arm.HOLDOUT:
        name = prompts.PRE_MEMORY  # no memory block, no recall tool
    else:
        name = prompts.MEMORY_AGENT if agent_mode else prompts.MEMORY_AWARE
    return prompt_for(prompts.VERSIONS[name], posting=posting, profile=profile, pool=pool, arm=arm)
