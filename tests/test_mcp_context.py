"""`karani mcp`'s qualify tools, driven by the SDK's real client over stdio: `context` gives
an agent the block the context endpoint gives, and `record_decision` / `record_outcome` close
the loop with the same rules (one-line refusals, exact repeats change nothing)."""

import asyncio

from api_helpers import client_with, token_for
from django.db import connection
from test_mcp_server import _data, _text, server_env, session_for  # noqa: F401 (a fixture)

from qualify.models import Outcome, Qualification

GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
URL = "https://jobs.example.com/northwind/sre-9"


POSTING = {"company": "Northwind", "title": "Senior SRE", "role_category": "sre"}


async def _asked(session) -> dict:
    for text, company, kind in [
        ("Northwind SREs carry a weekly pager", "Northwind", "note"),
        ("Prefers remote SRE roles", None, "preference"),
        ("Acme SRE team is on-site only", "Acme", "note"),
    ]:
        await session.call_tool("remember", {"text": text, "company": company, "kind": kind})
    return _data(await session.call_tool("context", {**POSTING, "external_id": URL}))


async def _recorded(session, context: dict) -> dict:
    call = session.call_tool
    decision = {
        "external_id": URL,
        "company": "Northwind",
        "title": "Senior SRE",
        "verdict": "rejected",
        "fit_score": 30,
        "prompt_version": context["prompt_version"],
        "fact_ids": [f["id"] for f in context["facts"]],
        "location": "Somerville, MA",
        "remote": "Hybrid (2 days)",
    }
    return {
        "decided": _data(await call("record_decision", decision)),
        "again": _data(await call("record_decision", decision)),
        "outcome": _data(await call("record_outcome", {"external_id": URL, "stage": "applied"})),
        "refused": {
            "secret": await call("context", {**POSTING, "title": f"SRE {GITHUB}"}),
            "verdict": await call("record_decision", {**decision, "verdict": "maybe"}),
            "unknown": await call(
                "record_outcome", {"external_id": "never-seen", "stage": "applied"}
            ),
            "stage": await call("record_outcome", {"external_id": URL, "stage": "hired"}),
            "score": await call("record_decision", {**decision, "fit_score": 101}),
            "remote": await call(
                "record_decision",
                {**decision, "external_id": f"{URL}/2", "remote": "sometimes"},
            ),
            # A limit counts the text as sent, as the API's schema does (CRLF counts two).
            "long title": await call(
                "record_decision",
                {**decision, "external_id": f"{URL}/3", "title": "S" * 150 + "\r\n" + "S" * 149},
            ),
            "long fact": await call("remember", {"text": "x" * 1000 + "\r\n" + "x" * 999}),
        },
    }


def test_an_agent_gets_the_block_and_records_its_decision(server_env, tmp_path):  # noqa: F811
    async def scenario(step, *args) -> tuple:
        with open(tmp_path / "server.stderr", "a") as errlog:
            async with session_for(server_env, errlog) as session:
                tools = {t.name: t for t in (await session.list_tools()).tools}
                return tools, await step(session, *args)

    tools, context = asyncio.run(scenario(_asked))
    if connection.vendor == "postgresql":
        # The tool and the endpoint give the same answer from the same ledger.
        api = client_with(token_for("mcp-compare")).get("/api/context", POSTING)
        assert api.json()["facts"] == context["facts"]
        assert api.json()["standing"] == context["standing"]
    _, out = asyncio.run(scenario(_recorded, context))

    assert {"context", "record_decision", "record_outcome"} <= set(tools)
    assert set(tools["context"].input_schema["required"]) == {"company", "title"}
    assert set(context) >= {"prompt_version", "arm", "mode", "fallback", "facts", "block"}
    assert [f["text"] for f in context["standing"]] == ["Prefers remote SRE roles"]
    assert context["standing_omitted"] == 0 and "Prefers remote SRE roles" in context["block"]
    texts = [f["text"] for f in context["facts"]]
    assert "Acme SRE team is on-site only" not in texts and texts
    assert all(f["why"] for f in context["facts"])
    assert out["decided"]["created"] is True and out["again"]["created"] is False
    assert out["again"]["id"] == out["decided"]["id"]
    assert out["decided"]["fact_ids"] == [f["id"] for f in context["facts"]]
    assert out["outcome"]["created"] is True
    for name, result in out["refused"].items():
        text = _text(result)
        assert result.is_error, name
        assert "\n" not in text.strip() and "pydantic" not in text and GITHUB not in text, text
    assert "credential" in _text(out["refused"]["secret"])
    assert "never-seen" in _text(out["refused"]["unknown"])
    assert "names no policy" in _text(out["refused"]["remote"])
    assert _text(out["refused"]["long title"]) == "title is 301 characters; the limit is 300"
    assert _text(out["refused"]["long fact"]) == "text is 2001 characters; the limit is 2000"
    assert "Traceback" not in (tmp_path / "server.stderr").read_text()
    if connection.vendor == "postgresql":
        decided = Qualification.objects.select_related("posting").get()
        assert decided.pk == out["decided"]["id"]
        assert (decided.posting.remote, decided.posting.location) == (
            "hybrid",
            "Somerville, MA (2 days)",
        )
        assert Outcome.objects.count() == 1
