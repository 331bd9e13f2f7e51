"""`karani reindex` and `karani doctor` against a real pgvector database."""

import io
import json

import psycopg
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from semantic_support import *  # noqa: F403  (fixtures)
from semantic_support import closed_port, index_vectors

from memory import services
from memory.models import Memory

pytestmark = [pytest.mark.pgvector, pytest.mark.django_db(transaction=True)]


def _run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.fixture
def ledger(mem0_mode, settings):
    settings.KARANI_MEMORY = "basic"  # build a ledger the index has never seen
    services.import_facts(
        records=enumerate(
            [{"text": f"Remote role number {n} with async culture"} for n in range(150)]
            + [{"text": "Avoids gambling companies", "company": "Acme"}],
            start=1,
        )
    )
    gone = services.remember(text="Temporary fact to forget")
    services.forget(id=gone.id, reason="test")
    settings.KARANI_MEMORY = "mem0"
    return mem0_mode


def test_it_rebuilds_the_index_from_the_ledger_with_matching_counts(ledger, vector_database):
    out, _ = _run("reindex", "--json")
    report = json.loads(out)

    assert report["matches"] and report["ledger_live"] == 151 == report["index_rows"]
    assert report["written"] == 151 and report["pending_left"] == 0
    vectors = index_vectors(vector_database, ledger)
    assert sorted(vectors) == sorted(Memory.objects.values_list("pk", flat=True))
    assert set(vectors.values()) == {1}


def test_it_is_idempotent(ledger, vector_database):
    first, _ = _run("reindex")
    second, _ = _run("reindex")

    assert "ledger live: 151   index: 151 facts in 151 vectors   pending: 0" in first
    assert "ledger live: 151   index: 151 facts in 151 vectors   pending: 0" in second
    assert set(index_vectors(vector_database, ledger).values()) == {1}


def test_it_counts_a_fact_with_a_vector_per_sentence_as_indexed_once(ledger, vector_database):
    long = services.remember(text="Acme pays well. The office is in Leeds. Interviews are fast.")

    for args in (("reindex", "--json"), ("reindex", "--pending", "--json")):
        report = json.loads(_run(*args)[0])
        assert report["matches"], report
        assert report["ledger_live"] == 152 == report["index_ledger_rows"]
        assert report["index_rows"] == 155, "the whole text's vector and one per sentence"
    assert index_vectors(vector_database, ledger)[long.id] == 4


def test_it_exits_non_zero_when_a_fact_is_indexed_twice(ledger, vector_database):
    from memory.semantic import client as clientmod
    from memory.semantic import store

    _run("reindex")
    fact = Memory.objects.order_by("pk").last()
    store.insert_rows(clientmod.get(), [fact], store.embed_texts(clientmod.get(), [fact.text]))

    with pytest.raises(CommandError, match="index and ledger disagree"):
        _run("reindex", "--pending")


def test_it_shows_a_progress_bar_on_stderr(ledger):
    _, err = _run("reindex", "--batch-size", "50")
    assert "reindexing" in err and "151/151" in err


def test_it_catches_up_pending_rows_and_stale_vectors_only(ledger, vector_database, settings):
    _run("reindex")
    indexed_before = dict(Memory.objects.values_list("pk", "vector_id"))
    settings.KARANI_VECTOR_DSN = f"postgresql://postgres@127.0.0.1:{closed_port()}/x"
    new = services.remember(text="Written while the index was down")
    old = Memory.objects.order_by("pk").first()
    services.forget(id=old.pk, reason="outdated")
    settings.KARANI_VECTOR_DSN = vector_database

    out, _ = _run("reindex", "--pending", "--json")
    report = json.loads(out)

    assert (report["written"], report["removed"], report["matches"]) == (1, 1, True)
    vectors = index_vectors(vector_database, ledger)
    assert new.id in vectors and old.pk not in vectors
    untouched = {pk: vid for pk, vid in Memory.objects.values_list("pk", "vector_id")}
    del untouched[new.id]
    assert all(indexed_before[pk] == vid for pk, vid in untouched.items())


