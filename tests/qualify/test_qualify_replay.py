"""`karani replay`: the model asked again, under each prompt version, about postings whose
outcome is known. Precision and recall per version, the postings where versions disagree,
nothing written to the live ledger, resumable, bounded like `qualify`."""

import json
import socket
import threading
import time
from datetime import UTC, datetime
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from qualify_fakes import Raw, criteria, make_posting, memory_block, memory_sensitive, run_qualify

from memory import selectors
from memory.models import Memory
from qualify import llm, prompts, replay, services, stats
from qualify.credentials import WITHHELD
from qualify.models import DecisionFact, Outcome, Qualification, ReplayAnswer, ReplayRun

pytestmark = pytest.mark.django_db

PROGRESSED, ENDED = 4, 6


@pytest.fixture
def history(llm_settings, fake_llm, profile):
    """10 postings decided and followed up (4 reached a screen, 6 ended without one), and one
    still at "applied" (its outcome is not known yet, so replay leaves it out)."""
    postings = [make_posting(title=f"Platform engineer {i}") for i in range(PROGRESSED + ENDED + 1)]
    run_qualify()
    for p in postings[:PROGRESSED]:
        services.record_outcome(posting_id=p.pk, stage="applied")
        services.record_outcome(posting_id=p.pk, stage="screen")
    for p in postings[PROGRESSED:-1]:
        services.record_outcome(posting_id=p.pk, stage="rejected")
    services.record_outcome(posting_id=postings[-1].pk, stage="applied")
    fake_llm.requests.clear()
    # With a memory block the scripted model rejects, without one it qualifies.
    fake_llm.responder = memory_sensitive
    return postings


def _replay(*args: str) -> dict:
    out = StringIO()
    call_command("replay", "--json", *args, stdout=out)
    return json.loads(out.getvalue())


def _live_state() -> tuple:
    return (
        list(Memory.all_objects.order_by("id").values_list("id", "text", "last_seen_at")),
        list(Qualification.all_objects.order_by("id").values_list("id", "verdict", "arm")),
        Outcome.all_objects.count(),
        DecisionFact.objects.count(),
    )


def _one_slot(fake_llm, *, requests: int, wait: float) -> list[int]:
    """Answers as a one-slot server would, each answer held (up to ``wait`` s) until the next
    request is queued behind it; returns [the most requests ever out at once]."""
    arrived, outstanding, most, cond = [0], [0], [0], threading.Condition()

    def respond(body: dict) -> dict:
        with cond:
            arrived[0] += 1
            n, outstanding[0] = arrived[0], outstanding[0] + 1
            most[0] = max(most[0], outstanding[0])
            cond.notify_all()
            # The first request goes alone (the answers' speed is not known yet), and none
            # follows the last.
            cond.wait_for(lambda: arrived[0] > n or n in (1, requests), timeout=wait)
            outstanding[0] -= 1
        return memory_sensitive(body)

    fake_llm.responder = respond
    return most


def test_it_scores_each_version_keeping_the_endpoint_busy(history, fake_llm, monkeypatch):
    most = _one_slot(fake_llm, requests=20, wait=2)
    report = _replay()

    pre, aware = report["versions"][prompts.PRE_MEMORY], report["versions"][prompts.MEMORY_AWARE]
    # Pre-memory qualified all 10: every screen found, 4 of 10 right.
    assert pre["confusion"] == {"tp": PROGRESSED, "fp": ENDED, "fn": 0, "tn": 0}
    assert pre["precision"] == {"n": 10, **stats.wilson(PROGRESSED, 10).to_dict()}
    assert pre["recall"] == {"n": PROGRESSED, **stats.wilson(PROGRESSED, PROGRESSED).to_dict()}
    # Memory-aware rejected all 10: no precision to speak of, no screen found.
    assert aware["confusion"] == {"tp": 0, "fp": 0, "fn": PROGRESSED, "tn": ENDED}
    assert aware["precision"] == {"n": 0, "estimate": None}
    assert aware["recall"]["estimate"] == 0.0
    assert not pre["enough_data"] and not aware["enough_data"]
    assert report["postings"] == 10 and report["finished"]
    assert len(fake_llm.requests) == 20  # two versions x ten postings
    assert most == [2]  # the next request waited at the endpoint, behind the one answered

    # When each answer takes the whole timeout, a request queued behind one would time out
    # waiting: the next goes out only once the last is in.
    ask = replay._ask
    monkeypatch.setattr(replay, "_ask", lambda *args: (*ask(*args)[:4], 5000.0))
    most = _one_slot(fake_llm, requests=4, wait=0.1)
    assert _replay("--new", "--limit", "2")["finished"]
    assert most == [1]


def test_it_lists_the_postings_where_the_versions_disagree(history):
    report = _replay()

    assert {d["posting"] for d in report["disagreements"]} == {p.pk for p in history[:-1]}
    first = next(d for d in report["disagreements"] if d["posting"] == history[0].pk)
    assert first["progressed"] is True
    assert first["verdicts"] == {prompts.MEMORY_AWARE: "rejected", prompts.PRE_MEMORY: "qualified"}


def test_it_writes_nothing_live(history):
    before = _live_state()

    _replay("--agent")

    assert _live_state() == before
    assert ReplayAnswer.objects.count() == 30
    assert ReplayAnswer.objects.filter(prompt_version=prompts.MEMORY_AGENT).count() == 10


