"""mem0 mode's default write path: the write returns after its commit, and a worker thread
embeds the fact (memory.background). The fact is recalled at once through the lexical half; a
failure leaves it pending for reindex; a command waits for its facts before it exits."""

import json
import sqlite3
import threading

import pytest
from django.db import connection
from ledger_helpers import karani
from semantic_support import *  # noqa: F403  (fixtures)
from semantic_support import index_vectors, karani_warnings, mem0_child

from memory import background, selectors, services
from memory.models import Memory
from memory.semantic import reindex, store

pytestmark = [pytest.mark.pgvector, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def in_background(settings, mem0_mode):
    settings.KARANI_INDEX_IN_BACKGROUND = True
    yield mem0_mode
    background.flush()


@pytest.fixture
def held_embedder(monkeypatch):
    """The embedder waits until the test releases it: a write that waited for it would hang."""
    release = threading.Event()
    embed = store.embed_texts

    def held(client, texts):
        assert release.wait(30), "the embedder was never released"
        return embed(client, texts)

    monkeypatch.setattr(store, "embed_texts", held)
    return release


def test_a_write_returns_before_its_fact_is_embedded_and_is_recalled_meanwhile(
    in_background, held_embedder, vector_database
):
    fact = services.remember(text="Globex pays relocation up to 8k", company="Globex").memory

    assert Memory.objects.get(pk=fact.pk).indexed_at is None
    found = selectors.recall(query="relocation money", company="Globex").results
    assert [f.id for f in found] == [fact.pk]  # the lexical half, while the worker waits

    held_embedder.set()
    background.flush()
    assert Memory.objects.get(pk=fact.pk).indexed_at is not None
    assert index_vectors(vector_database, in_background) == {fact.pk: 1}


# An in-memory SQLite test database locks whole tables without waiting; a file ledger (WAL,
# busy timeout) queues the worker's writes, which the command test below shows.
@pytest.mark.skipif(connection.vendor == "sqlite", reason="the SQLite pass: see the command test")
def test_writes_queued_while_the_worker_is_busy_are_all_indexed(
    in_background, held_embedder, vector_database
):
    first = services.remember(text="Initech interviews run four rounds").memory
    rest = [services.remember(text=f"Initech note {n}: ships weekly").memory for n in (1, 2, 3)]

    held_embedder.set()
    background.flush()

    ids = [first.pk, *(m.pk for m in rest)]
    assert Memory.objects.filter(pk__in=ids, indexed_at__isnull=True).count() == 0
    assert index_vectors(vector_database, in_background) == dict.fromkeys(ids, 1)


def test_a_failure_on_the_worker_leaves_the_fact_pending_and_reindex_catches_up(
    in_background, monkeypatch, caplog, vector_database
):
    def broken(client, texts):
        raise RuntimeError("injected: the embedder failed")

    monkeypatch.setattr(store, "embed_texts", broken)
    fact = services.remember(text="Umbrella Corp asks for a take-home test").memory
    background.flush()

    assert Memory.objects.get(pk=fact.pk).indexed_at is None
    assert any("pending" in w for w in karani_warnings(caplog))
    monkeypatch.undo()
    reindex.reindex(pending_only=True)
    assert index_vectors(vector_database, in_background) == {fact.pk: 1}


@pytest.mark.skipif(
    connection.vendor != "sqlite", reason="a file ledger, as a command has: the SQLite pass"
)
def test_a_command_waits_for_its_facts_to_be_indexed_before_it_exits(
    migrated_ledger, mem0_mode, vector_database, tmp_path
):
    data, env = mem0_child(
        migrated_ledger,
        tmp_path,
        vector_database,
        KARANI_VECTOR_COLLECTION=mem0_mode,
        KARANI_INDEX_IN_BACKGROUND="1",
    )
    facts = tmp_path / "facts.jsonl"
    facts.write_text(
        "".join(
            json.dumps({"text": f"Hooli note {n}: recruiters answer in a day"}) + "\n"
            for n in range(3)
        )
    )
    assert karani("import", str(facts), cwd=tmp_path, env=env).returncode == 0
    proc = karani("remember", "Hooli pays a signing bonus", cwd=tmp_path, env=env)

    assert proc.returncode == 0, proc.stderr
    with sqlite3.connect(data / "karani.sqlite3") as ledger:
        rows = dict(ledger.execute("SELECT id, indexed_at IS NOT NULL FROM memories"))
    assert len(rows) == 4 and all(rows.values()), (rows, proc.stderr)
    assert index_vectors(vector_database, mem0_mode) == dict.fromkeys(rows, 1)
