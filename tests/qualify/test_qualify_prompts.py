"""What the model is shown: the memory block, its cap and scope, the few-shot block, and
the prompt version per memory mode."""

import json

import pytest
from qualify_fakes import make_posting, memory_block, run_qualify

from memory import services as memory
from qualify import prompts, services
from qualify.models import DecisionFact, Qualification
from qualify.verdict import VERDICT_SCHEMA

pytestmark = pytest.mark.django_db


def _teach(n: int, company: str | None, word: str = "on-call") -> list[int]:
    return [
        memory.remember(
            text=f"{word} note {i} about {company or 'everyone'} sre", company=company
        ).id
        for i in range(n)
    ]


def test_it_injects_the_memory_block_with_its_instruction(llm_settings, fake_llm, profile):
    fact = memory.remember(
        text="Northwind Robotics SRE team runs a heavy on-call rotation",
        company="Northwind Robotics",
    )
    make_posting()

    run_qualify()

    prompt = fake_llm.prompt()
    assert prompts.MEMORY_HEADER in prompt
    assert (
        "Memories are context; they never override a dealbreaker stated in the posting."
        in memory_block(prompt)
    )
    assert f"[fact {fact.id}] (note) Northwind Robotics SRE team runs a heavy" in prompt
    # Every fact says why it is there, and the decision keeps the reason.
    assert "(why: company fact; bears on the title 'Senior SRE sre' ('sre'))" in prompt
    q = Qualification.objects.get()
    assert q.prompt_version == prompts.MEMORY_AWARE == "qualify-v5-standing"
    assert DecisionFact.objects.get(qualification=q).why == (
        "company fact; bears on the title 'Senior SRE sre' ('sre')"
    )
    assert q.mode == "single"
    assert q.fact_ids == [fact.id]
    assert q.fact_count == 1


def test_it_never_injects_more_than_10_facts_even_when_configured_for_50(
    llm_settings, fake_llm, profile
):
    llm_settings.KARANI_MEMORY_TOP_K = 50
    _teach(30, "Northwind Robotics")
    make_posting()

    run_qualify()

    block = memory_block(fake_llm.prompt())
    assert block.count("[fact ") == 10
    q = Qualification.objects.get()
    assert len(q.fact_ids) == 10 == q.fact_count


def test_it_injects_top_k_facts_by_default(llm_settings, fake_llm, profile):
    _teach(8, "Northwind Robotics")
    make_posting()

    run_qualify()

    assert memory_block(fake_llm.prompt()).count("[fact ") == 5


def test_it_keeps_other_companies_facts_out_of_the_prompt(llm_settings, fake_llm, profile):
    own = _teach(2, "Northwind Robotics")
    glob = _teach(1, None)
    _teach(5, "Contoso Dynamics")
    make_posting()

    run_qualify()

    prompt = fake_llm.prompt()
    assert "Contoso" not in prompt
    assert sorted(Qualification.objects.get().fact_ids) == sorted(own + glob)


def test_it_uses_the_pre_memory_version_with_no_blocks_when_memory_is_off(
    llm_settings, fake_llm, profile
):
    llm_settings.KARANI_MEMORY = "off"
    _teach(3, "Northwind Robotics")
    first = make_posting(title="Platform Engineer")
    services.qualify_posting(posting=first, profile=profile, client=services.prepare_batch().client)
    services.record_outcome(posting_id=first.pk, stage="applied")
    make_posting()

    run_qualify()

    prompt = fake_llm.prompt()
    assert prompts.MEMORY_HEADER not in prompt
    assert prompts.FEW_SHOT_HEADER not in prompt
    assert "Memories are context" not in prompt
    assert "tools" not in fake_llm.requests[-1]
    assert set(Qualification.objects.values_list("prompt_version", flat=True)) == {
        prompts.PRE_MEMORY
    }
    assert Qualification.objects.filter(fact_count__gt=0).count() == 0


def test_it_uses_the_agent_version_in_agent_mode(llm_settings, fake_llm, profile):
    make_posting()

    run_qualify(agent=True)

    q = Qualification.objects.get()
    assert (q.prompt_version, q.mode) == (prompts.MEMORY_AGENT, "agent")
    assert fake_llm.requests[0]["tools"][0]["function"]["name"] == "recall"


