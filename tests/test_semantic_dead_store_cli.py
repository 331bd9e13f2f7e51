"""Issue 15: in mem0 mode a dead vector store costs a run of CLI calls one timeout in all.

The first `karani recall` finds the store down before loading mem0, torch or the model, and
records the open breaker under KARANI_DATA_DIR; the next process skips the store at once.
"""

import json
import socket

import pytest
from django.db import connection
from ledger_helpers import child_env, karani
from semantic_support import mem0_child

pytestmark = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="console-script specs run in the SQLite pass"
)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: nothing listens


@pytest.fixture(scope="module")
def migrated(tmp_path_factory):
    data = tmp_path_factory.mktemp("dead-store") / "data"
    env = child_env(DATABASE_URL=None, KARANI_DATA_DIR=str(data), KARANI_MEMORY=None)
    assert karani("migrate", "-v0", cwd=data.parent, env=env).returncode == 0
    assert karani("remember", "Prefers remote teams", cwd=data.parent, env=env).returncode == 0
    return data


def test_a_dead_store_is_paid_for_once_per_cool_down_across_processes(migrated, tmp_path):
    data, env = mem0_child(
        migrated,
        tmp_path,
        f"postgresql://postgres@127.0.0.1:{_closed_port()}/vectors",
        KARANI_VECTOR_COOLDOWN="600",
        # Loading the model first would fail on this instead, and say so in the reason.
        KARANI_EMBEDDER=str(tmp_path / "no-such-model"),
    )

    first = karani("recall", "remote", "--json", cwd=tmp_path, env=env)
    assert first.returncode == 0, first.stderr
    body = json.loads(first.stdout)
    assert (body["mode"], body["fallback"]) == ("mem0", True)
    assert [r["text"] for r in body["results"]] == ["Prefers remote teams"]
    # One line, naming psycopg's reason; the pool's own reconnect warnings stay quiet.
    refused = "could not connect to the vector store (KARANI_VECTOR_DSN): connection failed:"
    (warning,) = [line for line in first.stderr.splitlines() if line.strip()]
    assert "semantic index unavailable" in warning and refused in warning, first.stderr
    assert "Connection refused" in warning
    state = json.loads((data / "semantic-breaker.json").read_text())
    assert refused in state["reason"]

    second = karani("recall", "remote", "--json", cwd=tmp_path, env=env)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["fallback"] is True
    assert "semantic index" not in second.stderr  # skipped: no new attempt, no new warning

    # Another store is another breaker: the recorded outage does not silence it.
    other = {**env, "KARANI_VECTOR_DSN": f"postgresql://postgres@127.0.0.1:{_closed_port()}/v"}
    third = karani("recall", "remote", "--json", cwd=tmp_path, env=other)
    assert refused in third.stderr


def test_a_vector_database_that_does_not_exist_is_named_in_one_line(migrated, tmp_path):
    # The test server, reachable, without this database.
    _, env = mem0_child(
        migrated, tmp_path, "postgresql://postgres@127.0.0.1:5432/karani_no_such_vectors"
    )

    done = karani("reindex", cwd=tmp_path, env=env)

    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines[-1].startswith("karani: semantic index unavailable: could not connect")
    assert 'database "karani_no_such_vectors" does not exist' in lines[-1]
    assert lines[-1].endswith("create it with the vector extension")
    assert not [line for line in lines if "error connecting in" in line], done.stderr
