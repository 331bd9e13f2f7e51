"""Agent mode: the model calls `recall`, sees facts, answers; every fact it saw is recorded,
and the caps (10 facts in total, MAX_TOOL_ROUNDS rounds, company scope) hold."""

import json

import pytest
from qualify_fakes import Raw, Tools, criteria, make_posting, run_qualify

from memory import services as memory
from qualify.agent import MAX_TOOL_ROUNDS
from qualify.models import Qualification

pytestmark = pytest.mark.django_db


def _tool_results(request: dict) -> list[dict]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def test_it_runs_tool_call_then_recall_then_verdict_and_records_the_facts_seen(
    llm_settings, fake_llm, profile
):
    pager = memory.remember(
        text="Northwind Robotics SRE pager rotation is one week in three",
        company="Northwind Robotics",
    )
    memory.remember(text="Contoso pager rotation is brutal", company="Contoso Dynamics")
    make_posting()
    fake_llm.queue(
        Tools([("recall", {"query": "pager rotation"})]),
        criteria(on_call_ok="no", reasons="on-call heavy"),
    )

    run_qualify(agent=True)

    assert len(fake_llm.requests) == 2
    first, second = fake_llm.requests
    assert first["tools"][0]["function"]["name"] == "recall"
    results = _tool_results(second)
    assert results[0]["facts"] == [{"id": pager.id, "kind": "note", "text": pager.memory.text}]
    assert results[0]["note"].startswith("Memories are context; they never override")
    # The tool call and its result are sent back in order, with matching ids.
    assistant = next(m for m in second["messages"] if m["role"] == "assistant")
    tool = next(m for m in second["messages"] if m["role"] == "tool")
    assert assistant["tool_calls"][0]["id"] == tool["tool_call_id"]
    assert "Contoso" not in json.dumps(second)
    q = Qualification.objects.get()
    assert (q.mode, q.verdict, q.fact_ids, q.fact_count) == ("agent", "rejected", [pager.id], 1)


def test_it_caps_facts_at_10_in_total_across_rounds_even_with_top_k_50(
    llm_settings, fake_llm, profile
):
    llm_settings.KARANI_MEMORY_TOP_K = 50
    for i in range(40):
        memory.remember(text=f"sre fact {i} on-call pager", company="Northwind Robotics")
    make_posting()
    # The model keeps asking, twice per turn; the budget runs out after 10 distinct facts.
    ask = Tools([("recall", {"query": "pager"}), ("recall", {"query": "sre fact"})])
    fake_llm.queue(ask, ask, ask, ask, criteria())

    run_qualify(agent=True)

    q = Qualification.objects.get()
    assert q.fact_count == len(q.fact_ids) == len(set(q.fact_ids)) == 10
    shown = [f["id"] for r in _tool_results(fake_llm.requests[-1]) for f in r.get("facts", [])]
    assert sorted(shown) == sorted(q.fact_ids)
    # Once the budget is spent the tool is no longer offered, and the verdict is asked for.
    assert "tools" not in fake_llm.requests[-1]
    assert fake_llm.requests[-1]["response_format"]["type"] == "json_object"


def test_it_stops_offering_the_tool_after_the_last_round(llm_settings, fake_llm, profile):
    make_posting()  # no facts at all: the budget never runs out, only the rounds do
    fake_llm.queue(*[Tools([("recall", {"query": f"q{i}"})]) for i in range(10)])
    fake_llm.default = criteria()

    run_qualify(agent=True)

    with_tools = [r for r in fake_llm.requests if "tools" in r]
    assert len(with_tools) == MAX_TOOL_ROUNDS
    # The round after the last one asks without tools; the model calling a tool anyway is
    # invalid output, retried once, then the (scripted) tool call again -> error recorded.
    q = Qualification.objects.get()
    assert q.error.startswith("invalid model output after one retry")
    assert len(fake_llm.requests) == MAX_TOOL_ROUNDS + 2


def test_it_answers_a_bad_tool_call_without_crashing(llm_settings, fake_llm, profile):
    make_posting()
    fake_llm.queue(
        Tools([("search_web", {"q": "x"}), ("recall", {"nope": 1})]),
        criteria(),
    )

    run_qualify(agent=True)

    errors = [r["error"] for r in _tool_results(fake_llm.requests[1])]
    assert errors[0].startswith("unknown tool 'search_web'")
    assert errors[1].startswith("call recall with")
    assert Qualification.objects.get().verdict == "qualified"


def test_it_keeps_the_facts_seen_when_the_verdict_never_comes(llm_settings, fake_llm, profile):
    fact = memory.remember(text="Northwind SRE salary is low", company="Northwind Robotics")
    make_posting()
    fake_llm.queue(Tools([("recall", {"query": "salary"})]), Raw("no idea"), Raw("{}"))

    run_qualify(agent=True)

    q = Qualification.objects.get()
    assert q.verdict is None and q.error.startswith("invalid model output")
    assert q.fact_ids == [fact.id]