def test_it_shows_only_memory_from_before_the_original_decision(history, fake_llm):
    _replay()

    decided = Qualification.objects.get(posting=history[0])
    aware = [
        memory_block(_text(r))
        for r in fake_llm.requests
        if prompts.MEMORY_HEADER in _text(r) and "Platform engineer 0\n" in _text(r) + "\n"
    ]
    assert aware, "the memory-aware prompt for posting 0 was sent"
    shown = Memory.objects.filter(created_at__gte=decided.created_at)
    assert shown.exists()  # its own verdict and screen facts exist by now...
    for fact in shown:
        assert f"[fact {fact.pk}]" not in aware[0]  # ...and never reach its replay prompt


def _text(body: dict) -> str:
    return "\n".join(str(m.get("content") or "") for m in body["messages"])


def test_it_resumes_after_an_interruption(history, fake_llm):
    run, resumed = replay.start_or_resume(since=None, limit=None, agent_mode=False)
    client = llm.ChatClient(llm.LLMConfig.from_settings())

    def interrupt(answer):
        if ReplayAnswer.objects.count() == 7:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        replay.run(run, client=client, on_answer=interrupt)
    assert not resumed and ReplayAnswer.objects.count() == 7
    # The eighth was already asked (it waits at the endpoint while the seventh is answered);
    # its answer is dropped with the interruption, so it is asked again.
    deadline = time.monotonic() + 10
    while len(fake_llm.requests) < 8 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(fake_llm.requests) == 8

    report = _replay()

    assert report["run"] == run.pk and report["finished"]
    assert ReplayAnswer.objects.count() == 20
    assert len(fake_llm.requests) == 8 + 13  # the seven answered were not asked again
    assert ReplayRun.objects.count() == 1


def test_it_starts_a_new_run_when_asked(history):
    first = _replay()
    second = _replay("--new")

    assert second["run"] != first["run"]
    assert ReplayAnswer.objects.filter(run_id=second["run"]).count() == 20


def test_it_stops_after_three_endpoint_failures_and_resumes_later(
    history, llm_settings, monkeypatch
):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    good_url = llm_settings.KARANI_LLM_BASE_URL
    llm_settings.KARANI_LLM_BASE_URL = f"http://127.0.0.1:{closed}/v1"
    asked, ask = [], llm.ask_verdict
    monkeypatch.setattr(llm, "ask_verdict", lambda *args: asked.append(1) or ask(*args))

    with pytest.raises(CommandError, match="stopped after 3 endpoint failures in a row"):
        call_command("replay", "--json", stdout=StringIO())
    assert len(asked) == 3  # asking ahead never sends a fourth request
    run = ReplayRun.objects.get()
    assert run.finished_at is None and run.stopped
    assert ReplayAnswer.objects.exclude(error="").count() == 3

    llm_settings.KARANI_LLM_BASE_URL = good_url
    report = _replay()
    assert report["finished"] and report["run"] == run.pk
    # The three failed pairs stay recorded as errors; the other seventeen were asked.
    assert sum(v["errors"] for v in report["versions"].values()) == 3


def test_it_records_a_memory_outage_and_goes_on(history, monkeypatch):
    def boom(**kwargs):
        raise ConnectionError("injected: memory is down")

    monkeypatch.setattr(selectors, "recall", boom)
    monkeypatch.setattr(selectors, "recall_many", boom)

    report = _replay()

    assert report["finished"]
    aware = report["versions"][prompts.MEMORY_AWARE]
    assert aware["memory_unavailable"] == 10 and aware["errors"] == 0
    assert ReplayAnswer.objects.exclude(memory_error="").count() == 10


def test_it_honours_since_and_limit(history):
    old = Qualification.objects.filter(posting__in=history[:4])
    old.update(created_at=datetime(2020, 1, 1, tzinfo=UTC))

    assert _replay("--limit", "3")["postings"] == 3
    assert _replay("--since", "2021-01-01", "--new")["postings"] == 6
    assert _replay("--since", "2019-06-01T12:00:00+00:00", "--new")["postings"] == 10


def test_it_refuses_bad_input_in_one_line(history):
    for args, message in [
        (["--since", "last week"], "--since 'last week' is not a date"),
        (["--limit", "0"], "--limit must be at least 1"),
        (["--since", "2999-01-01"], "--since is in the future"),
    ]:
        with pytest.raises(CommandError, match=message):
            call_command("replay", *args, stdout=StringIO())
    assert not ReplayRun.objects.exists()


def test_it_says_when_no_posting_has_a_known_outcome(llm_settings, fake_llm, profile):
    make_posting()
    fake_llm.default = criteria()
    run_qualify()

    with pytest.raises(CommandError, match="no postings with a known outcome"):
        call_command("replay", stdout=StringIO())


def test_it_prints_a_table_and_the_disagreements(history):
    out = StringIO()

    call_command("replay", stdout=out)

    text = out.getvalue()
    assert "replay run" in text and "precision" in text and "recall" in text
    assert "10 postings where the versions disagree" in text
    assert "not enough data yet" in text


@pytest.mark.parametrize("where", ["reasons", "error"])
def test_it_stores_no_credential_the_model_wrote(history, fake_llm, where):
    key = "AKIAZ3MHXQ7RN4VPL2KD"
    if where == "reasons":
        fake_llm.responder = lambda body: criteria(reasons=f"key {key}")
    else:  # the schema violation quotes the value
        fake_llm.responder = lambda body: Raw(json.dumps(criteria(remote_ok=key)))

    _replay()

    answers = list(ReplayAnswer.objects.values())
    assert answers and key not in json.dumps(answers, default=str)
    if where == "reasons":
        assert {a["criteria"]["reasons"] for a in answers} == {WITHHELD}
    else:
        assert {a["error"] for a in answers} == {
            f"invalid model output after one retry: {WITHHELD}"
        }
