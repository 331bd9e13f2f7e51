"""ADR 0009 under injected faults: recall answers (fallback), writes land (pending), one
warning, no exception reaches the caller, and a later `reindex` restores semantic recall."""

import io
import sys
import time

import psycopg
import pytest
from django.core.management import call_command
from semantic_support import *  # noqa: F403  (fixtures)
from semantic_support import HungListener, closed_port, karani_warnings

from memory import selectors, services
from memory.models import Memory

pytestmark = [pytest.mark.pgvector, pytest.mark.django_db(transaction=True)]

FACT = "Recruiters at documentation-driven remote employers typically respond within 48 hours."
PARAPHRASE = "how fast do handbook-first companies reply?"


def _assert_degraded_but_answering(caplog) -> int:
    """A write during the fault lands pending; recall falls back; one warning in total."""
    written = services.remember(text="Prefers remote roles with async teams")
    again = services.remember(text="Remote roles need a good home office")
    result = selectors.recall(query="remote roles")

    row = Memory.objects.get(pk=written.id)
    assert row.indexed_at is None and row.vector_id is None, "the write must stay pending"
    assert Memory.objects.filter(pk=again.id, indexed_at__isnull=True).exists()
    assert (result.mode, result.fallback) == ("mem0", True)
    assert {f.id for f in result.results} >= {written.id, again.id}
    warnings = karani_warnings(caplog)
    assert len(warnings) == 1, warnings
    return written.id


def _assert_reindex_restores(pending_id: int) -> None:
    out = io.StringIO()
    call_command("reindex", stdout=out, stderr=io.StringIO())
    assert "ledger live: 4   index: 4 facts" in out.getvalue(), out.getvalue()
    assert Memory.objects.get(pk=pending_id).indexed_at is not None
    result = selectors.recall(query=PARAPHRASE)
    assert not result.fallback
    assert result.results[0].text == FACT


@pytest.fixture
def taught(mem0_mode):
    services.remember(text=FACT)
    services.remember(text="Avoids companies in the gambling industry")
    assert Memory.objects.filter(indexed_at__isnull=True).count() == 0
    return mem0_mode


def test_it_falls_back_when_the_vector_dsn_points_at_a_closed_port(
    taught, settings, caplog, vector_database
):
    settings.KARANI_VECTOR_DSN = f"postgresql://postgres@127.0.0.1:{closed_port()}/nothing"

    pending = _assert_degraded_but_answering(caplog)

    settings.KARANI_VECTOR_DSN = vector_database
    _assert_reindex_restores(pending)


def test_it_falls_back_when_the_store_hangs(taught, settings, caplog, vector_database):
    listener = HungListener()
    settings.KARANI_VECTOR_DSN = f"postgresql://postgres@127.0.0.1:{listener.port}/hung"
    try:
        started = time.monotonic()
        pending = _assert_degraded_but_answering(caplog)
        # Two writes and a recall against a hung server: one bounded timeout, not three.
        assert time.monotonic() - started < settings.KARANI_VECTOR_TIMEOUT * 2 + 3
    finally:
        listener.close()
    settings.KARANI_VECTOR_DSN = vector_database
    _assert_reindex_restores(pending)


def test_it_falls_back_when_mem0_cannot_be_imported(taught, monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "mem0", None)  # what a missing extra looks like

    pending = _assert_degraded_but_answering(caplog)
    assert "mem0 is not importable" in karani_warnings(caplog)[0]

    monkeypatch.delitem(sys.modules, "mem0")
    _assert_reindex_restores(pending)


def test_it_falls_back_when_the_entity_model_cannot_load(taught, monkeypatch, caplog):
    from memory.semantic import entities

    # A real spacy.load of a package that is not installed, from a cold start.
    monkeypatch.setattr(entities, "MODEL", "en_core_web_sm_not_installed")
    monkeypatch.setattr(entities, "_nlp", None)
    monkeypatch.setattr(entities, "_warned", False)
    entities.question.cache_clear()

    written = services.remember(text="Prefers remote roles with async teams")
    result = selectors.recall(query="remote roles")
    again = selectors.recall(query="remote roles with async teams")

    # Only the question is analysed: the write lands and is indexed all the same.
    assert Memory.objects.get(pk=written.id).indexed_at is not None
    assert (result.mode, result.fallback) == ("mem0", True)
    assert again.fallback and written.id in {f.id for f in result.results}
    warnings = karani_warnings(caplog)
    assert len(warnings) == 1 and "en_core_web_sm_not_installed" in warnings[0], warnings

    monkeypatch.undo()
    entities.question.cache_clear()
    result = selectors.recall(query=PARAPHRASE)
    assert not result.fallback
    assert result.results[0].text == FACT


def test_it_falls_back_when_the_collection_is_dropped_mid_run(taught, caplog, vector_database):
    with psycopg.connect(vector_database, autocommit=True) as conn:
        conn.execute(f'DROP TABLE "{taught}"')

    pending = _assert_degraded_but_answering(caplog)
    assert "collection is missing" in karani_warnings(caplog)[0]
    # The ledger now says every row needs the index again.
    assert Memory.objects.filter(indexed_at__isnull=False).count() == 0

    _assert_reindex_restores(pending)


def test_it_falls_back_when_the_embedder_path_is_missing(taught, settings, caplog, tmp_path):
    settings.KARANI_EMBEDDER = str(tmp_path / "no-such-model")

    pending = _assert_degraded_but_answering(caplog)
    assert "no-such-model" in karani_warnings(caplog)[0]

    settings.KARANI_EMBEDDER = ""
    _assert_reindex_restores(pending)


