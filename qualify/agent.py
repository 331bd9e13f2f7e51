"""Asking the model for a verdict. In agent mode it may first call a ``recall`` tool, within the
injected block's fact cap and MAX_TOOL_ROUNDS; code fixes the company scope, the model only
chooses the query."""

import json
import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from qualify import context, llm, prompts
from qualify.context import ContextFact
from qualify.models import Posting

log = logging.getLogger("karani.qualify")

MAX_TOOL_ROUNDS = 3

RECALL_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "recall",
        "description": (
            "Look up remembered facts (past verdicts, outcomes, taught preferences) about "
            "the posting's company and role. Returns a few facts, best first."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "what to look for, a few words"}
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
}


@dataclass
class Answer:
    criteria: dict[str, Any] | None  # None when the model or endpoint failed: see error
    error: str = ""
    facts: list[ContextFact] = field(default_factory=list)
    memory_errors: list[str] = field(default_factory=list)


@dataclass
class _Recall:
    """The tool's implementation, holding the per-qualification budget."""

    posting: Posting
    cap: int
    before: datetime | None
    seen: dict[int, ContextFact] = field(default_factory=dict)
    # Facts the prompt showed already (the standing preferences): never returned again.
    shown: set[int] = field(default_factory=set)
    errors: list[str] = field(default_factory=list)

    @property
    def remaining(self) -> int:
        return self.cap - len(self.seen)

    def __call__(self, arguments: str) -> dict[str, Any]:
        try:
            query = json.loads(arguments or "{}").get("query")
        except (json.JSONDecodeError, AttributeError):  # not JSON, or not an object
            query = None
        if not isinstance(query, str) or not query.strip():
            return {"error": 'call recall with {"query": "a few words"}'}
        if self.remaining <= 0:
            return {"error": "fact budget used up; answer with the verdict JSON now"}
        try:
            # The whole cap: after dropping facts already seen, `remaining` may still be found.
            query = query.strip()[: context.MAX_QUERY_CHARS]
            found, _ = context.recall_facts(
                self.posting.company.name, query=query, limit=self.cap, before=self.before
            )
        except Exception as exc:  # memory outage: the tool says so, the decision goes on
            reason = f"{type(exc).__name__}: {str(exc).strip()[:200]}"
            self.errors.append(reason)
            log.warning("recall tool failed for posting %s (%s)", self.posting.pk, reason)
            return {"error": "memory is unavailable right now; decide without it", "facts": []}
        fresh = [f for f in found if f.id not in self.seen and f.id not in self.shown]
        fresh = fresh[: self.remaining]
        for f in fresh:
            why = f"found by the model's recall of {query!r}"
            self.seen[f.id] = ContextFact(
                f.id, f.text, f.kind, f.company, f.score, why[:200], f.created_at
            )
        return {
            "note": prompts.MEMORY_INSTRUCTION,
            "facts": [{"id": f.id, "kind": f.kind, "text": f.text} for f in fresh],
        }


def ask(
    client: llm.ChatClient,
    messages: list[dict[str, Any]],
    posting: Posting,
    *,
    tools: bool,
    before: datetime | None = None,
    shown: set[int] | None = None,
) -> Answer:
    """The tool loop (agent mode; none without ``tools``), then the verdict; a failure comes
    back as ``error`` with the facts already shown, so the record says what the model saw."""
    recall = _Recall(posting, context.fact_cap(), before, shown=shown or set())
    rounds = 0
    try:
        while tools and rounds < MAX_TOOL_ROUNDS and recall.remaining > 0:
            reply = client.complete(messages, tools=[RECALL_TOOL])
            if not reply.get("tool_calls"):
                criteria = llm.settle_verdict(client, messages, reply)
                break
            rounds += 1
            messages.append(reply)
            for call in reply["tool_calls"]:
                name, arguments = call["function"]["name"], call["function"]["arguments"]
                if name == "recall":
                    result = recall(arguments)
                else:
                    result = {"error": f"unknown tool {name!r}; the only tool is recall"}
                content = json.dumps(result, ensure_ascii=False)
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
        else:
            # No tools, or out of rounds or budget: the reply is held to the verdict schema.
            criteria = llm.ask_verdict(client, messages)
    except (llm.LLMCallFailed, llm.VerdictUnavailable) as exc:
        return Answer(criteria=None, error=str(exc), facts=list(recall.seen.values()))
    return Answer(criteria=criteria, facts=list(recall.seen.values()), memory_errors=recall.errors)
