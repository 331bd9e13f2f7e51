"""`karani mcp`: a real MCP client from the SDK drives the real server subprocess over stdio."""

import asyncio
import json
import os
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from django.db import connection
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from karani_site.version import VERSION
from memory import selectors, services
from memory.errors import MemoryInputError
from memory.models import Memory

KARANI = str(Path(sys.executable).parent / "karani")
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def _env(**overrides: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env["MEM0_TELEMETRY"] = "False"
    for name, value in overrides.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


@pytest.fixture
def server_env(transactional_db, tmp_path) -> dict[str, str]:
    """The environment for a `karani mcp` child, pointing at a migrated ledger."""
    if connection.vendor == "postgresql":
        # The child must see what it writes and we must see it too: a transactional test
        # commits for real, and the child connects to the same test database by name.
        s = connection.settings_dict
        url = f"postgresql://{s['USER'] or 'postgres'}@{s['HOST'] or '127.0.0.1'}:"
        url += f"{s['PORT'] or 5432}/{s['NAME']}"
        return _env(DATABASE_URL=url, KARANI_DATA_DIR=str(tmp_path))
    # pytest-django's SQLite test database lives in memory, out of a child's reach: give
    # the child its own ledger file, migrated by the real command.
    env = _env(DATABASE_URL=None, KARANI_DATA_DIR=str(tmp_path))
    subprocess.run([KARANI, "migrate", "-v", "0"], env=env, check=True, timeout=180)
    return env


@asynccontextmanager
async def session_for(env: dict[str, str], errlog):
    params = StdioServerParameters(command=KARANI, args=["mcp"], env=env)
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write, read_timeout_seconds=60) as session,
    ):
        session.initialized = await session.initialize()
        yield session


def _text(result) -> str:
    return " ".join(block.text for block in result.content if block.type == "text")


def _data(result) -> dict:
    assert not result.is_error, _text(result)
    return result.structured_content or json.loads(_text(result))


def test_it_serves_remember_and_recall_and_refuses_secrets(server_env, tmp_path):
    async def scenario() -> dict:
        with open(tmp_path / "server.stderr", "w") as errlog:
            async with session_for(server_env, errlog) as session:
                tools = {tool.name: tool for tool in (await session.list_tools()).tools}
                assert set(tools) == {
                    "remember",
                    "recall",
                    "context",
                    "record_decision",
                    "record_outcome",
                }
                about = tools["remember"].description.lower()
                for warning in ("secret", "credential", "job description", "personal data"):
                    assert warning in about
                assert set(tools["recall"].input_schema["required"]) == {"query"}

                first = _data(
                    await session.call_tool(
                        "remember",
                        {"text": "Prefers async remote teams", "kind": "preference"},
                    )
                )
                again = _data(
                    await session.call_tool(
                        "remember", {"text": "prefers ASYNC remote teams", "kind": "preference"}
                    )
                )
                scoped = _data(
                    await session.call_tool(
                        "remember",
                        {"text": "Northwind pages SREs weekly", "company": "Northwind"},
                    )
                )
                secret = await session.call_tool(
                    "remember", {"text": f"the deploy token is {GITHUB_TOKEN}"}
                )
                bad_kind = await session.call_tool("remember", {"text": "x y", "kind": "wish"})
                bad_limit = await session.call_tool("recall", {"query": "remote", "limit": 0})
                empty = await session.call_tool("recall", {"query": "   "})
                # Still serving after every refusal above.
                recalled = _data(
                    await session.call_tool("recall", {"query": "remote teams", "limit": 3})
                )
                elsewhere = _data(
                    await session.call_tool("recall", {"query": "pages", "company": "Acme"})
                )
                return {
                    "first": first,
                    "again": again,
                    "scoped": scoped,
                    "secret": secret,
                    "bad_kind": bad_kind,
                    "bad_limit": bad_limit,
                    "empty": empty,
                    "recalled": recalled,
                    "elsewhere": elsewhere,
                }

    out = asyncio.run(scenario())
    assert out["first"]["created"] is True
    assert out["again"] == {"id": out["first"]["id"], "created": False, "seen_count": 2}
    assert out["secret"].is_error
    assert "refused" in _text(out["secret"]) and "github-pat" in _text(out["secret"])
    for name in ("bad_kind", "bad_limit", "empty"):
        assert out[name].is_error, name
    assert "query is empty" in _text(out["empty"])
    assert out["recalled"]["mode"] == "basic"
    assert out["recalled"]["results"][0]["id"] == out["first"]["id"]
    assert out["recalled"]["results"][0]["text"] == "Prefers async remote teams"
    assert out["elsewhere"]["results"] == []  # Northwind's fact never leaks into Acme's scope
    if connection.vendor == "postgresql":
        rows = {m.text: m for m in Memory.all_objects.all()}
        assert set(rows) == {"Prefers async remote teams", "Northwind pages SREs weekly"}
        assert rows["Prefers async remote teams"].created_by == "mcp"
    assert "Traceback" not in (tmp_path / "server.stderr").read_text()


