"""import_facts(): same validation and dedupe as remember(), bad records never fatal.

Two write paths: a bulk insert per batch, and a row-by-row fallback taken when the bulk
insert collides with a concurrent writer (IntegrityError). Both must count the same.
"""

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from ledger_helpers import child_env, counts, indexed_words, karani

from memory import selectors, services, transfer
from memory.errors import MemoryInputError
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
    assert "outside 1970-01-01 to a day from now" in rejects[10]
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


# --- one line never wrecks an import (issue 14, item 3) -----------------------------------

IMPOSSIBLE_STAMPS = [
    ("0001-01-01T00:00:00+05:00", "outside 1970-01-01"),  # 1 BC once in UTC
    ("9999-12-31T23:59:59-05:00", "outside 1970-01-01"),  # past year 9999 in UTC
    ("1969-12-31T23:59:59Z", "outside 1970-01-01"),
    ("2024-02-30T00:00:00Z", "not a real date-time"),
    ("2024-01-01T00:00:00+99:00", "not a real date-time"),
    ("2024-01-01T25:00:00", "not a real date-time"),
    ("the first of May", "not an ISO 8601 date-time"),
    (1704067200, "not an ISO 8601 date-time"),
]


@pytest.mark.parametrize(("stamp", "error"), IMPOSSIBLE_STAMPS)
def test_it_reports_an_impossible_timestamp_on_its_line_and_imports_the_rest(stamp, error):
    report = _import(
        {"text": "before the bad line"},
        {"text": "the bad line", "created_at": stamp},
        {"text": "after the bad line", "created_at": "1970-01-01T00:00:00Z"},
        batch_size=1,  # the first line is committed before the bad one is read
    )
    assert (report.created, [n for n, _ in report.rejected]) == (2, [2])
    assert error in report.rejected[0][1]
    assert "\n" not in report.rejected[0][1]
    texts = sorted(Memory.objects.values_list("text", flat=True))
    assert texts == ["after the bad line", "before the bad line"]


def test_it_accepts_a_clock_a_few_hours_ahead():
    ahead = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=3)
    report = _import({"text": "from a fast clock", "created_at": ahead.isoformat()})
    assert report.created == 1
    assert Memory.objects.get().created_at == ahead


def test_it_refuses_a_credential_in_any_field_of_a_line():
    report = _import(
        {"text": "fine", "company": "Acme password=hunter22"},
        {"text": "fine too", "ref": "ghp_1234567890abcdefghijABCDEFGHIJ123456"},
        {"text": "fine three"},
    )
    assert report.created == 1
    assert [(n, "credential" in e) for n, e in sorted(report.rejected)] == [(1, True), (2, True)]


# --- restore refuses impossible history ---------------------------------------------------


def _export_of(*facts: dict) -> list[tuple[int, dict]]:
    base = {
        "kind": "note",
        "company": None,
        "source": "teach",
        "fit_score": None,
        "ref": None,
        "created_at": "2026-01-01T00:00:00+00:00",
        "last_seen_at": "2026-01-02T00:00:00+00:00",
        "seen_count": 1,
        "created_by": "cli",
        "deleted_at": None,
        "delete_reason": "",
        "deleted_by": "",
        "supersedes": None,
    }
    return [(n, {**base, **fact}) for n, fact in enumerate(facts, start=1)]


GONE = {"deleted_at": "2026-01-03T00:00:00+00:00", "delete_reason": "newer", "deleted_by": "cli"}


def _planner_rows(*, forget: bool = False) -> float:
    with connection.cursor() as cursor:
        if forget:  # as a freshly created table has it
            cursor.execute("UPDATE pg_class SET reltuples = -1 WHERE relname = 'memories'")
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = 'memories'")
        return cursor.fetchone()[0]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's planner statistics")
def test_an_import_leaves_the_planner_statistics_of_what_it_loaded():
    # Without them the planner takes "deleted_at IS NULL" for a few rows and fetches facts by
    # id through that index over the whole ledger (docs/operations.md).
    assert _planner_rows(forget=True) == -1
    assert _import(*({"text": f"Imported fact number {n}"} for n in range(40))).created == 40
    assert _planner_rows() == Memory.all_objects.count() == 40

    _planner_rows(forget=True)
    _import({"text": "Imported fact number 1"})  # a touch only: nothing new to count
    assert _planner_rows() == -1


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's planner statistics")
def test_a_restore_leaves_the_planner_statistics_of_what_it_loaded():
    _planner_rows(forget=True)
    services.restore_facts(records=_export_of({"id": 1, "text": "Prefers remote"}))
    assert _planner_rows() == 1


def test_restore_loads_a_real_chain():
    records = _export_of(
        {"id": 1, "text": "Prefers hybrid", **GONE},
        {"id": 2, "text": "Prefers remote", "supersedes": 1},
    )
    assert services.restore_facts(records=records) == 2
    assert Memory.objects.get().supersedes_id == 1


