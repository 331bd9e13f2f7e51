from typing import Any

from memory.management.base import KaraniCommand
from memory.mcp_server import serve_stdio, tool_names


class Command(KaraniCommand):
    help = (
        "Serve karani's tools to an MCP client over stdio (karani help mcp lists them). "
        "stdout is the protocol; logs go to stderr."
    )

    def print_help(self, prog_name: str, subcommand: str) -> None:
        parser = self.create_parser(prog_name, subcommand)
        # The tools every installed app registered (memory.mcp_registry), as the server has them.
        parser.epilog = f"tools: {', '.join(tool_names())}"
        parser.print_help()

    def handle(self, *args: Any, **opts: Any) -> None:
        serve_stdio()
