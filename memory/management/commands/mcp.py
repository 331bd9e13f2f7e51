from typing import Any

from memory.management.base import KaraniCommand


class Command(KaraniCommand):
    help = (
        "Serve karani's memory to an MCP client over stdio (tools: remember, recall). "
        "stdout is the protocol; logs go to stderr."
    )

    def handle(self, *args: Any, **opts: Any) -> None:
        from memory.mcp_server import serve_stdio

        serve_stdio()