def test_it_answers_a_database_outage_with_a_tool_error_and_keeps_serving(tmp_path):
    # Nothing listens on port 9 of the loopback: every query fails to connect.
    env = _env(
        DATABASE_URL="postgresql://postgres@127.0.0.1:9/karani", KARANI_DATA_DIR=str(tmp_path)
    )

    async def scenario():
        with open(tmp_path / "server.stderr", "w") as errlog:
            async with session_for(env, errlog) as session:
                wrote = await session.call_tool("remember", {"text": "Likes Rust"})
                read = await session.call_tool("recall", {"query": "rust"})
                tools = await session.list_tools()
                return wrote, read, tools

    wrote, read, tools = asyncio.run(scenario())
    for result in (wrote, read):
        assert result.is_error
        assert "memory database is unavailable" in _text(result)
    assert "nothing was stored" in _text(wrote)
    assert {"remember", "recall", "context"} <= {t.name for t in tools.tools}
    assert "database error" in (tmp_path / "server.stderr").read_text()


def test_it_answers_bad_arguments_with_the_services_one_line_message(server_env, tmp_path):
    async def scenario():
        with open(tmp_path / "server.stderr", "w") as errlog:
            async with session_for(server_env, errlog) as session:
                tools = {tool.name: tool for tool in (await session.list_tools()).tools}
                return (
                    session.initialized,
                    tools,
                    {
                        "kind": await session.call_tool(
                            "remember", {"text": "x y", "kind": "gossip"}
                        ),
                        "long": await session.call_tool("remember", {"text": "word " * 500}),
                        "limit": await session.call_tool("recall", {"query": "rust", "limit": 500}),
                        "type": await session.call_tool(
                            "recall", {"query": "rust", "limit": "many"}
                        ),
                    },
                )

    initialized, tools, out = asyncio.run(scenario())
    assert initialized.server_info.name == "karani"
    assert initialized.server_info.version == VERSION
    # The schema still advertises the choices the service enforces.
    remember_schema = tools["remember"].input_schema["properties"]
    assert remember_schema["kind"]["enum"] == ["preference", "outcome", "question", "note"]
    for name, result in out.items():
        text = _text(result)
        assert result.is_error, name
        assert "\n" not in text.strip() and "http" not in text and "pydantic" not in text, text
    expected = {
        "kind": lambda: services.remember(text="x y", kind="gossip"),
        "long": lambda: services.remember(text="word " * 500),
        "limit": lambda: selectors.recall(query="rust", limit=500),
    }
    for name, call in expected.items():
        with pytest.raises(MemoryInputError) as refused:
            call()
        assert _text(out[name]) == str(refused.value), name
    assert _text(out["type"]).startswith("limit: ")
    assert Memory.all_objects.count() == 0


def test_it_refuses_unknown_arguments_and_values_of_another_type(server_env, tmp_path):
    async def scenario():
        with open(tmp_path / "server.stderr", "w") as errlog:
            async with session_for(server_env, errlog) as session:
                return {
                    "typo": await session.call_tool("remember", {"text": "Likes Go", "knd": "x"}),
                    "text": await session.call_tool("remember", {"text": 5}),
                    "limit": await session.call_tool("recall", {"query": "go", "limit": "5"}),
                    "score": await session.call_tool(
                        "record_decision",
                        {
                            "external_id": "https://jobs.example.com/mcp/1",
                            "company": "Acme",
                            "title": "SRE",
                            "verdict": "qualified",
                            "fit_score": "50",
                            "prompt_version": "mcp-v1",
                        },
                    ),
                }

    out = asyncio.run(scenario())
    assert all(result.is_error for result in out.values()), out
    assert _text(out["typo"]).startswith("unknown argument(s): knd; this tool takes: text")
    assert _text(out["text"]) == "text: must be string, not integer"
    assert _text(out["limit"]) == "limit: must be integer, not string"
    assert _text(out["score"]) == "fit_score: must be integer, not string"
    assert Memory.all_objects.count() == 0
