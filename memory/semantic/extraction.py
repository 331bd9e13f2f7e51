"""Fact extraction on writes with a prompt small enough for a local model's context.

mem0's own extraction prompt does not fit a 4k-8k context (docs/local-model.md). ``extract``
never raises: without usable statements the caller indexes the fact verbatim at once.
"""

import json
import logging
import math
import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from memory.credentials import find_secrets
from memory.errors import first_line
from memory.semantic import mem0_adapter
from memory.semantic.breaker import Breaker
from memory.semantic.config import SemanticConfig
from memory.text import MAX_TEXT_CHARS

log = logging.getLogger("karani.memory")

SYSTEM_PROMPT = (
    "You index facts for a job seeker's memory. Rewrite the fact below as 1 to 3 short, "
    "standalone statements that a later search can match. Keep every company name, number, "
    "place, technology and time span exactly as written. Never add information that is not "
    "in the fact, never answer or comment. "
    'Reply with JSON only: {"memory": [{"text": "..."}]}'
)
# The completion (a few short statements as JSON) never needs more; less on tiny contexts.
MAX_COMPLETION_TOKENS = 256
MIN_COMPLETION_TOKENS = 64
# The chat template's role markers and the reply's priming, beyond the two messages' text.
TEMPLATE_TOKENS = 32
MAX_STATEMENTS = 5
# Keys under which OpenAI-compatible servers report a model's serving context in /v1/models:
# vLLM, LM Studio / OpenRouter-style, and llama.cpp's C++ server (meta).
_CONTEXT_KEYS = ("max_model_len", "context_length", "max_context_length", "context_window")


@dataclass(frozen=True)
class Budget:
    """Token budget of one extraction request, from the endpoint's context window."""

    context: int
    completion: int
    source: str  # "endpoint" (its /v1/models said) or "KARANI_LLM_CONTEXT"


def estimate_tokens(text: str) -> int:
    """An upper estimate: BPE tokenizers average ~4 bytes a token on English, ~3 elsewhere."""
    return math.ceil(len(text.encode("utf-8")) / 3)


def reported_context(cfg: SemanticConfig) -> int | None:
    """The serving context the endpoint's /v1/models reports for our model, if it does."""
    url = cfg.llm_base_url.rstrip("/") + "/models"
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {cfg.llm_api_key}"})
    try:
        with urllib.request.urlopen(request, timeout=min(cfg.llm_timeout, 5.0)) as response:
            body = json.load(response)
    except (urllib.error.URLError, OSError, ValueError):
        return None
    models = body.get("data") if isinstance(body, dict) else None
    if not isinstance(models, list):
        return None
    ours = [m for m in models if isinstance(m, dict) and m.get("id") == cfg.llm_model]
    for model in ours or [m for m in models if isinstance(m, dict)][:1]:
        meta = model.get("meta") if isinstance(model.get("meta"), dict) else {}
        for value in [model.get(k) for k in _CONTEXT_KEYS] + [meta.get("n_ctx")]:
            if isinstance(value, int) and not isinstance(value, bool) and value >= 256:
                return value
    return None


def budget(cfg: SemanticConfig) -> Budget:
    """Sized once per process and LLM configuration (client.get), never per write."""
    reported = reported_context(cfg)
    context = reported or cfg.llm_context
    completion = max(MIN_COMPLETION_TOKENS, min(MAX_COMPLETION_TOKENS, context // 8))
    return Budget(context, completion, "endpoint" if reported else "KARANI_LLM_CONTEXT")


def messages_for(text: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": f"Fact: {text}"},
    ]


def fits(text: str, plan: Budget) -> bool:
    needed = sum(estimate_tokens(m["content"]) for m in messages_for(text))
    return needed <= plan.context - plan.completion - TEMPLATE_TOKENS


# Skips extraction for a cool-down after the LLM failed to answer, in this process only.
outage = Breaker(
    "extraction LLM unavailable, facts are indexed verbatim (retry in %gs): %s", shared=False
)


def extract(llm: Any, text: str, *, plan: Budget | None, cooldown: float) -> list[str] | None:
    """Standalone statements of ``text`` from ``llm`` (mem0's LLM client) within ``plan``, or
    None: index the text verbatim. A failing server skips extraction for ``cooldown`` s."""
    if plan is None or not fits(text, plan):
        log.debug("extraction skipped: the prompt does not fit the LLM's context")
        return None
    if not outage.allow():
        return None
    try:
        # No response_format: llama-cpp-python's JSON grammar made each call ~2.5x slower on
        # a 0.5B model (docs/local-model.md); the reply is parsed leniently instead.
        reply = llm.generate_response(messages=messages_for(text))
    except Exception as exc:
        import openai  # mem0's LLM client raises openai's errors; loaded once there is one

        first = first_line(exc)
        # A refused, timed-out or failing server is down for everyone; a 4xx (a prompt the
        # server would not take) concerns this one fact only.
        if isinstance(
            exc, openai.APIConnectionError | openai.InternalServerError | openai.RateLimitError
        ):
            outage.trip(first, cooldown=cooldown)
        else:
            log.debug("extraction failed for one fact (indexed verbatim): %s", first)
        return None
    statements = clean(parse(reply))
    return statements or None


def parse(reply: Any) -> list[str]:
    """The statements in the model's JSON reply (mem0's ``{"memory": [{"text": ...}]}``)."""
    if not isinstance(reply, str) or not reply.strip():
        return []
    body = mem0_adapter.strip_code_fences(reply)
    try:
        data = json.loads(body, strict=False)
    except json.JSONDecodeError:
        try:
            data = json.loads(mem0_adapter.json_in(body), strict=False)
        except json.JSONDecodeError:
            return []
    items = data.get("memory", data.get("facts")) if isinstance(data, dict) else data
    if not isinstance(items, list):
        return []
    found = []
    for item in items:
        if isinstance(item, dict):
            item = item.get("text") or item.get("fact") or item.get("memory")
        if isinstance(item, str):
            found.append(item)
    return found


def clean(statements: list[str]) -> list[str]:
    """Trimmed, de-duplicated statements, none that looks like a credential."""
    kept: dict[str, str] = {}
    for raw in statements:
        text = re.sub(r"\s+", " ", raw).strip()
        if len(text) < 3 or len(text) > MAX_TEXT_CHARS:
            continue
        if find_secrets(text):
            log.debug("extraction: dropped a statement that looks like a credential")
            continue
        kept.setdefault(text.casefold(), text)
        if len(kept) == MAX_STATEMENTS:
            break
    return list(kept.values())
