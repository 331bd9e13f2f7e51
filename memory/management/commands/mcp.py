from typing import Any

from memory.management.base import KaraniCommand
from memory.mcp_server import serve_stdio


class Command(KaraniCommand):
    help = (
        "Serve karani's memory to an MCP client over stdio (tools: remember, recall). "
        "stdout is the protocol; logs go to stderr."
    )

    def handle(self, *args: Any, **opts: Any) -> None:
        serve_stdio()
