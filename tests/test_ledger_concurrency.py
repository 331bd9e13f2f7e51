"""Concurrency is the database's job: real OS processes writing at the same instant.

Each child connects first, then waits for a barrier file, so all of them hit the ledger
together. Postgres tests share Django's test database with the children; the SQLite test
uses its own file ledger (an in-memory test database cannot be shared across processes).
"""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection
from ledger_helpers import (
    CHILD_HEAD,
    KARANI,
    child_env,
    children_database_url,
    racing_child,
    run_together,
    spawn,
)

from memory import selectors, services
from memory.models import Memory

N = 8

CHILD = racing_child(
    r"""
from memory import services
from memory.errors import FactAlreadyDeleted, MemoryInputError
""",
    r"""
try:
    if op == "remember":
        out = services.remember(**payload).to_dict()
    elif op == "correct":
        out = {"id": services.correct(**payload).pk}
    elif op == "import":
        out = services.import_facts(records=enumerate(payload, start=1)).to_dict()
    print(json.dumps(out))
except (FactAlreadyDeleted, MemoryInputError) as exc:
    print(json.dumps({"error": type(exc).__name__, "message": str(exc)}))
""",
)


def _run_together(op: str, payloads: list, env: dict[str, str], tmp_path: Path) -> list[dict]:
    return run_together(CHILD, op, payloads, env=env, barrier=tmp_path / "go")


# --- Postgres -----------------------------------------------------------------------------


@pytest.fixture
def pg_children(request):
    return child_env(DATABASE_URL=children_database_url(), KARANI_MEMORY="basic")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_leaves_one_live_row_seen_n_times_when_n_processes_write_the_same_fact(
    pg_children, tmp_path
):
    fact = {"text": "Prefers async remote teams", "company": "Northwind Robotics"}
    results = _run_together("remember", [fact] * N, pg_children, tmp_path)

    assert [r["created"] for r in results].count(True) == 1
    assert len({r["id"] for r in results}) == 1
    # Each writer saw its own touch: the row lock serialised them.
    assert sorted(r["seen_count"] for r in results) == list(range(1, N + 1))
    row = Memory.objects.get()
    assert row.seen_count == N
    assert Memory.all_objects.count() == 1
    assert [r.id for r in selectors.recall(query="async").results] == [row.pk]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_dedupes_concurrent_writers_spelling_the_fact_differently(pg_children, tmp_path):
    spellings = ["Prefers remote", "PREFERS REMOTE", "  prefers   remote ", "Prefers Remote"]
    results = _run_together(
        "remember",
        [
            {"text": spellings[i % 4], "company": ["Acme", " acme ", "ACME"][i % 3]}
            for i in range(N)
        ],
        pg_children,
        tmp_path,
    )
    assert len({r["id"] for r in results}) == 1
    assert Memory.objects.get().seen_count == N


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_lets_exactly_one_of_n_concurrent_corrections_win(pg_children, tmp_path):
    original = services.remember(text="Prefers fully remote roles").id
    payloads = [
        {"id": original, "text": f"Prefers hybrid roles, variant {i}", "reason": f"writer {i}"}
        for i in range(N)
    ]
    results = _run_together("correct", payloads, pg_children, tmp_path)

    winners = [r for r in results if "id" in r]
    losers = [r for r in results if "error" in r]
    assert len(winners) == 1
    assert len(losers) == N - 1
    assert {r["error"] for r in losers} == {"FactAlreadyDeleted"}
    live = Memory.objects.get()
    assert live.pk == winners[0]["id"]
    assert live.supersedes_id == original
    old = Memory.all_objects.get(pk=original)
    assert old.deleted_at is not None
    assert old.delete_reason == f"writer {live.text.rsplit(' ', 1)[1]}"
    assert Memory.all_objects.count() == 2


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_imports_the_same_file_from_concurrent_processes_without_losing_a_touch(
    pg_children, tmp_path
):
    records = [{"text": f"imported fact {i}", "company": ["Acme", None][i % 2]} for i in range(60)]
    records += records[:10]  # in-file duplicates too
    workers = 4
    results = _run_together("import", [records] * workers, pg_children, tmp_path)

    assert all(r["rejected"] == 0 for r in results)
    assert sum(r["created"] for r in results) == 60
    assert sum(r["created"] + r["touched"] for r in results) == workers * len(records)
    counts = dict(Memory.objects.values_list("text", "seen_count"))
    assert len(counts) == 60 and Memory.all_objects.count() == 60
    for i in range(60):
        assert counts[f"imported fact {i}"] == workers * (2 if i < 10 else 1)


