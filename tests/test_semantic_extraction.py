"""Extraction on writes (KARANI_LLM_BASE_URL set): it fits the endpoint's context, its reply is
checked, and whatever goes wrong the fact is indexed verbatim at once, never left pending.

The LLM is a scripted local HTTP server (the one test double); the store, the embedder and
the ledger are real. tests/test_realmodel_extraction.py runs the same path on a real model.
"""

import http.server
import json
import threading
import time

import psycopg
import pytest
from psycopg import sql
from semantic_support import *  # noqa: F403  (fixtures)
from semantic_support import closed_port, karani_warnings

from memory import selectors, services
from memory.models import Memory
from memory.semantic import client as clientmod
from memory.semantic import extraction

pytestmark = [pytest.mark.pgvector, pytest.mark.django_db(transaction=True)]


class ScriptedLLM:
    """An OpenAI-compatible chat endpoint that answers from a script and records requests."""

    def __init__(self, *, models: dict | None = None) -> None:
        self.models = models or {"object": "list", "data": [{"id": "local-model"}]}
        self.replies: list[tuple[int, str]] = []  # (status, content), consumed in order
        self.default: tuple[int, str] = (200, json.dumps({"memory": []}))
        self.chats: list[dict] = []
        llm = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _send(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._send(200, llm.models)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                llm.chats.append(body)
                status, content = llm.replies.pop(0) if llm.replies else llm.default
                if status != 200:
                    self._send(status, {"error": {"message": content, "type": "bad_request"}})
                    return
                message = {"role": "assistant", "content": content}
                self._send(
                    200,
                    {
                        "id": "x",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
                    },
                )

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def reply(self, *statements: str) -> None:
        self.replies.append((200, json.dumps({"memory": [{"text": s} for s in statements]})))

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def llm(mem0_mode, settings):
    server = ScriptedLLM()
    settings.KARANI_LLM_BASE_URL = server.url
    settings.KARANI_LLM_MODEL = "local-model"
    settings.KARANI_LLM_CONTEXT = 4096
    extraction.outage.reset()
    yield server
    server.close()
    extraction.outage.reset()
    clientmod.discard_all()


def indexed_texts(dsn: str, collection: str, ledger_id: int) -> list[str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            sql.SQL("SELECT payload->>'data' FROM {} WHERE payload->>'ledger_id' = %s").format(
                sql.Identifier(collection)
            ),
            (str(ledger_id),),
        ).fetchall()
    return sorted(r[0] for r in rows)


def test_it_indexes_the_statements_the_llm_extracts(llm, vector_database, mem0_mode):
    # Small models fence their JSON when not constrained to it.
    statements = ["Will not relocate to Austin", "Turned down Northwind Robotics over relocation"]
    reply = json.dumps({"memory": [{"text": s} for s in statements]}, indent=2)
    llm.replies.append((200, f"```json\n{reply}\n```"))
    fact = services.remember(
        text="Said no to Northwind Robotics because they wanted a move to Austin",
        company="Northwind Robotics",
    )

    assert Memory.objects.get(pk=fact.id).indexed_at is not None
    assert indexed_texts(vector_database, mem0_mode, fact.id) == [
        "Turned down Northwind Robotics over relocation",
        "Will not relocate to Austin",
    ]
    # The prompt is karani's compact one and the completion bounded.
    (chat,) = llm.chats
    assert chat["messages"][0]["content"] == extraction.SYSTEM_PROMPT
    assert chat["max_tokens"] == extraction.MAX_COMPLETION_TOKENS
    result = selectors.recall(query="would she move to Texas?", company="Northwind Robotics")
    assert [f.id for f in result.results][:1] == [fact.id]
    assert result.results[0].text == fact.memory.text  # recall answers with the ledger's words


def test_it_indexes_verbatim_with_extraction_off_though_an_llm_is_configured(
    llm, settings, vector_database, mem0_mode
):
    # The same endpoint serves qualify; KARANI_MEMORY_EXTRACTION=off keeps it out of the index.
    settings.KARANI_MEMORY_EXTRACTION = False
    llm.reply("Umbrella Corp pays in USD")
    fact = services.remember(
        text="Said no to Northwind Robotics because they wanted a move to Austin",
        company="Northwind Robotics",
    )

    assert llm.chats == []
    assert indexed_texts(vector_database, mem0_mode, fact.id) == [fact.memory.text]
    assert Memory.objects.get(pk=fact.id).indexed_at is not None

    # Back on, the next write asks the model again: the switch is read per client.
    settings.KARANI_MEMORY_EXTRACTION = True
    other = services.remember(text="Umbrella Corp pays its contractors in US dollars")
    assert len(llm.chats) == 1
    assert indexed_texts(vector_database, mem0_mode, other.id) == ["Umbrella Corp pays in USD"]


def test_it_indexes_verbatim_at_once_when_the_llm_is_down(mem0_mode, settings, caplog):
    settings.KARANI_LLM_BASE_URL = f"http://127.0.0.1:{closed_port()}/v1"
    extraction.outage.reset()
    try:
        first = services.remember(text="Prefers remote roles with async teams")
        started = time.monotonic()
        second = services.remember(text="Remote roles need a good home office")
        second_took = time.monotonic() - started
    finally:
        extraction.outage.reset()
        clientmod.discard_all()

    assert Memory.objects.filter(indexed_at__isnull=True).count() == 0
    assert {f.id for f in selectors.recall(query="working from home").results} >= {
        first.id,
        second.id,
    }
    warnings = karani_warnings(caplog)
    assert len(warnings) == 1 and "extraction LLM unavailable" in warnings[0], warnings
    assert second_took < 2.0, "the second write must not wait for the dead LLM again"


def test_it_never_sends_a_prompt_that_cannot_fit(llm, settings, vector_database, mem0_mode):
    settings.KARANI_LLM_CONTEXT = 512  # the scripted endpoint does not report its own
    long_fact = "Asked about the on-call policy at Globex: " + "weekly rotations, " * 100
    fact = services.remember(text=long_fact.strip())

    assert llm.chats == []
    assert indexed_texts(vector_database, mem0_mode, fact.id) == [fact.memory.text]
    assert Memory.objects.get(pk=fact.id).indexed_at is not None


def test_it_sizes_the_completion_from_the_context_the_endpoint_reports(llm, settings):
    llm.models = {"object": "list", "data": [{"id": "local-model", "max_model_len": 1024}]}
    settings.KARANI_LLM_CONTEXT = 32768  # the endpoint's own figure wins
    llm.reply("Salary floor is 140k EUR")
    services.remember(text="Salary floor is 140k EUR; below that only for a four-day week")

    budget = clientmod.get().llm_budget
    assert (budget.context, budget.source) == (1024, "endpoint")
    assert llm.chats[0]["max_tokens"] == 1024 // 8


def test_it_drops_extracted_statements_that_look_like_credentials(llm, vector_database, mem0_mode):
    llm.reply("Uses the recruiter portal", "Portal password: Tr0ub4dor&3xyz!")
    fact = services.remember(text="Logs in to the Globex recruiter portal every Monday")
    assert indexed_texts(vector_database, mem0_mode, fact.id) == ["Uses the recruiter portal"]

    llm.reply("api_key=sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c")
    only_secret = services.remember(text="Checks the Initech job board on Fridays")
    assert indexed_texts(vector_database, mem0_mode, only_secret.id) == [only_secret.memory.text]


@pytest.mark.parametrize(
    "status, content",
    [
        (200, "Sure! Here are the facts you asked for."),
        (200, '```json\n{"memory": [{"text": "Initech\'s recruiter repl'),
        (200, json.dumps({"memory": []})),
        (400, "Requested tokens (5000) exceed context window of 4096"),
    ],
    ids=["prose", "cut-off-json", "nothing-kept", "rejected-prompt"],
)
def test_it_indexes_verbatim_when_the_reply_is_unusable(
    llm, vector_database, mem0_mode, caplog, status, content
):
    llm.replies.append((status, content))
    fact = services.remember(text="Initech's recruiter replied within a day")
    assert indexed_texts(vector_database, mem0_mode, fact.id) == [fact.memory.text]

    # One fact's bad reply is not an outage: the next write still asks the LLM.
    llm.reply("Umbrella Corp pays in USD")
    other = services.remember(text="Umbrella Corp pays its contractors in US dollars")
    assert indexed_texts(vector_database, mem0_mode, other.id) == ["Umbrella Corp pays in USD"]
    assert karani_warnings(caplog) == []
