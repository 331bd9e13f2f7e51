"""The OpenAI-compatible chat client qualify uses (llama.cpp server, Ollama, vLLM, hosted).

Every request is bounded by KARANI_LLM_TIMEOUT and one transport retry; an invalid verdict
is asked for again once, with the validation error, then given up.
"""

import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import openai

from memory.errors import first_line
from qualify import verdict
from qualify.conf import settings
from qualify.errors import QualifyError

RETRY_PROMPT = (
    "Your reply was not valid: {error}. Reply again with only the JSON object, exactly as "
    "the schema requires, and nothing else."
)


class LLMNotConfigured(QualifyError):
    """No usable endpoint is configured: raised before any request is made."""


class LLMCallFailed(Exception):
    """The endpoint failed (unreachable, timeout, HTTP error) after the bounded retry."""


class VerdictUnavailable(Exception):
    """The model's reply stayed invalid after one retry."""


def endpoint_failed(error: str) -> bool:
    """Whether a recorded error is the endpoint's (LLMCallFailed), which the circuit counts."""
    return error.startswith("LLM endpoint")


@dataclass(frozen=True)
class LLMConfig:
    base_url: str
    model: str
    api_key: str
    timeout: float

    @classmethod
    def from_settings(cls) -> "LLMConfig":
        base_url = settings.KARANI_LLM_BASE_URL
        if not base_url:
            raise LLMNotConfigured(
                "KARANI_LLM_BASE_URL is not set: point it at an OpenAI-compatible endpoint, "
                "e.g. http://127.0.0.1:8080/v1 (nothing was qualified)"
            )
        parsed = urlparse(base_url)
        if parsed.scheme not in {"http", "https"} or not parsed.netloc:
            raise LLMNotConfigured(
                f"KARANI_LLM_BASE_URL={base_url!r} is not an http(s) URL (nothing was qualified)"
            )
        return cls(
            base_url=base_url,
            model=settings.KARANI_LLM_MODEL,
            api_key=settings.KARANI_LLM_API_KEY,
            timeout=settings.KARANI_LLM_TIMEOUT,
        )


class ChatClient:
    """One endpoint; counts the time spent waiting on it (``elapsed_ms``)."""

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self.elapsed_ms = 0.0
        self._client = openai.OpenAI(
            base_url=config.base_url,
            # Local servers ignore the key, but the client insists on one.
            api_key=config.api_key or "not-needed",
            timeout=config.timeout,
            max_retries=1,
        )

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        json_schema: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The assistant's turn, in the form it goes back into the conversation."""
        body: dict[str, Any] = {"model": self.config.model, "messages": messages, "temperature": 0}
        if tools:
            body["tools"] = tools
        if json_schema is not None:
            # llama.cpp's server accepts this and constrains output to the schema; it rejects
            # OpenAI's {"type": "json_schema"}. Servers that ignore "schema" still get JSON mode.
            body["response_format"] = {"type": "json_object", "schema": json_schema}
        started = time.perf_counter()
        try:
            # The client's plain POST: its timeout, retry and errors, without the typed request
            # and response objects that were most of its cost per call.
            response = self._client.post("/chat/completions", cast_to=dict, body=body)
        except openai.APITimeoutError:
            raise LLMCallFailed(f"LLM endpoint timed out after {self.config.timeout:g}s") from None
        except openai.APIConnectionError as exc:
            raise LLMCallFailed(f"LLM endpoint unreachable: {first_line(exc)[:200]}") from None
        except openai.APIStatusError as exc:
            raise LLMCallFailed(
                f"LLM endpoint answered HTTP {exc.status_code}: {first_line(exc)[:200]}"
            ) from None
        finally:
            self.elapsed_ms += (time.perf_counter() - started) * 1000
        message = (response.get("choices") or [{}])[0].get("message") or {}
        turn: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
        calls = [c for c in message.get("tool_calls") or [] if c.get("function")]
        if calls:
            turn["tool_calls"] = [_tool_call(c.get("id"), c["function"]) for c in calls]
        return turn


def _tool_call(call_id: str, function: dict[str, Any]) -> dict[str, Any]:
    called = {"name": function.get("name"), "arguments": function.get("arguments") or "{}"}
    return {"id": call_id, "type": "function", "function": called}


def settle_verdict(
    client: ChatClient, messages: list[dict[str, Any]], reply: dict[str, Any]
) -> dict[str, Any]:
    """Validated criteria from ``reply``, else from one retry (appended to ``messages``);
    VerdictUnavailable when the retry is invalid too."""
    try:
        return _parse_reply(reply)
    except verdict.InvalidOutput as first:
        messages.append(reply)
        messages.append({"role": "user", "content": RETRY_PROMPT.format(error=first)})
        retry = client.complete(messages, json_schema=verdict.VERDICT_SCHEMA)
        try:
            return _parse_reply(retry)
        except verdict.InvalidOutput as second:
            raise VerdictUnavailable(f"invalid model output after one retry: {second}") from None


def _parse_reply(reply: dict[str, Any]) -> dict[str, Any]:
    if reply.get("tool_calls") and not reply["content"].strip():
        raise verdict.InvalidOutput("a tool call arrived where the verdict JSON was expected")
    return verdict.parse(reply["content"])


def ask_verdict(client: ChatClient, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Single mode: one request for the criteria JSON (plus at most one retry)."""
    reply = client.complete(messages, json_schema=verdict.VERDICT_SCHEMA)
    return settle_verdict(client, messages, reply)
