"""Re-judgings and outcomes of one posting from separate OS processes at the same instant, on
SQLite and PostgreSQL: the posting's row lock (SQLite: the write lock) orders them, so after 8
re-judgings the posting has exactly one live verdict and one live verdict fact, and no outcome
is credited to a verdict already replaced when it was written."""

from datetime import datetime

import pytest
from race_helpers import racers, shared_ledger_fixture  # noqa: F401 (shared_ledger)

N = 8
TRIALS = 3
# Child 0 first records each trial's posting and its first verdict (under v0).
SETUP = r"""
def decide(kind, k, version, me):
    return decisions.record_decision(
        external_id=f"{kind}-{k}", company=f"Race Co {kind} {k}", title="SRE",
        verdict="qualified" if me % 2 else "rejected", fit_score=10 + me,
        prompt_version=version,
    ).to_dict()

if me == 0:
    for k in range(trials):
        decide(KIND, k, "v0", 80)

def act(me, k):
    if KIND == "mixed" and me >= N // 2:
        return outcomes.record_outcome(
            external_id=f"{KIND}-{k}", stage="applied", note=f"writer {me}"
        ).to_dict()
    return decide(KIND, k, f"v{me + 1}", me)
"""


def _race(kind: str, ledger, tmp_path) -> list[list[dict]]:
    setup = f"KIND, N = {kind!r}, {N}\n{SETUP}"
    with racers(setup, n=N, trials=TRIALS, env=ledger.env, tmp_path=tmp_path) as race:
        return [race.trial(k) for k in range(TRIALS)]


@pytest.mark.django_db(transaction=True)  # on PostgreSQL, children see what is committed
def test_eight_rejudgings_leave_one_live_verdict_and_one_live_verdict_fact(shared_ledger, tmp_path):
    trials = _race("rejudge", shared_ledger, tmp_path)

    for k, answers in enumerate(trials):
        assert all(a["created"] for a in answers), answers
        live = shared_ledger.rows(
            "SELECT q.id FROM qualify_qualification q JOIN qualify_posting p"
            " ON p.id = q.posting_id WHERE p.external_id = %s"
            " AND q.deleted_at IS NULL AND q.verdict IS NOT NULL",
            f"rejudge-{k}",
        )
        facts = shared_ledger.rows(
            "SELECT ref FROM memories WHERE source = 'verdict' AND deleted_at IS NULL"
            " AND company = %s",
            f"Race Co rejudge {k}",
        )
        assert len(live) == 1, f"trial {k}: {len(live)} live verdicts"
        assert facts == [(f"qualification:{live[0][0]}",)], f"trial {k}: live facts {facts}"
        # Each re-judging replaced the one before it: one chain, no verdict replaced twice.
        replaced = [a["replaced"] for a in answers]
        assert len(set(replaced)) == N and live[0][0] not in replaced


def _when(value) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)


@pytest.mark.django_db(transaction=True)  # on PostgreSQL, children see what is committed
def test_outcomes_racing_rejudgings_are_credited_to_the_verdict_live_when_written(
    shared_ledger, tmp_path
):
    trials = _race("mixed", shared_ledger, tmp_path)

    outcomes = [a for answers in trials for a in answers if "stage" in a]
    assert len(outcomes) == TRIALS * N // 2 and all(a["created"] for a in outcomes)
    credited = shared_ledger.rows(
        "SELECT o.id, o.created_at, q.id, q.deleted_at FROM qualify_outcome o"
        " LEFT JOIN qualify_qualification q ON q.id = o.qualification_id"
    )
    assert len(credited) == len(outcomes)
    stale = [
        pk
        for pk, written, verdict, replaced in credited
        if verdict is None or (replaced is not None and _when(replaced) < _when(written))
    ]
    assert stale == [], f"outcomes credited to a verdict replaced before they were written: {stale}"
