"""The invariant: a memory outage never kills a qualify batch. 200 postings, with the
vector store down (mem0 mode, closed port) and with the memory service itself raising:
every qualification is recorded, the batch completes, and verdict facts land in the ledger
whenever the service is not the thing failing."""

import socket

import pytest
from qualify_fakes import criteria, make_posting, run_qualify

from memory import selectors
from memory import services as memory
from qualify import services
from qualify.models import Posting, Qualification

BATCH = 200


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # released on close: nothing listens there


def _postings(n: int = BATCH) -> None:
    companies = ["Northwind Robotics", "Contoso Dynamics", "Fabrikam", "Tailspin Toys"]
    for i in range(n):
        make_posting(companies[i % 4], f"Engineer {i}", "sre" if i % 2 else "backend")


def _verdict_refs() -> set[str]:
    return {
        m.ref
        for m in memory.iter_all_facts()
        if m.source == "verdict" and m.ref and m.deleted_at is None
    }


def _boom(*args, **kwargs):
    raise ConnectionError("memory service down (injected)")


@pytest.fixture
def vector_store_down(llm_settings):
    from memory.semantic import client
    from memory.semantic.breaker import breaker

    llm_settings.KARANI_MEMORY = "mem0"
    llm_settings.KARANI_VECTOR_DSN = f"postgresql://postgres@127.0.0.1:{_closed_port()}/karani_x"
    llm_settings.KARANI_VECTOR_TIMEOUT = 0.5
    llm_settings.KARANI_VECTOR_COOLDOWN = 30.0
    breaker.reset()
    client.discard_all()
    yield
    breaker.reset()
    client.discard_all()


@pytest.mark.django_db(transaction=True)
def test_it_records_all_200_with_the_vector_store_down_and_verdict_facts_land(
    vector_store_down, fake_llm, profile
):
    memory.remember(
        text="Northwind Robotics pages SREs every other week", company="Northwind Robotics"
    )
    _postings()
    fake_llm.default = criteria(on_call_ok="no", reasons="on-call heavy")

    summary = run_qualify()

    assert summary.total == BATCH
    assert summary.rejected == BATCH and summary.errors == 0 and not summary.stopped
    assert Qualification.objects.count() == BATCH
    assert set(Qualification.objects.values_list("posting_id", flat=True)) == set(
        Posting.objects.values_list("pk", flat=True)
    )
    # The store really was down (the breaker opened) and recall fell back to the ledger's
    # keyword ranking: facts still reached the prompts.
    from memory.semantic.breaker import breaker

    assert breaker.reason is not None and not breaker.allow()
    assert summary.with_memory > 0
    assert _verdict_refs() == {f"qualification:{q.pk}" for q in Qualification.objects.all()}


@pytest.mark.django_db
def test_it_records_all_200_with_the_memory_service_raising(
    llm_settings, fake_llm, profile, monkeypatch, caplog
):
    _postings()
    monkeypatch.setattr(selectors, "recall", _boom)
    monkeypatch.setattr(selectors, "recall_many", _boom)
    monkeypatch.setattr(memory, "remember", _boom)

    summary = run_qualify()

    assert summary.total == BATCH and summary.qualified == BATCH and not summary.stopped
    assert summary.memory_unavailable == BATCH
    assert summary.facts_not_written == BATCH
    assert Qualification.objects.count() == BATCH
    assert not Qualification.objects.filter(fact_count__gt=0).exists()
    # Each posting was still decided with the memory-aware prompt (an empty block).
    assert "(no remembered facts)" in fake_llm.prompt()
    assert any("not written" in r.getMessage() for r in caplog.records)


@pytest.mark.django_db
def test_it_writes_verdict_facts_when_only_recall_raises(
    llm_settings, fake_llm, profile, monkeypatch
):
    _postings()
    monkeypatch.setattr(selectors, "recall", _boom)
    monkeypatch.setattr(selectors, "recall_many", _boom)

    summary = run_qualify()

    assert summary.qualified == BATCH and summary.facts_not_written == 0
    assert _verdict_refs() == {f"qualification:{q.pk}" for q in Qualification.objects.all()}


@pytest.mark.django_db
def test_it_records_all_200_in_agent_mode_with_the_memory_service_raising(
    llm_settings, fake_llm, profile, monkeypatch
):
    from qualify_fakes import Tools

    _postings()
    monkeypatch.setattr(selectors, "recall", _boom)
    monkeypatch.setattr(selectors, "recall_many", _boom)
    monkeypatch.setattr(memory, "remember", _boom)
    # Every posting: one recall call (fails), then the verdict.
    for _ in range(BATCH):
        fake_llm.queue(Tools([("recall", {"query": "on-call"})]), criteria())

    summary = run_qualify(agent=True)

    assert summary.qualified == BATCH and summary.memory_unavailable == BATCH
    assert Qualification.objects.filter(mode="agent").count() == BATCH
    assert '"memory is unavailable right now' in "\n".join(
        str(m.get("content")) for m in fake_llm.requests[1]["messages"]
    )


@pytest.mark.django_db
def test_it_records_outcomes_when_the_memory_service_raises(
    llm_settings, fake_llm, profile, monkeypatch
):
    posting = make_posting()
    run_qualify()
    monkeypatch.setattr(memory, "remember", _boom)

    recorded = services.record_outcome(posting_id=posting.pk, stage="applied")

    assert recorded.outcome.pk is not None
    assert recorded.fact_error and "injected" in recorded.fact_error