# --- SQLite (file ledger) -----------------------------------------------------------------

# These children use their own SQLite file whatever the suite's ledger is: the PostgreSQL pass
# of scripts/test would only repeat them.
sqlite_pass_only = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="SQLite file-ledger specs run in the SQLite pass"
)


@pytest.fixture
def sqlite_children(tmp_path):
    env = child_env(
        DATABASE_URL=None, KARANI_DATA_DIR=str(tmp_path / "data"), KARANI_MEMORY="basic"
    )
    migrate = subprocess.run(
        [str(KARANI), "migrate", "-v0"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert migrate.returncode == 0, migrate.stderr
    return env


@sqlite_pass_only
def test_it_serialises_concurrent_writers_on_an_sqlite_file_ledger(sqlite_children, tmp_path):
    results = _run_together(
        "remember", [{"text": "Prefers async remote teams"}] * N, sqlite_children, tmp_path
    )
    assert [r["created"] for r in results].count(True) == 1
    assert len({r["id"] for r in results}) == 1
    assert sorted(r["seen_count"] for r in results) == list(range(1, N + 1))
    recall = subprocess.run(
        [str(KARANI), "recall", "async", "--json"],
        cwd=tmp_path,
        env=sqlite_children,
        capture_output=True,
        text=True,
    )
    (hit,) = json.loads(recall.stdout)["results"]
    assert hit["id"] == results[0]["id"]


@sqlite_pass_only
def test_it_lets_one_of_n_concurrent_corrections_win_on_sqlite(sqlite_children, tmp_path):
    first = _run_together("remember", [{"text": "Prefers remote"}], sqlite_children, tmp_path)
    (tmp_path / "go").unlink()
    payloads = [
        {"id": first[0]["id"], "text": f"Prefers hybrid, variant {i}", "reason": "r"}
        for i in range(N)
    ]
    results = _run_together("correct", payloads, sqlite_children, tmp_path)
    assert len([r for r in results if "id" in r]) == 1
    assert {r["error"] for r in results if "error" in r} == {"FactAlreadyDeleted"}


HOLDER = (
    CHILD_HEAD
    + r"""
from django.db import transaction
from memory import services

with transaction.atomic():
    services.remember(text=sys.argv[1])
    print("holding", flush=True)
    time.sleep(float(sys.argv[2]))  # the new fact's row and index entry stay uncommitted
print("committed", flush=True)
"""
)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_never_makes_a_writer_of_another_fact_wait(pg_children):
    # No global write lock: while one process holds an uncommitted new fact, another
    # process's new fact (and a touch of a third) goes through at once.
    services.remember(text="Acme answers within a week")
    holder = spawn([sys.executable, "-c", HOLDER, "Globex pays in euros", "12"], pg_children)
    try:
        assert holder.stdout.readline().strip() == "holding", holder.stderr.read()
        started = time.monotonic()
        assert services.remember(text="Initech wants a cover letter").created
        assert not services.remember(text="Acme answers within a week").created
        assert time.monotonic() - started < 8, "a writer of another fact waited for the holder"
        assert holder.poll() is None  # the holder was still open all along
    finally:
        out, err = holder.communicate(timeout=90)
    assert "committed" in out, err
    assert Memory.objects.get(text="Acme answers within a week").seen_count == 2
    assert Memory.objects.filter(text="Globex pays in euros").exists()
