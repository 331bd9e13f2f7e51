"""import_facts(): same validation and dedupe as remember(), bad records never fatal.

Two write paths: a bulk insert per batch, and a row-by-row fallback taken when the bulk
insert collides with a concurrent writer (IntegrityError). Both must count the same.
"""

from datetime import UTC, datetime

import pytest
from ledger_helpers import counts, indexed_words

from memory import selectors, services, transfer
from memory.models import Memory

pytestmark = pytest.mark.django_db


def _import(*records, batch_size: int = 500) -> services.ImportReport:
    return services.import_facts(
        records=list(enumerate(records, start=1)), actor="import", batch_size=batch_size
    )


def test_it_creates_facts_with_their_fields():
    report = _import(
        {"text": "Prefers remote", "kind": "preference", "company": " ACME ", "ref": "q:1"},
        {"text": "Got an offer", "kind": "outcome", "created_at": "2026-03-01T09:30:00Z"},
        {"text": "Fit noted", "fit_score": 55, "source": "verdict"},
    )
    assert report.to_dict() == {"created": 3, "touched": 0, "rejected": 0, "rejects": []}
    rows = {m.text: m for m in Memory.objects.all()}
    assert (rows["Prefers remote"].kind, rows["Prefers remote"].company_key) == (
        "preference",
        "acme",
    )
    assert rows["Prefers remote"].ref == "q:1"
    assert rows["Prefers remote"].source == "import"
    assert rows["Prefers remote"].created_by == "import"
    assert rows["Got an offer"].created_at == datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
    assert (rows["Fit noted"].fit_score, rows["Fit noted"].source) == (55, "verdict")
    # Indexed like any other write.
    assert [r.text for r in selectors.recall(query="offer").results] == ["Got an offer"]


def test_it_touches_lines_that_duplicate_a_live_fact():
    existing = services.remember(text="Prefers remote", company="Acme")
    report = _import({"text": "prefers   REMOTE", "company": "acme"})
    assert (report.created, report.touched) == (0, 1)
    assert Memory.objects.get(pk=existing.id).seen_count == 2
    assert Memory.all_objects.count() == 1


def test_it_touches_duplicate_lines_within_one_file():
    report = _import(
        {"text": "Prefers remote"}, {"text": "prefers remote"}, {"text": "PREFERS REMOTE"}
    )
    assert (report.created, report.touched) == (1, 2)
    assert Memory.objects.get().seen_count == 3


def test_it_dedupes_across_batches():
    report = _import(*[{"text": f"fact {i % 3}"} for i in range(9)], batch_size=2)
    assert (report.created, report.touched) == (3, 6)
    assert sorted(Memory.objects.values_list("seen_count", flat=True)) == [3, 3, 3]


def test_it_creates_a_new_row_when_the_only_twin_is_deleted():
    old = services.remember(text="Prefers remote")
    services.forget(id=old.id, reason="changed")
    report = _import({"text": "Prefers remote"}, {"text": "Prefers remote"})
    assert (report.created, report.touched) == (1, 1)
    live = Memory.objects.get()
    assert live.pk != old.id and live.seen_count == 2
    assert Memory.all_objects.get(pk=old.id).seen_count == 1


def test_it_rejects_bad_records_with_their_line_numbers_and_keeps_the_rest():
    report = _import(
        {"text": "good one"},
        "not an object",
        {"text": ""},
        {"text": "good two", "kind": "opinion"},
        {"kind": "note"},
        {"text": "good three", "colour": "red"},
        {"text": "token=abcd1234efgh5678"},
        {"text": "good four", "fit_score": 101},
        {"text": "good five", "created_at": "yesterday"},
        {"text": "good six", "created_at": "2999-01-01T00:00:00Z"},
        {"text": "good seven", "company": "  "},
        {"text": "good eight"},
    )
    assert (report.created, report.touched) == (2, 0)
    rejects = dict(report.rejected)
    assert sorted(rejects) == [2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
    assert rejects[2] == "each line must be a JSON object"
    assert rejects[3] == "text is empty"
    assert "unknown kind 'opinion'" in rejects[4]
    assert rejects[5] == "text is missing"
    assert rejects[6] == "unknown field(s): colour"
    assert "Secret Keyword" in rejects[7]
    assert "fit score 101" in rejects[8]
    assert "not an ISO 8601" in rejects[9]
    assert rejects[10] == "created_at is in the future"
    assert "company name is empty" in rejects[11]
    assert sorted(Memory.objects.values_list("text", flat=True)) == ["good eight", "good one"]


def test_it_writes_nothing_for_a_file_of_only_bad_records():
    before = counts()
    report = _import({"text": ""}, {"text": "x", "kind": "nope"})
    assert (report.created, report.touched, len(report.rejected)) == (0, 0, 2)
    assert counts() == before


def _race_after_live_check(monkeypatch, text: str, **kwargs):
    """A concurrent writer commits ``text`` between the batch's live check and its insert."""
    real = transfer._live_twins
    bulk = Memory.all_objects.bulk_create
    calls = {"raced": 0, "bulk": 0}

    def check_then_race(keys):
        live = real(keys)
        if not calls["raced"]:
            calls["raced"] += 1
            services.remember(text=text, **kwargs)
        return live

    def counting_bulk_create(*args, **kw):
        calls["bulk"] += 1
        return bulk(*args, **kw)

    monkeypatch.setattr(transfer, "_live_twins", check_then_race)
    monkeypatch.setattr(Memory.all_objects, "bulk_create", counting_bulk_create)
    return calls


def test_it_falls_back_to_row_by_row_when_a_concurrent_writer_wins(monkeypatch):
    calls = _race_after_live_check(monkeypatch, "Prefers remote")
    report = _import({"text": "Prefers remote"}, {"text": "Likes Rust"})
    assert calls == {"raced": 1, "bulk": 1}  # the bulk insert collided: row by row instead
    assert (report.created, report.touched) == (1, 1)
    assert dict(Memory.objects.values_list("text", "seen_count")) == {
        "Prefers remote": 2,
        "Likes Rust": 1,
    }
    rust = Memory.objects.get(text="Likes Rust")
    assert indexed_words(rust.pk) == {"likes", "rust"}


def test_it_counts_each_touch_once_in_the_fallback(monkeypatch):
    existing = services.remember(text="Already live")
    _race_after_live_check(monkeypatch, "Prefers remote")
    report = _import(
        {"text": "Prefers remote"},
        {"text": "prefers remote"},
        {"text": "Already live"},
        {"text": "Likes Rust"},
        {"text": "likes rust"},
    )
    # Racer wrote "Prefers remote" once; the file touches it twice, "Already live" once,
    # and creates "Likes Rust" then touches it once.
    assert (report.created, report.touched) == (1, 4)
    assert dict(Memory.objects.values_list("text", "seen_count")) == {
        "Prefers remote": 3,
        "Already live": 2,
        "Likes Rust": 2,
    }
    assert Memory.objects.get(pk=existing.id).seen_count == 2


def test_it_rolls_back_only_the_failing_batch(monkeypatch):
    real = transfer._live_twins
    calls = {"n": 0}

    def fail_second_batch(keys):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("injected fault in batch 2")
        return real(keys)

    monkeypatch.setattr(transfer, "_live_twins", fail_second_batch)
    with pytest.raises(RuntimeError, match="injected fault"):
        _import(
            {"text": "batch one a"}, {"text": "batch one b"}, {"text": "batch two a"}, batch_size=2
        )
    # Batch 1 committed; batch 2 left nothing behind.
    assert sorted(Memory.all_objects.values_list("text", flat=True)) == [
        "batch one a",
        "batch one b",
    ]
