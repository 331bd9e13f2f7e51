"""karani's MCP server from the official MCP Python SDK: start `karani mcp` over stdio, list
its tools, remember a fact, recall it, and ask for a posting's working context.

    .venv/bin/python examples/mcp_client.py              # the karani beside this interpreter
    .venv/bin/python examples/mcp_client.py /path/to/karani

docs/mcp.md explains each tool; the server writes to the ledger karani's environment names
(KARANI_DATA_DIR, DATABASE_URL), with created_by = mcp.
"""

import asyncio
import json
import os
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult


def _data(result: CallToolResult) -> dict:
    """A tool's answer: its structured content, or the JSON text block it also sends."""
    if result.is_error:
        raise SystemExit(f"tool error: {result.content[0].text}")
    return result.structured_content or json.loads(result.content[0].text)


async def main(karani: str) -> None:
    # The server inherits this environment: the same ledger as the karani CLI.
    server = StdioServerParameters(command=karani, args=["mcp"], env=dict(os.environ))
    async with (
        stdio_client(server) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = await session.list_tools()
        print("tools:", ", ".join(tool.name for tool in tools.tools))

        fact = {"text": "Globex answers applications within a week", "company": "Globex"}
        remembered = _data(await session.call_tool("remember", fact))
        print("remembered fact", remembered["id"], "new" if remembered["created"] else "known")

        found = _data(await session.call_tool("recall", {"query": "Globex applications"}))
        for hit in found["results"]:
            print(f"recalled fact {hit['id']}: {hit['text']}")

        context = _data(await session.call_tool("context", {"company": "Globex", "title": "SRE"}))
        print("context:", context["prompt_version"], f"arm={context['arm']}")
        print(context["block"])


if __name__ == "__main__":
    default = Path(sys.executable).parent / "karani"
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else str(default)))
