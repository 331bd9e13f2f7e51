"""Shared helpers for the ledger specs (issue 2): counting rows and running real processes.

Not a test module; the ledger test files import it by name (pytest puts tests/ on sys.path).
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from django.apps import apps
from django.db import connection

from memory import scanner

REPO = Path(__file__).resolve().parent.parent
# The console script installed beside the interpreter running the tests (.venv/bin/karani).
KARANI = Path(sys.executable).parent / "karani"


def counts() -> dict[str, int]:
    """Rows per table of the memory app (facts and every index table beside them).

    'Nothing written' means this stays put; a new index table is covered without edits.
    """
    return {
        model._meta.db_table: model._base_manager.count()
        for model in apps.get_app_config("memory").get_models()
    }


def child_env(**overrides: str | None) -> dict[str, str]:
    """The environment for a child process; a None value removes the variable."""
    env = dict(os.environ)
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env.setdefault("MEM0_TELEMETRY", "False")
    # Children load the scanner rules this process compiled instead of compiling their own.
    env.setdefault("KARANI_SCANNER_CACHE_DIR", str(scanner.cache_dir()))
    for name, value in overrides.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def children_database_url() -> str:
    """A DATABASE_URL naming the database this test runs against (Postgres test DB)."""
    s = connection.settings_dict
    assert connection.vendor == "postgresql", "only Postgres test DBs are shared with children"
    user = s.get("USER") or "postgres"
    host = s.get("HOST") or "127.0.0.1"
    port = s.get("PORT") or 5432
    password = f":{s['PASSWORD']}" if s.get("PASSWORD") else ""
    return f"postgresql://{user}{password}@{host}:{port}/{s['NAME']}"


def karani(
    *args: str, cwd: Path, env: dict[str, str], timeout: float = 120, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real ``karani`` console script from ``cwd``."""
    return subprocess.run(
        [str(KARANI), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        input=stdin,
    )


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    """Assert the contract for every failure: non-zero exit, one stderr line, no traceback."""
    assert proc.returncode != 0, proc.stdout
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


def indexed_words(memory_id: int) -> set[str]:
    """The words of a fact that the database's own full-text index finds it by.

    Asks the index itself (memory.keyword's per-word query), so a deleted fact, or one the
    index never saw, has none.
    """
    from memory import keyword
    from memory.models import Memory

    terms = Memory.all_objects.get(pk=memory_id).terms.split()
    match = keyword.WORD_MATCH[connection.vendor]
    found = set()
    with connection.cursor() as cursor:
        for word in terms:
            cursor.execute(match, [keyword.word_param(word)])
            if any(row[0] == memory_id for row in cursor.fetchall()):
                found.add(word)
    return found


# What every child script starts with: Django set up on the site's settings, not yet connected.
CHILD_HEAD = r"""
import json, os, sys, time
import django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "karani_site.settings")
django.setup()
from django.db import connection
"""

_CHILD_WAIT = r"""
op, barrier, payload = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
connection.ensure_connection()  # connect before the barrier: only the writes race
print("ready", flush=True)
while not os.path.exists(barrier):
    time.sleep(0.001)
"""


def racing_child(imports: str, act: str) -> str:
    """A child script for ``run_together``: ``imports``, then connect and wait for the barrier,
    then ``act`` (which reads ``op`` and ``payload`` and prints its JSON answer last)."""
    return CHILD_HEAD + imports.strip("\n") + "\n" + _CHILD_WAIT + act.lstrip("\n")


def spawn(argv: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    """A real process in the repository's root with ``env``, its output piped as text."""
    return subprocess.Popen(
        argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def run_together(
    child: str, op: str, payloads: list, *, env: dict[str, str], barrier: Path
) -> list[dict]:
    """One process per payload running ``child`` (a script that prints "ready" once connected,
    waits for ``barrier`` to exist, then prints its JSON answer last), all released at once."""
    procs = [
        spawn([sys.executable, "-c", child, op, str(barrier), json.dumps(p)], env) for p in payloads
    ]
    try:
        for proc in procs:  # every child is connected and waiting
            line = proc.stdout.readline()
            assert line.strip() == "ready", proc.stderr.read()
        time.sleep(0.05)
        barrier.touch()
        outputs = []
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
            outputs.append(json.loads(out.strip().splitlines()[-1]))
        return outputs
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
