"""Eight identical decisions (and outcomes) from separate OS processes at the same instant, on
PostgreSQL: the database's constraints decide, so one posting, one decision and one verdict
fact are written, and every loser answers with the winner."""

from pathlib import Path

import pytest
from ledger_helpers import child_env, children_database_url, racing_child, run_together

from memory.models import Memory
from qualify.models import Outcome, Posting, Qualification

N = 8
URL = "https://jobs.example.com/race/1"

CHILD = racing_child(
    "from qualify import decisions, outcomes",
    r"""
if op == "decision":
    print(json.dumps(decisions.record_decision(**payload).to_dict()))
else:
    print(json.dumps(outcomes.record_outcome(**payload).to_dict()))
""",
)


def _run_together(op: str, payload: dict, tmp_path: Path) -> list[dict]:
    env = child_env(DATABASE_URL=children_database_url(), KARANI_MEMORY="basic")
    return run_together(CHILD, op, [payload] * N, env=env, barrier=tmp_path / f"go-{op}")


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