@pytest.mark.parametrize(
    ("facts", "error"),
    [
        (
            [{"id": 1, "text": "Prefers hybrid"}, {"id": 2, "text": "Remote", "supersedes": 1}],
            "line 2: supersedes 1, which is still live",
        ),
        ([{"id": 3, "text": "Loop", "supersedes": 3}], "line 1: supersedes 3, which is not older"),
        (
            [{"id": 1, "text": "Old", "supersedes": 2, **GONE}, {"id": 2, "text": "New"}],
            "line 1: supersedes 2, which is not older than 1",
        ),
        ([{"id": 1, "text": "Bad \x1b[2J"}], "line 1: text contains a control character U+001B"),
        (
            [{"id": 1, "text": "x", "created_by": "cli\x00"}],
            "line 1: created_by contains a control character U+0000",
        ),
        (
            [{"id": 1, "text": "x", **GONE, "delete_reason": "bad\x07"}],
            "line 1: delete_reason contains a control character U+0007",
        ),
        (
            [{"id": 1, "text": "x", **GONE, "delete_reason": "token=abcd1234efgh5678"}],
            "line 1: refused: delete_reason looks like it contains a credential",
        ),
        (
            [{"id": 1, "text": "x", "company": "Acme password=hunter22"}],
            "line 1: refused: company looks like",
        ),
        ([{"id": 1, "text": "x", "seen_count": 2**31}], "line 1: seen_count must be a whole"),
        ([{"id": 2**63, "text": "x"}], "line 1: id must be a whole number"),
        ([{"id": 1, "text": "x", "seen_count": 0}], "line 1: seen_count must be a whole"),
        (
            [{"id": 1, "text": "x", "created_at": "0001-01-01T00:00:00+05:00"}],
            "line 1: created_at '0001-01-01T00:00:00+05:00' is outside",
        ),
        (
            [{"id": 1, "text": "x", "last_seen_at": "2024-02-30T00:00:00Z"}],
            "line 1: last_seen_at '2024-02-30T00:00:00Z' is not a real date-time",
        ),
    ],
)
def test_restore_refuses_impossible_history_naming_the_line(facts, error):
    before = counts()
    with pytest.raises(MemoryInputError) as caught:
        services.restore_facts(records=_export_of(*facts))
    assert str(caught.value).startswith(error), str(caught.value)
    assert counts() == before


# --- through the console script, where the issue found them -------------------------------

console = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="console-script specs run in the SQLite pass"
)


@pytest.fixture
def child(tmp_path):
    """(cwd, env) of a migrated SQLite ledger for ``karani`` runs."""
    env = child_env(DATABASE_URL=None, KARANI_DATA_DIR=str(tmp_path / "data"), KARANI_MEMORY=None)
    assert karani("migrate", "-v0", cwd=tmp_path, env=env).returncode == 0
    return tmp_path, env


def _jsonl(path, *lines: str):
    path.write_text("".join(line + "\n" for line in lines))
    return path


@console
def test_the_console_import_reports_impossible_stamps_as_lines_and_imports_the_rest(child):
    cwd, env = child
    path = _jsonl(
        cwd / "facts.jsonl",
        json.dumps({"text": "good one"}),
        json.dumps({"text": "year one", "created_at": "0001-01-01T00:00:00+05:00"}),
        json.dumps({"text": "leap", "created_at": "2024-02-30T00:00:00Z"}),
        json.dumps({"text": "offset", "created_at": "2024-01-01T00:00:00+99:00"}),
        json.dumps({"text": "good two", "created_at": "2020-05-01T12:00:00Z"}),
    )
    proc = karani("import", str(path), "--json", cwd=cwd, env=env)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    report = json.loads(proc.stdout)
    assert (report["created"], [r["line"] for r in report["rejects"]]) == (2, [2, 3, 4])
    # And the ledger stays readable end to end: export writes every row.
    out = karani("export", cwd=cwd, env=env)
    assert out.returncode == 0, out.stderr
    assert sorted(json.loads(line)["text"] for line in out.stdout.splitlines()) == [
        "good one",
        "good two",
    ]


@console
def test_the_console_import_reports_a_deeply_nested_line_and_imports_the_rest(child):
    cwd, env = child
    deep = '{"text": ' + "[" * 5000 + "]" * 5000 + "}"
    path = _jsonl(cwd / "deep.jsonl", json.dumps({"text": "good one"}), deep, '{"text": "two"}')
    proc = karani("import", str(path), "--json", cwd=cwd, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr[-300:]
    report = json.loads(proc.stdout)
    assert (report["created"], [r["line"] for r in report["rejects"]]) == (2, [2])
