"""docs/mcp.md's instructions, run: its client configuration block (paths replaced by this
checkout's) starts a server a real SDK client talks to, and examples/mcp_client.py works."""

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from ledger_helpers import REPO, child_env
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

pytestmark = pytest.mark.one_pass

KARANI = Path(sys.executable).parent / "karani"
PAGE = REPO / "docs" / "mcp.md"


@pytest.fixture
def ledger(tmp_path) -> Path:
    data = tmp_path / "var"
    env = child_env(DATABASE_URL=None, KARANI_DATA_DIR=str(data))
    subprocess.run([str(KARANI), "migrate", "-v0"], env=env, check=True, timeout=300)
    return data


def _configuration() -> dict:
    block = re.search(r"```json\n(.*?)```", PAGE.read_text(), re.DOTALL)
    assert block, "docs/mcp.md has no configuration block"
    return json.loads(block[1])["mcpServers"]["karani"]


def test_the_pages_client_configuration_starts_the_server(ledger):
    entry = _configuration()
    assert entry["command"].endswith("/.venv/bin/karani") and entry["args"] == ["mcp"]
    # The page's placeholders, replaced as a reader would: this checkout and a test ledger.
    entry["command"] = str(KARANI)
    entry["env"] = {**entry["env"], "KARANI_DATA_DIR": str(ledger)}
    entry["env"]["MEM0_TELEMETRY"] = "False"
    if "PYTHONPATH" in os.environ:  # this checkout's code, not the installed one's
        entry["env"]["PYTHONPATH"] = os.environ["PYTHONPATH"]

    async def scenario() -> tuple[list[str], dict]:
        async with (
            stdio_client(StdioServerParameters(**entry)) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            tools = [tool.name for tool in (await session.list_tools()).tools]
            result = await session.call_tool("remember", {"text": "Initech replies in a day"})
            return tools, result.structured_content

    tools, remembered = asyncio.run(scenario())
    assert tools == ["remember", "recall", "context", "record_decision", "record_outcome"]
    assert remembered["created"] is True
    # The page's table names every tool the server has.
    assert all(f"| `{tool}` |" in PAGE.read_text() for tool in tools)


def test_the_pages_sdk_example_runs(ledger):
    env = child_env(DATABASE_URL=None, KARANI_DATA_DIR=str(ledger))
    proc = subprocess.run(
        [sys.executable, "examples/mcp_client.py"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:3] == [
        "tools: remember, recall, context, record_decision, record_outcome",
        "remembered fact 1 new",
        "recalled fact 1: Globex answers applications within a week",
    ]
    # What the page says it prints (the prompt version is whatever qualify's is now).
    assert all(line in PAGE.read_text() for line in lines[:3])
    assert re.fullmatch(r"context: \S+ arm=none", lines[3]), lines[3]