def test_it_agent_mode_with_memory_off_is_pre_memory_and_offers_no_tool(
    llm_settings, fake_llm, profile
):
    llm_settings.KARANI_MEMORY = "off"
    make_posting()

    run_qualify(agent=True)

    assert "tools" not in fake_llm.requests[0]
    assert Qualification.objects.get().prompt_version == prompts.PRE_MEMORY


def test_it_builds_the_few_shot_block_from_past_verdicts_with_outcomes(
    llm_settings, fake_llm, profile
):
    client = services.prepare_batch().client
    fake_llm.queue(
        {**_c(), "role_fit": 90},  # SRE at Alpha: qualified 90, then applied/screen/interview
        {**_c(), "role_fit": 70, "remote_ok": "no"},  # Data at Beta: rejected, withdrawn
        _c(),  # SRE at Gamma: qualified, but no outcome yet: never an example
    )
    a = make_posting("Alpha", "Staff SRE", "sre", remote="remote")
    b = make_posting("Beta", "Data Engineer", "data", remote="onsite")
    c = make_posting("Gamma", "SRE", "sre")
    for p in (a, b, c):
        services.qualify_posting(posting=p, profile=profile, client=client)
    for stage in ("applied", "screen", "interview"):
        services.record_outcome(posting_id=a.pk, stage=stage)
    services.record_outcome(posting_id=b.pk, stage="withdrawn", note="commute")
    make_posting("Delta", "Senior SRE", "sre")

    run_qualify()

    prompt = fake_llm.prompt()
    assert prompts.FEW_SHOT_HEADER in prompt
    block = prompt.split(prompts.FEW_SHOT_HEADER, 1)[1].split("\n\n", 1)[0]
    examples = [json.loads(line) for line in block.strip().splitlines()]
    # Same role category first, then the rest; only verdicts that have outcomes.
    assert examples == [
        {
            "posting": {"title": "Staff SRE", "role_category": "sre", "remote": "remote"},
            "verdict": "qualified",
            "fit_score": 90,
            "stages": ["applied", "screen", "interview"],
            "furthest_stage": "interview",
        },
        {
            "posting": {"title": "Data Engineer", "role_category": "data", "remote": "onsite"},
            "verdict": "rejected",
            "fit_score": 45,
            "stages": ["withdrawn"],
            "furthest_stage": None,
        },
    ]
    # Examples calibrate verdicts; they never carry another company's name.
    assert "Alpha" not in prompt and "Beta" not in prompt


def test_it_asks_for_schema_constrained_json_the_way_llama_cpp_accepts(
    llm_settings, fake_llm, profile
):
    make_posting()

    run_qualify()

    request = fake_llm.requests[0]
    assert request["response_format"] == {"type": "json_object", "schema": VERDICT_SCHEMA}
    assert request["model"] == "fake-model"


def test_it_states_the_posting_dealbreakers_in_the_prompt(llm_settings, fake_llm, profile):
    make_posting(dealbreakers=["on-site in Munich 5 days a week"])

    run_qualify()

    assert (
        "Dealbreakers stated in the posting: on-site in Munich 5 days a week" in fake_llm.prompt()
    )


def test_it_shows_an_html_description_as_its_text(llm_settings, fake_llm, profile):
    make_posting(
        description="&lt;h3&gt;The role&lt;/h3&gt;&lt;ul&gt;&lt;li&gt;Own the pager &amp;amp; "
        "its alerts&lt;/li&gt;&lt;li&gt;Travel to Lowell monthly&lt;/li&gt;&lt;/ul&gt;"
    )

    run_qualify()

    prompt = fake_llm.prompt()
    assert (
        "Description:\nThe role\n\nOwn the pager & its alerts\nTravel to Lowell monthly" in prompt
    )
    assert "&lt;" not in prompt and "<li>" not in prompt


def _c() -> dict:
    from qualify_fakes import criteria

    return criteria()


def test_it_keeps_the_companys_facts_whatever_the_spelling_of_its_name(
    llm_settings, fake_llm, profile
):
    fact = memory.remember(text="ACME pager rotation is weekly", company="ACME   inc")
    make_posting("Acme Inc", "SRE")

    run_qualify()

    assert Qualification.objects.get().fact_ids == [fact.id]