def test_it_pays_one_timeout_for_fifty_writes_to_a_dead_store(
    mem0_mode, settings, caplog, monkeypatch
):
    from memory import index
    from memory.semantic import client

    attempts, spent = [], []
    real_new_pool, real_added = client.new_pool, index.added
    monkeypatch.setattr(client, "new_pool", lambda cfg: attempts.append(1) or real_new_pool(cfg))

    def timed_added(ids):
        started = time.monotonic()
        real_added(ids)
        spent.append(time.monotonic() - started)

    services.remember(text="Loads the model while the store still answers")
    monkeypatch.setattr(index, "added", timed_added)
    settings.KARANI_VECTOR_DSN = f"postgresql://postgres@127.0.0.1:{closed_port()}/nothing"
    attempts.clear()

    ids = [services.remember(text=f"Fact number {n} about remote work").id for n in range(50)]

    assert len(spent) == 50, spent
    assert len(attempts) == 1, "the breaker must skip the store after the first failure"
    # The index's share of the 50 writes (ledger time excluded): one timeout, not fifty.
    assert sum(spent) < settings.KARANI_VECTOR_TIMEOUT + 2, f"index cost {sum(spent):.1f}s: {spent}"
    assert max(spent[1:]) < 0.5
    assert Memory.objects.filter(pk__in=ids, indexed_at__isnull=True).count() == 50
    assert len(karani_warnings(caplog)) == 1


def test_it_retries_the_store_after_the_cool_down(
    mem0_mode, settings, caplog, vector_database, clock
):
    settings.KARANI_VECTOR_DSN = f"postgresql://postgres@127.0.0.1:{closed_port()}/nothing"
    pending = services.remember(text="Written while the index was down").id
    settings.KARANI_VECTOR_DSN = vector_database
    skipped = services.remember(text="Written during the cool-down").id
    assert Memory.objects.get(pk=skipped).indexed_at is None, "the breaker skips the store"
    clock.advance(settings.KARANI_VECTOR_COOLDOWN + 1)

    fresh = services.remember(text="Written after it came back").id

    assert Memory.objects.get(pk=fresh).indexed_at is not None
    assert Memory.objects.get(pk=pending).indexed_at is None
    out = io.StringIO()
    call_command("reindex", "--pending", stdout=out, stderr=io.StringIO())
    assert Memory.objects.get(pk=pending).indexed_at is not None
    assert "ledger live: 3   index: 3 facts" in out.getvalue()


def test_it_recreates_a_dropped_collection_on_the_next_attempt(
    taught, settings, vector_database, clock
):
    with psycopg.connect(vector_database, autocommit=True) as conn:
        conn.execute(f'DROP TABLE "{taught}"')
    services.remember(text="Lost with the dropped table")
    clock.advance(settings.KARANI_VECTOR_COOLDOWN + 1)

    fresh = services.remember(text="Written after the cool-down")

    assert Memory.objects.get(pk=fresh.id).indexed_at is not None
    with psycopg.connect(vector_database) as conn:
        assert conn.execute("SELECT to_regclass(%s) IS NOT NULL", (taught,)).fetchone()[0]
    # Everything else is pending until a reindex: the new table only holds the new fact.
    assert Memory.objects.filter(indexed_at__isnull=True).count() == 3


@pytest.fixture
def locked_collection(taught, vector_database):
    """Another session holds an exclusive lock on the collection: a store that accepts the
    connection, then never finishes a statement (the hang after connect)."""
    holder = psycopg.connect(vector_database)
    holder.execute(f'LOCK TABLE "{taught}" IN ACCESS EXCLUSIVE MODE')
    yield holder
    holder.rollback()
    holder.close()


def test_a_query_hung_on_a_lock_falls_back_within_the_timeout(
    locked_collection, settings, caplog, vector_database
):
    started = time.monotonic()
    result = selectors.recall(query=PARAPHRASE)
    spent_on_recall = time.monotonic() - started
    # A batch of writes behind the hung store: each lands in the ledger, pending, and the
    # whole batch pays that one timeout (the breaker is open after the recall).
    started = time.monotonic()
    ids = [services.remember(text=f"Batch fact {n} about async teams").id for n in range(20)]
    spent_on_writes = time.monotonic() - started

    assert (result.mode, result.fallback) == ("mem0", True)
    assert spent_on_recall < settings.KARANI_VECTOR_TIMEOUT + 1.5, spent_on_recall
    assert spent_on_writes < 2.0, spent_on_writes
    assert Memory.objects.filter(pk__in=ids, indexed_at__isnull=True).count() == 20
    warnings = karani_warnings(caplog)
    assert len(warnings) == 1, warnings
    assert "QueryCanceled" in warnings[0] or "statement timeout" in warnings[0], warnings


def test_a_write_hung_on_a_lock_stays_pending_and_reindex_restores(
    locked_collection, taught, settings, caplog, vector_database
):
    started = time.monotonic()
    pending = _assert_degraded_but_answering(caplog)
    assert time.monotonic() - started < settings.KARANI_VECTOR_TIMEOUT + 2

    with psycopg.connect(vector_database) as conn:  # the lock was held throughout
        conn.execute("SET lock_timeout = '100ms'")
        with pytest.raises(psycopg.errors.LockNotAvailable):
            conn.execute(f'SELECT 1 FROM "{taught}" LIMIT 1')

    locked_collection.rollback()  # the other session lets go
    _assert_reindex_restores(pending)
