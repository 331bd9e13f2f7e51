"""Shared helpers for the decision writer's race and kill specs: a ledger that child processes
share on either database (read back with plain SQL), and children released trial by trial.

Not a test module; the specs import it by name (pytest puts tests/ on sys.path).
"""

import json
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from ledger_helpers import CHILD_HEAD, child_env, children_database_url, spawn


@dataclass
class SharedLedger:
    """The environment of children sharing one ledger, and plain SQL to read it back."""

    env: dict[str, str]
    sqlite_file: Path | None

    def rows(self, sql: str, *params: Any) -> list[tuple]:
        if self.sqlite_file is not None:
            with sqlite3.connect(self.sqlite_file) as db:
                return db.execute(sql.replace("%s", "?"), params).fetchall()
        from api_helpers import admin_connection

        with admin_connection() as db:
            return db.execute(sql, params).fetchall()


@pytest.fixture(name="shared_ledger")
def shared_ledger_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> SharedLedger:
    """This test's database on PostgreSQL (the test marks django_db(transaction=True)), or a
    copy of the migrated SQLite ledger on SQLite."""
    env = {"KARANI_MEMORY": "basic", "KARANI_API_WRITE_RATE": "off"}
    if connection.vendor == "postgresql":
        # The test's own django_db(transaction=True) mark: children see what is committed.
        return SharedLedger(child_env(DATABASE_URL=children_database_url(), **env), None)
    data = tmp_path / "data"
    shutil.copytree(request.getfixturevalue("migrated_ledger"), data)
    env = child_env(DATABASE_URL=None, KARANI_DATA_DIR=str(data), **env)
    return SharedLedger(env, data / "karani.sqlite3")


# A child: Django set up and connected, then one JSON line per trial, each written once the
# trial's barrier file exists. ``act(me, k)`` is the script's own; argv: barriers, me, trials.
CHILD = (
    CHILD_HEAD
    + r"""
from qualify import decisions, outcomes

barriers, me, trials = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
{setup}
connection.ensure_connection()  # connect before the barrier: only the writes race
print("ready", flush=True)
for k in range(trials):
    while not os.path.exists(os.path.join(barriers, str(k))):
        time.sleep(0.001)
    print(json.dumps(act(me, k)), flush=True)
"""
)


@dataclass
class Racers:
    procs: list[subprocess.Popen]
    barriers: Path

    def trial(self, k: int) -> list[dict]:
        """Release trial ``k`` in every child at once; their answers, in child order."""
        (self.barriers / str(k)).touch()
        answers = []
        for proc in self.procs:
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            answers.append(json.loads(line))
        return answers


@contextmanager
def racers(
    setup: str, *, n: int, trials: int, env: dict[str, str], tmp_path: Path
) -> Iterator[Racers]:
    """``n`` children running CHILD with ``setup`` (which defines ``act``), all connected and
    waiting; each is ended when the generator is closed."""
    barriers = tmp_path / "barriers"
    barriers.mkdir()
    script = CHILD.replace("{setup}", setup)
    procs = [
        spawn([sys.executable, "-c", script, str(barriers), str(me), str(trials)], env)
        for me in range(n)
    ]
    try:
        for proc in procs:
            line = proc.stdout.readline()
            assert line.strip() == "ready", proc.stderr.read()
        time.sleep(0.05)
        yield Racers(procs, barriers)
        for proc in procs:
            _, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
