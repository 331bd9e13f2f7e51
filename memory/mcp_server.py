"""karani's MCP server: remember and recall for agents, over stdio (``karani mcp``).

Both tools call ``memory.services`` and nothing else, so an agent gets the same validation,
dedupe, secret refusal and company scoping as the CLI and the API. A refusal or bad input
comes back as a tool error carrying the service's one-line message; a database outage is a
tool error too, and the server keeps serving.
"""

import logging
from typing import Annotated, Any, Literal

from django.db import DatabaseError, close_old_connections
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from memory import services
from memory.errors import FactNotFound, MemoryInputError
from memory.text import MAX_TEXT_CHARS

log = logging.getLogger("karani.mcp")

ACTOR = "mcp"

INSTRUCTIONS = (
    "karani is a long-term memory for a job-search pipeline. Use `recall` before judging a "
    "job posting or answering a question about the candidate's preferences, and `remember` "
    "when the user deliberately teaches you something worth keeping. Facts are short, "
    "human-readable sentences; people audit and correct them later."
)

REMEMBER_DOC = f"""Store one durable fact about the candidate's job search, in plain words.

Use it for what the user explicitly tells you to keep: a preference ("Prefers async,
remote-first teams"), an outcome ("Rejected by Northwind after the final interview"), an
open question ("Does Acme sponsor visas?"), or a note. Scope it with `company` when it is
about one employer; leave `company` out for a fact that holds everywhere.

Do NOT store: secrets, passwords, API keys, tokens or any credential (they are refused);
whole job descriptions, CVs, e-mails or long pasted text (summarise the one fact instead,
at most {MAX_TEXT_CHARS} characters); personal data about other people (recruiters' phone
numbers, colleagues' details); guesses or your own inferences the user did not confirm.

Writing the same fact again (same text, kind and company) does not duplicate it: it
returns the existing id with created=false and a higher seen_count."""

RECALL_DOC = """Find the stored facts most relevant to a query, best first.

Call it before assessing a posting or answering about the candidate's preferences, with a
few words naming what matters (company, role, topic). With `company`, only that company's
facts plus global facts are returned, never another company's. Each result has an id,
the fact's text, kind, company, score and when it was last seen. `mode` says how recall
ran (basic = keyword ranking, mem0 = semantic index, off = memory disabled) and
`fallback` is true when the semantic index was unavailable and keywords were used."""

KindName = Literal["preference", "outcome", "question", "note"]


def _call(operation: str, fn: Any, **kwargs: Any) -> dict[str, Any]:
    """Run one service call in this worker thread; every failure becomes a ToolError."""
    # Tools run in worker threads, each with its own Django connection: drop one that broke
    # (database restart) or outlived CONN_MAX_AGE, as Django does around each web request.
    close_old_connections()
    try:
        return fn(**kwargs).to_dict()
    except (MemoryInputError, FactNotFound) as exc:
        raise ToolError(str(exc)) from None
    except DatabaseError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        log.error("%s: database error: %s", operation, first)
        raise ToolError(
            f"the memory database is unavailable ({first}); nothing was stored, retry later"
        ) from None
    finally:
        close_old_connections()


def remember(
    text: Annotated[
        str, Field(description="the fact, one or two plain sentences", max_length=MAX_TEXT_CHARS)
    ],
    kind: Annotated[KindName, Field(description="what sort of fact")] = "note",
    company: Annotated[
        str | None, Field(description="the employer it is about; omit for a global fact")
    ] = None,
) -> dict[str, Any]:
    return _call("remember", services.remember, text=text, kind=kind, company=company, actor=ACTOR)


def recall(
    query: Annotated[str, Field(description="a few words naming what you need to know")],
    company: Annotated[
        str | None, Field(description="only this company's facts plus global ones")
    ] = None,
    limit: Annotated[
        int, Field(ge=1, le=services.MAX_LIMIT, description="how many facts at most")
    ] = services.DEFAULT_LIMIT,
) -> dict[str, Any]:
    return _call("recall", services.recall, query=query, company=company, limit=limit)


def build_server() -> MCPServer:
    server = MCPServer(name="karani", instructions=INSTRUCTIONS, log_level="WARNING")
    server.add_tool(remember, name="remember", title="Remember a fact", description=REMEMBER_DOC)
    server.add_tool(recall, name="recall", title="Recall facts", description=RECALL_DOC)
    return server


def serve_stdio() -> None:
    """Serve until the client closes stdin. stdout carries the protocol only."""
    build_server().run("stdio")
