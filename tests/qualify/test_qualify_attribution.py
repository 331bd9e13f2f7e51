"""Per-fact attribution: the decisions whose prompts carried a fact, with each decision's
verdict and furthest outcome, counted exactly; memory learns of them only through the
provider qualify registers."""

import pytest
from qualify_fakes import Raw, criteria, make_posting, run_qualify

from memory import attribution
from memory import services as memory
from memory.models import Memory
from qualify import services
from qualify.fact_uses import provider
from qualify.models import DecisionFact, Qualification

pytestmark = pytest.mark.django_db


@pytest.fixture
def steered(llm_settings, fake_llm, profile):
    """Six Globex postings decided with the same remembered fact in every prompt, then
    followed up; plus one decision that errored and one that was deleted. Top-k 10, so the
    fact is in every Globex prompt however many verdict facts join it."""
    llm_settings.KARANI_MEMORY_TOP_K = 10
    fact = memory.remember(
        text="Globex recruiters answer within two days", kind="note", company="Globex"
    ).memory
    unused = memory.remember(text="Initech pays late", kind="note", company="Initech").memory
    postings = [make_posting("Globex", f"Data engineer {i}") for i in range(6)]
    errored = make_posting("Globex", "Data engineer, errored")
    gone = make_posting("Globex", "Data engineer, withdrawn verdict")
    good, bad = criteria(), criteria(remote_ok="no")
    # In posting order: four qualified, two rejected, an invalid reply twice (an error, not a
    # decision, though its prompt carried the fact), then a verdict deleted afterwards.
    fake_llm.queue(good, good, good, good, bad, bad, Raw("?"), Raw("?"), good)
    run_qualify()
    Qualification.objects.filter(posting=gone).soft_delete()
    services.record_outcome(posting_id=postings[0].pk, stage="applied")
    services.record_outcome(posting_id=postings[0].pk, stage="interview")
    services.record_outcome(posting_id=postings[1].pk, stage="applied")
    services.record_outcome(posting_id=postings[1].pk, stage="screen")
    services.record_outcome(posting_id=postings[2].pk, stage="applied")
    services.record_outcome(posting_id=postings[2].pk, stage="rejected")
    return fact, unused, errored


def test_it_records_each_fact_a_prompt_carried(steered):
    fact, _unused, _errored = steered

    for q in Qualification.all_objects.all():
        assert sorted(DecisionFact.objects.filter(qualification=q).values_list(
            "memory_id", flat=True
        )) == sorted(set(q.fact_ids))  # fmt: skip
    assert DecisionFact.objects.filter(memory_id=fact.id).count() == 8  # 6 + error + deleted


def test_it_counts_the_decisions_a_fact_steered_exactly(steered):
    fact, _unused, _errored = steered

    summary = provider.summary_for(fact.id)

    assert (summary["decisions"], summary["qualified"], summary["rejected"]) == (6, 4, 2)
    assert summary["reached"] == {"applied": 3, "screen": 2, "interview": 1, "offer": 0}
    assert summary["text"] == (
        "in 6 decisions: 4 qualified, 2 rejected; 3 applied, 2 reached screen, 1 reached interview"
    )
    furthest = {r["title"]: r["furthest_stage"] for r in summary["recent"]}
    assert furthest["Data engineer 0"] == "interview"
    assert furthest["Data engineer 2"] == "applied"
    assert furthest["Data engineer 5"] is None


def test_it_says_so_for_a_fact_no_decision_carried(steered):
    _fact, unused, _errored = steered

    assert provider.summary_for(unused.id)["text"] == "in no decisions yet"


def test_it_annotates_a_facts_list_with_exact_use_counts(steered):
    fact, unused, _errored = steered

    used = Memory.objects.annotate(uses=attribution.use_expression())
    rows = dict(used.values_list("id", "uses"))

    assert rows[fact.id] == 6 and rows[unused.id] == 0
    expected = {
        m: DecisionFact.objects.filter(
            memory_id=m,
            qualification__deleted_at__isnull=True,
            qualification__verdict__isnull=False,
        ).count()
        for m in rows
    }
    assert rows == expected
    assert attribution.use_counts(list(rows)) == rows  # the admin's one query per page
    ordered = list(used.order_by("-uses", "id").values_list("id", flat=True))
    assert ordered[0] == fact.id


def test_it_shows_nothing_with_no_provider_registered(steered):
    fact, _unused, _errored = steered
    attribution.unregister(provider)
    try:
        assert attribution.summary_for(fact.id) is None
        assert not attribution.enabled()
    finally:
        attribution.register(provider)
    assert attribution.summary_for(fact.id)["decisions"]["decisions"] == 6
