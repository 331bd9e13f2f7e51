"""Test doubles for qualify's specs: a scripted OpenAI-compatible server and factories.

The server is real HTTP on 127.0.0.1 (an ephemeral port) so the production client, with its
timeouts and retries, is what talks to it. It records every request body it receives.
"""

import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from qualify import services
from qualify.models import Posting


def criteria(**overrides: Any) -> dict[str, Any]:
    """A valid per-criterion reply (qualifies with fit 80 unless overridden)."""
    base = {
        "remote_ok": "yes",
        "salary_ok": "unknown",
        "on_call_ok": "yes",
        "dealbreakers_hit": [],
        "role_fit": 80,
        "reasons": "platform work, remote friendly",
    }
    base.update(overrides)
    return base


@dataclass(frozen=True)
class Raw:
    """Reply content sent verbatim (for invalid-output paths)."""

    content: str


@dataclass(frozen=True)
class Tools:
    """An assistant turn calling tools: ``[(name, arguments_dict), ...]``."""

    calls: list[tuple[str, dict[str, Any]]]


@dataclass(frozen=True)
class Slow:
    seconds: float


class FakeLLM:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.script: deque[Any] = deque()
        self.default: Any = criteria()
        # When set, answers every request the script does not: responder(request_body) -> item.
        self.responder: Any = None
        self._lock = threading.Lock()
        self._calls = 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def queue(self, *items: Any) -> None:
        self.script.extend(items)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def prompt(self, index: int = -1) -> str:
        """All message contents of one recorded request, joined."""
        return "\n".join(str(m.get("content") or "") for m in self.requests[index]["messages"])

    def _next(self, body: dict[str, Any]) -> Any:
        with self._lock:
            if self.script:
                return self.script.popleft()
        return self.responder(body) if self.responder else self.default

    def _reply(self, item: Any) -> dict[str, Any]:
        with self._lock:
            self._calls += 1
            n = self._calls
        message: dict[str, Any] = {"role": "assistant", "content": None}
        finish = "stop"
        if isinstance(item, Tools):
            message["tool_calls"] = [
                {
                    "id": f"call_{n}_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for i, (name, args) in enumerate(item.calls)
            ]
            finish = "tool_calls"
        elif isinstance(item, Raw):
            message["content"] = item.content
        else:
            message["content"] = json.dumps(item)
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": "fake-model",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with fake._lock:
                    fake.requests.append(body)
                item = fake._next(body)
                if isinstance(item, Slow):
                    time.sleep(item.seconds)
                    item = criteria()
                payload = json.dumps(fake._reply(item)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler


_posting_counter = iter(range(1, 10**9))


def make_posting(
    company: str = "Northwind Robotics",
    title: str = "Senior SRE",
    role_category: str = "sre",
    **fields: Any,
) -> Posting:
    n = next(_posting_counter)
    fields.setdefault("url", f"https://jobs.example.com/{n}")
    return Posting.objects.create(
        company=services.company_named(company),
        title=title,
        role_category=role_category,
        **fields,
    )


def run_qualify(*, agent: bool = False, limit: int | None = None) -> services.BatchSummary:
    """What the `qualify` command does, minus the progress bar."""
    batch = services.prepare_batch(limit=limit)
    return services.run_batch(batch, agent_mode=agent)


def body_text(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in body["messages"])


def memory_sensitive(body: dict[str, Any]) -> dict[str, Any]:
    """A scripted model whose answer depends on memory: shown a memory block it turns the
    posting down (on-call), without one it qualifies it."""
    from qualify.prompts import MEMORY_HEADER

    if MEMORY_HEADER in body_text(body):
        return criteria(on_call_ok="no", reasons="memory says the pager is heavy")
    return criteria()


def memory_block(prompt: str) -> str:
    """The memory block's lines from a recorded prompt ('' when there is none)."""
    from qualify.prompts import MEMORY_HEADER

    if MEMORY_HEADER not in prompt:
        return ""
    block = prompt.split(MEMORY_HEADER, 1)[1]
    return block.split("\n\n", 1)[0]