def test_it_exits_non_zero_when_counts_disagree(ledger, vector_database, monkeypatch):
    from memory.semantic import store

    real = store.insert_rows
    # A store that silently drops the last row of each batch (the failure MEM0.md warns of).
    monkeypatch.setattr(
        store, "insert_rows", lambda client, rows, vectors: real(client, rows[:-1], vectors[:-1])
    )
    with pytest.raises(CommandError, match="index and ledger disagree"):
        _run("reindex")


def test_it_fails_in_one_line_when_the_store_is_down(ledger, settings):
    settings.KARANI_VECTOR_DSN = f"postgresql://postgres@127.0.0.1:{closed_port()}/x"
    with pytest.raises(CommandError, match=r"unavailable: could not connect .*Connection refused"):
        _run("reindex")


def test_doctor_is_happy_when_every_layer_answers(ledger):
    _run("reindex")
    out, _ = _run("doctor", "--json")
    report = json.loads(out)

    assert report["mode"] == "mem0" and report["degraded"] is False
    names = {c["name"]: c["ok"] for c in report["checks"]}
    assert names == {
        "ledger": True,
        "keyword index": True,
        "vector store": True,
        "index embedder": True,
        "embedder": True,
        "entity model": True,
        "llm": True,
        "pending": True,
        "index vs ledger": True,
        "secrets screen": True,
    }
    text, _ = _run("doctor")
    assert "mode mem0 · ok" in text


def test_doctor_does_not_ask_the_llm_when_extraction_is_off(ledger, settings):
    _run("reindex")
    # An endpoint that refuses every connection: asked, the llm check would fail.
    settings.KARANI_LLM_BASE_URL = f"http://127.0.0.1:{closed_port()}/v1"
    settings.KARANI_MEMORY_EXTRACTION = False
    report = json.loads(_run("doctor", "--json")[0])

    (llm,) = [c for c in report["checks"] if c["name"] == "llm"]
    assert llm["ok"] is True and "KARANI_MEMORY_EXTRACTION=off" in llm["detail"]
    assert report["settings"]["KARANI_MEMORY_EXTRACTION"] == "off"

    settings.KARANI_MEMORY_EXTRACTION = True
    with pytest.raises(CommandError, match="degraded: llm"):
        _run("doctor")


def test_doctor_reports_an_entity_model_that_cannot_load(ledger, monkeypatch):
    from memory.semantic import entities

    _run("reindex")
    monkeypatch.setattr(entities, "MODEL", "en_core_web_sm_not_installed")
    monkeypatch.setattr(entities, "_nlp", None)
    entities.question.cache_clear()

    with pytest.raises(CommandError, match=r"degraded: entity model$"):
        _run("doctor")
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("doctor", "--json", stdout=out)
    checks = {c["name"]: c["detail"] for c in json.loads(out.getvalue())["checks"]}
    assert "en_core_web_sm_not_installed" in checks["entity model"]
    entities.question.cache_clear()


def test_doctor_exits_non_zero_with_pending_rows(ledger):
    with pytest.raises(CommandError, match="degraded: pending, index vs ledger"):
        _run("doctor")


def test_doctor_exits_non_zero_when_the_store_is_unreachable(ledger, settings):
    settings.KARANI_VECTOR_DSN = f"postgresql://postgres@127.0.0.1:{closed_port()}/x"
    with pytest.raises(CommandError, match="degraded: vector store, embedder"):
        _run("doctor")


def test_doctor_exits_non_zero_without_a_dsn(ledger, settings):
    settings.KARANI_VECTOR_DSN = ""
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("doctor", "--json", stdout=out)
    report = json.loads(out.getvalue())
    checks = {c["name"]: c["detail"] for c in report["checks"]}
    assert "KARANI_VECTOR_DSN is not set" in checks["vector store"]


def test_doctor_reports_a_dropped_collection(ledger, vector_database):
    _run("reindex")
    with psycopg.connect(vector_database, autocommit=True) as conn:
        conn.execute(f'DROP TABLE "{ledger}"')
    with pytest.raises(CommandError, match="index vs ledger"):
        _run("doctor")


def test_doctor_is_happy_in_basic_mode(ledger, settings):
    settings.KARANI_MEMORY = "basic"
    out, _ = _run("doctor", "--json")
    report = json.loads(out)
    assert report["degraded"] is False
    assert [c["name"] for c in report["checks"]] == ["ledger", "keyword index", "secrets screen"]
