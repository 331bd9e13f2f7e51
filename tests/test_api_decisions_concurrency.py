"""Eight identical decisions (and outcomes) from separate OS processes at the same instant, on
PostgreSQL: the database's constraints decide, so one posting, one decision and one verdict
fact are written, and every loser answers with the winner."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ledger_helpers import REPO, child_env, children_database_url

from memory.models import Memory
from qualify.models import Outcome, Posting, Qualification

N = 8
URL = "https://jobs.example.com/race/1"

CHILD = r"""
import json, os, sys, time
import django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "karani_site.settings")
django.setup()
from django.db import connection
from qualify import decisions, outcomes

op, barrier, payload = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
connection.ensure_connection()  # connect before the barrier: only the writes race
print("ready", flush=True)
while not os.path.exists(barrier):
    time.sleep(0.001)
if op == "decision":
    print(json.dumps(decisions.record_decision(**payload).to_dict()))
else:
    print(json.dumps(outcomes.record_outcome(**payload).to_dict()))
"""


def _run_together(op: str, payload: dict, tmp_path: Path) -> list[dict]:
    barrier = tmp_path / f"go-{op}"
    env = child_env(DATABASE_URL=children_database_url(), KARANI_MEMORY="basic")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, op, str(barrier), json.dumps(payload)],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(N)
    ]
    try:
        for proc in procs:
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


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_eight_identical_decisions_make_one_decision_and_one_fact(tmp_path):
    payload = {
        "external_id": URL,
        "company": "Racing Co",
        "title": "SRE",
        "verdict": "qualified",
        "fit_score": 77,
        "prompt_version": "pipeline-v1",
    }

    answers = _run_together("decision", payload, tmp_path)

    assert sorted(a["created"] for a in answers) == [False] * (N - 1) + [True]
    assert {a["id"] for a in answers} == {Qualification.all_objects.get().pk}
    assert Posting.all_objects.count() == 1
    (fact,) = Memory.all_objects.filter(source="verdict")
    assert fact.seen_count == 1 and fact.ref == f"qualification:{answers[0]['id']}"

    outcomes = _run_together("outcome", {"external_id": URL, "stage": "applied"}, tmp_path)

    assert sorted(a["created"] for a in outcomes) == [False] * (N - 1) + [True]
    assert {a["id"] for a in outcomes} == {Outcome.all_objects.get().pk}
    assert Memory.all_objects.filter(source="outcome").count() == 1
