"""Gunicorn workers SIGKILLed while they write decisions, on SQLite and PostgreSQL: every
request left unanswered is retried, and afterwards no acknowledged decision is lost, none is
duplicated, and none is left without its verdict fact.

An injected fault makes each verdict fact's write slow, and the worker in it is the one killed:
a decision and its verdict fact are one transaction, so the kill undoes both and the retry
writes both (before, the decision had committed alone and the retry answered "a repeat").
"""

import os
import signal
import threading
import time
from pathlib import Path

import pytest
from api_helpers import GUNICORN_CONF, api_token, gunicorn, http
from race_helpers import shared_ledger_fixture  # noqa: F401 (shared_ledger)

CLIENTS = 4
DECISIONS = 5  # per client
KILLS = 4

HOOK = """
exec(open({conf!r}).read())


def post_worker_init(worker):
    import os, time
    from memory import services

    real = services.remember

    def slow_remember(**fact):
        mark = os.path.join({marks!r}, str(os.getpid()))
        open(mark, "w").close()  # the test kills the worker now
        time.sleep(0.3)
        os.unlink(mark)
        return real(**fact)

    services.remember = slow_remember
"""


def _body(client: int, n: int) -> bytes:
    return (
        f'{{"external_id": "kill-{client}-{n}", "company": "Kill Co", "title": "SRE {client}-{n}",'
        f' "verdict": "qualified", "fit_score": 70, "prompt_version": "v1"}}'
    ).encode()


def _decide(port: int, token: str, client: int, acknowledged: dict, errors: list) -> None:
    for n in range(DECISIONS):
        for _ in range(20):  # a killed worker answers nothing: send the same request again
            try:
                status, _, raw = http(port, "POST", "/api/decisions", token, _body(client, n))
            except OSError:
                continue
            if status in (200, 201):
                acknowledged[f"kill-{client}-{n}"] = raw
                break
            if status < 500:
                errors.append((status, raw))
                return
        else:
            errors.append(("no answer after 20 tries", client, n))


def _kill_writers(marks: Path, done: threading.Event, killed: list[int]) -> None:
    while not done.is_set() and len(killed) < KILLS:
        for mark in marks.iterdir():
            pid = int(mark.name)
            if pid not in killed:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        time.sleep(0.002)


@pytest.mark.django_db(transaction=True)  # on PostgreSQL, children see what is committed
def test_killed_workers_lose_nothing_duplicate_nothing_and_leave_no_decision_without_its_fact(
    shared_ledger, tmp_path
):
    marks = tmp_path / "marks"
    marks.mkdir()
    config = tmp_path / "gunicorn.conf.py"
    config.write_text(HOOK.format(conf=str(GUNICORN_CONF), marks=str(marks)))
    token = api_token("pipeline", shared_ledger.env, "--writer")
    acknowledged: dict[str, bytes] = {}
    errors: list = []
    killed: list[int] = []
    with gunicorn(shared_ledger.env, tmp_path / "gunicorn.log", workers=2, config=config) as port:
        done = threading.Event()
        killer = threading.Thread(target=_kill_writers, args=(marks, done, killed))
        killer.start()
        clients = [
            threading.Thread(target=_decide, args=(port, token, c, acknowledged, errors))
            for c in range(CLIENTS)
        ]
        for thread in clients:
            thread.start()
        for thread in clients:
            thread.join(timeout=120)
        done.set()
        killer.join()

    assert errors == []
    assert len(killed) == KILLS, "the workers were not killed while writing"
    assert len(acknowledged) == CLIENTS * DECISIONS
    rows = shared_ledger.rows(
        "SELECT p.external_id, q.id, q.deleted_at FROM qualify_qualification q"
        " JOIN qualify_posting p ON p.id = q.posting_id"
    )
    per_posting: dict[str, list[int]] = {}
    for external_id, pk, deleted_at in rows:
        assert deleted_at is None
        per_posting.setdefault(external_id, []).append(pk)
    assert sorted(per_posting) == sorted(acknowledged)  # none lost
    assert [ids for ids in per_posting.values() if len(ids) != 1] == []  # none duplicated
    facts = {
        ref
        for (ref,) in shared_ledger.rows(
            "SELECT ref FROM memories WHERE source = 'verdict' AND deleted_at IS NULL"
        )
    }
    without = [ids[0] for ids in per_posting.values() if f"qualification:{ids[0]}" not in facts]
    assert without == [], f"decisions without their verdict fact: {without}"
