"""qualify's MCP tools, added to karani's server through memory's registry (qualify.apps):
the working context for a posting, and recording the decision and outcomes that follow, through
the same services as the REST API."""

from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from memory import mcp_server
from qualify import decisions, outcomes, selectors
from qualify.errors import QualifyError
from qualify.models import MAX_FACTS_PER_DECISION, Stage, Verdict

CONTEXT_DOC = """The working-context block for a job posting you are about to judge: the
remembered facts about its company (plus global ones) that bear on it, each with why it is
there, and the text to put in your prompt. Memories are context; they never override a
dealbreaker stated in the posting. Pass `external_id` (the posting's URL or job id) so the
posting keeps its randomised arm: `arm: "holdout"` means judge it without memory (no facts are
given) and record the decision under the `prompt_version` returned."""

DECISION_DOC = """Record your verdict on a posting after judging it: `qualified` or
`rejected`, a fit score 0-100, the `prompt_version` the context gave you and the ids of the
facts you were given. The same decision again changes nothing; under a new prompt version it
replaces the earlier one. Never put secrets or credentials in any field (they are refused)."""

REMOTE = "remote, hybrid or onsite, and any detail: Hybrid (2 days)"

OUTCOME_DOC = """Record a stage a posting's application reached (applied, screen, interview,
offer, rejected, withdrawn) after its decision was recorded; the same stage and note again
changes nothing."""


def _call(operation: str, fn: Any, **kwargs: Any) -> dict[str, Any]:
    try:
        return mcp_server.call(operation, fn, **kwargs)
    except QualifyError as exc:  # no such posting, a conflicting decision: one line
        raise ToolError(str(exc)) from None


def _text(description: str, **extra: Any) -> Any:
    return Field(description=description, json_schema_extra=extra or None)


def context(
    company: Annotated[str, _text("the employer")],
    title: Annotated[str, _text("the posting's title")],
    role_category: Annotated[str, _text("e.g. sre, backend, data")] = "",
    external_id: Annotated[str | None, _text("the posting's URL or job id")] = None,
    location: Annotated[str, _text("where the job is")] = "",
    remote: Annotated[str, _text(REMOTE)] = "",
    salary: Annotated[str, _text("the stated pay")] = "",
    description: Annotated[str, _text("the posting's text")] = "",
    task: Annotated[str, _text("what you are deciding, in a sentence")] = "",
    limit: Annotated[int | None, _text("facts at most (capped to 10)", minimum=1)] = None,
) -> dict[str, Any]:
    fields = {
        "company": company,
        "title": title,
        "role_category": role_category,
        "location": location,
        "remote": remote,
        "salary": salary,
        "description": description,
        "task": task,
    }
    return _call(
        "context", selectors.working_context, external_id=external_id, limit=limit, **fields
    )


def record_decision(
    external_id: Annotated[str, _text("the posting's URL or job id")],
    company: Annotated[str, _text("the employer")],
    title: Annotated[str, _text("the posting's title")],
    verdict: Annotated[str, _text("your verdict", enum=list(Verdict.values))],
    fit_score: Annotated[int, _text("0-100", minimum=0, maximum=100)],
    prompt_version: Annotated[str, _text("the prompt_version the context tool returned")],
    reasons: Annotated[str, _text("the main reason, one sentence")] = "",
    fact_ids: Annotated[
        list[int] | None,
        _text("ids of the facts you were given", maxItems=MAX_FACTS_PER_DECISION),
    ] = None,
    role_category: Annotated[str, _text("e.g. sre, backend, data")] = "",
    location: Annotated[str, _text("where the job is")] = "",
    remote: Annotated[str, _text(REMOTE)] = "",
    salary: Annotated[str, _text("the stated pay")] = "",
    description: Annotated[str, _text("the posting's text")] = "",
    url: Annotated[str, _text("the posting's page")] = "",
    standing: Annotated[
        list[dict[str, Any]] | None,
        _text("the standing preferences the context showed you, as its standing list"),
    ] = None,
) -> dict[str, Any]:
    # The posting's fields are kept from its first decision, as the API keeps them.
    return _call(
        "record_decision",
        decisions.record_decision,
        external_id=external_id,
        company=company,
        title=title,
        verdict=verdict,
        fit_score=fit_score,
        prompt_version=prompt_version,
        reasons=reasons,
        fact_ids=fact_ids,
        role_category=role_category,
        location=location,
        remote=remote,
        salary=salary,
        description=description,
        url=url,
        standing=[{"id": f.get("id"), "why": f.get("why", "")} for f in standing or []],
    )


def record_outcome(
    external_id: Annotated[str, _text("the posting's URL or job id")],
    stage: Annotated[str, _text("the stage reached", enum=list(Stage.values))],
    note: Annotated[str, _text("a short note (no personal data)")] = "",
) -> dict[str, Any]:
    return _call(
        "record_outcome", outcomes.record_outcome, external_id=external_id, stage=stage, note=note
    )


def add_tools(server: Any) -> None:
    server.add_tool(context, name="context", title="Working context", description=CONTEXT_DOC)
    server.add_tool(
        record_decision, name="record_decision", title="Record a decision", description=DECISION_DOC
    )
    server.add_tool(
        record_outcome, name="record_outcome", title="Record an outcome", description=OUTCOME_DOC
    )
