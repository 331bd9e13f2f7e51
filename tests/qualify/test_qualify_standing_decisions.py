"""A decision with standing preferences: the prompt shows them under the new versions, the
decision records each with its why as a DecisionFact of the standing part, attribution
counts them, agent mode's tool never returns them again, and the admin shows both parts."""

import json

import pytest
from django.urls import reverse
from qualify_fakes import Tools, criteria, make_posting, run_qualify

from memory import services as memory
from qualify import prompts, standing
from qualify.fact_uses import DecisionAttribution
from qualify.models import DecisionFact, FactPart, Qualification

pytestmark = pytest.mark.django_db


def _teach() -> tuple[int, int]:
    pref = memory.remember(text="A heavy SRE pager is my dealbreaker", kind="preference").id
    fact = memory.remember(
        text="Northwind Robotics SRE pager rotation is one week in three",
        company="Northwind Robotics",
    ).id
    return pref, fact


def test_a_decision_records_the_standing_preferences_it_was_shown(llm_settings, fake_llm, profile):
    pref, fact = _teach()
    make_posting()

    run_qualify()

    prompt = fake_llm.prompt()
    assert standing.INSTRUCTION in prompt and prompts.MEMORY_INSTRUCTION in prompt
    assert "- A heavy SRE pager is my dealbreaker" in prompt
    q = Qualification.objects.get()
    assert q.prompt_version == "qualify-v5-standing"
    assert (q.fact_ids, q.fact_count) == ([fact], 1)  # the ranked block's, as before
    rows = {r.memory_id: r for r in DecisionFact.objects.filter(qualification=q)}
    assert (rows[pref].part, rows[fact].part) == (FactPart.STANDING, FactPart.BLOCK)
    assert rows[pref].why.startswith("your standing preference; ")
    assert DecisionAttribution().use_counts([pref, fact]) == {pref: 1, fact: 1}


def test_agent_mode_shows_the_standing_part_and_its_tool_never_repeats_it(
    llm_settings, fake_llm, profile
):
    pref, fact = _teach()
    make_posting()
    fake_llm.queue(Tools([("recall", {"query": "SRE pager"})]), criteria())

    run_qualify(agent=True)

    first, second = fake_llm.requests
    assert "- A heavy SRE pager" in "\n".join(str(m.get("content")) for m in first["messages"])
    tool = next(json.loads(m["content"]) for m in second["messages"] if m["role"] == "tool")
    assert [f["id"] for f in tool["facts"]] == [fact]
    q = Qualification.objects.get()
    assert q.prompt_version == prompts.MEMORY_AGENT == "qualify-v5-standing-agent"
    parts = dict(DecisionFact.objects.filter(qualification=q).values_list("memory_id", "part"))
    assert parts == {pref: FactPart.STANDING, fact: FactPart.BLOCK}


def test_a_held_out_decision_is_shown_no_standing_preference(llm_settings, fake_llm, profile):
    llm_settings.KARANI_MEMORY = "off"
    _teach()
    make_posting()

    run_qualify()

    assert standing.HEADER not in fake_llm.prompt()
    assert not DecisionFact.objects.exists()


def test_the_admin_shows_both_parts_and_the_standing_page(
    admin_client, llm_settings, fake_llm, profile
):
    llm_settings.KARANI_STANDING_BUDGET = 520
    pref, fact = _teach()
    extra = [
        memory.remember(text=f"I like quiet <desks> number {i}", kind="preference").id
        for i in range(12)
    ]
    make_posting()
    run_qualify()
    q = Qualification.objects.get()

    page = admin_client.get(reverse("admin:qualify_qualification_change", args=[q.pk])).content
    overview = admin_client.get(reverse("admin:qualify_standing"))

    html = page.decode()
    assert "Standing preferences (shown whatever the posting)" in html and "Ranked block" in html
    shown = html[html.index("Standing preferences (shown") :]
    assert shown.index(f"fact {pref}</a>") < shown.index("Ranked block")
    assert shown.index("Ranked block") < shown.index(f"fact {fact}</a>")
    assert overview.status_code == 200
    body = overview.content.decode()
    assert "I like quiet &lt;desks&gt;" in body and "<desks>" not in body
    assert "Left out by the budget" in body and " of 520 characters used" in body
    shown_links = body.split("Left out by the budget")[1]
    assert any(f"/admin/memory/memory/{pk}/change/" in shown_links for pk in extra)
