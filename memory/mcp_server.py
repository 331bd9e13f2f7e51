"""karani's MCP server over stdio: remember and recall through memory's door, errors as tool
errors in one line, and a database outage never stops the server."""

import asyncio
import logging
from typing import Annotated, Any

from django.db import DatabaseError, close_old_connections
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from pydantic import Field, ValidationError

from memory import mcp_registry, selectors, services, validation
from memory.errors import FactNotFound, MemoryInputError, first_line
from memory.text import MAX_TEXT_CHARS
from memory.version import VERSION

log = logging.getLogger("karani.mcp")

ACTOR = "mcp"

INSTRUCTIONS = (
    "karani is a long-term memory for a job-search pipeline. Use `recall` before judging a "
    "job posting or answering a question about the candidate's preferences, and `remember` "
    "when the user deliberately teaches you something worth keeping. Facts are short, "
    "human-readable sentences; people audit and correct them later."
)

REMEMBER_DOC = f"""Store one durable fact the user explicitly asks you to keep, in plain words:
a preference, an outcome, an open question or a note. Set `company` when it is about one
employer; omit it for a fact that holds everywhere.

Do NOT store secrets, passwords, API keys or any credential (they are refused); whole
job descriptions, CVs or e-mails (summarise the one fact, at most {MAX_TEXT_CHARS} characters);
personal data about other people; or guesses the user did not confirm.

The same fact again (text, kind and company) returns its id with created=false."""

RECALL_DOC = """Find the stored facts most relevant to a few words (company, role, topic), best
first; call it before judging a posting. With `company`, only that company's facts plus global
ones. `mode` is basic (keywords), mem0 (semantic) or off; `fallback` is true when the semantic
index was down and keywords were used."""

# The service's constraints are only advertised in the schema, so a bad value gets its message.
KINDS = list(services.Kind.values)


def call(operation: str, fn: Any, **kwargs: Any) -> dict[str, Any]:
    """``fn(**kwargs).to_dict()``, its refusals and a database outage as one-line tool errors."""
    # Each tool's worker thread has its own connection: drop a broken or old one, as Django
    # does around each web request.
    close_old_connections()
    try:
        return fn(**kwargs).to_dict()
    except (MemoryInputError, FactNotFound) as exc:
        raise ToolError(str(exc)) from None
    except DatabaseError as exc:
        first = first_line(exc)
        log.error("%s: database error: %s", operation, first)
        raise ToolError(
            f"the memory database is unavailable ({first}); nothing was stored, retry later"
        ) from None
    finally:
        close_old_connections()


def remember(
    text: Annotated[
        str,
        Field(
            description="the fact, one or two plain sentences",
            json_schema_extra={"maxLength": MAX_TEXT_CHARS},
        ),
    ],
    kind: Annotated[
        str, Field(description="what sort of fact", json_schema_extra={"enum": KINDS})
    ] = "note",
    company: Annotated[
        str | None, Field(description="the employer it is about; omit for a global fact")
    ] = None,
) -> dict[str, Any]:
    return call("remember", services.remember, text=text, kind=kind, company=company, actor=ACTOR)


def recall(
    query: Annotated[str, Field(description="a few words naming what you need to know")],
    company: Annotated[
        str | None, Field(description="only this company's facts plus global ones")
    ] = None,
    limit: Annotated[
        int,
        Field(
            description="how many facts at most",
            json_schema_extra={"minimum": 1, "maximum": validation.MAX_LIMIT},
        ),
    ] = validation.DEFAULT_LIMIT,
) -> dict[str, Any]:
    return call("recall", selectors.recall, query=query, company=company, limit=limit)


def _refusal(schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """Why ``arguments`` do not fit the tool's input schema as written: an argument it does
    not take (a typo must not drop a value), or a value of another JSON type ("50" for a
    number), which pydantic would otherwise convert."""
    properties = schema.get("properties", {})
    unknown = sorted(set(arguments) - set(properties))
    if unknown:
        return (
            f"unknown argument(s): {', '.join(unknown)}; this tool takes: {', '.join(properties)}"
        )
    for arg, value in arguments.items():
        prop = properties[arg]
        allowed = {t.get("type") for t in prop.get("anyOf", [prop])} - {None}
        if allowed and not validation.fits_json_type(value, allowed):
            found = validation.json_type(value)
            return f"{arg}: must be {' or '.join(sorted(allowed))}, not {found}"
    return None


class KaraniMCPServer(MCPServer):
    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        tools = {tool.name: tool for tool in await self.list_tools()}
        if name in tools and (refusal := _refusal(tools[name].input_schema, arguments or {})):
            raise ToolError(refusal)
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise  # a crash: the sdk logs it and keeps its text from the client
        except ToolError as exc:
            raise ToolError(_one_line(exc)) from exc


def _one_line(exc: ToolError) -> str:
    # The service's own message, or one line per argument pydantic refused (no URLs).
    cause = exc.__cause__
    if isinstance(cause, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
            for err in cause.errors()
        )
    if isinstance(cause, ToolError):  # raised by call(): the sdk only prefixed it
        return str(cause)
    return str(exc)


def build_server() -> MCPServer:
    server = KaraniMCPServer(
        name="karani", version=VERSION, instructions=INSTRUCTIONS, log_level="WARNING"
    )
    server.add_tool(remember, name="remember", title="Remember a fact", description=REMEMBER_DOC)
    server.add_tool(recall, name="recall", title="Recall facts", description=RECALL_DOC)
    for add in mcp_registry.adders():  # other apps' tools (qualify's context, decisions)
        add(server)
    return server


def tool_names() -> list[str]:
    """The tools the server offers, memory's and every registered app's, in the order added."""
    return [tool.name for tool in asyncio.run(build_server().list_tools())]


def serve_stdio() -> None:
    # Until the client closes stdin; stdout carries the protocol only.
    build_server().run("stdio")
