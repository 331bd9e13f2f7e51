from typing import Any

from memory.management.base import KaraniCommand


class Command(KaraniCommand):
    help = (
        "Serve karani's tools to an MCP client over stdio (karani help mcp lists them). "
        "stdout is the protocol; logs go to stderr."
    )

    def print_help(self, prog_name: str, subcommand: str) -> None:
        parser = self.create_parser(prog_name, subcommand)
        # The server imports the MCP SDK (seconds): only this command's own help and run pay it.
        from memory.mcp_server import tool_names

        # The tools every installed app registered (memory.mcp_registry), as the server has them.
        parser.epilog = f"tools: {', '.join(tool_names())}"
        parser.print_help()

    def handle(self, *args: Any, **opts: Any) -> None:
        from memory.mcp_server import serve_stdio  # the MCP SDK, as in print_help

        serve_stdio()
