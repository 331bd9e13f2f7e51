"""The management commands through call_command: output shapes, human output, errors.

The same commands through the real ``karani`` console script are in test_ledger_cli.py.
"""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from ledger_helpers import counts

from memory import selectors, services
from memory.models import Memory
from memory.transfer import EXPORT_FIELDS

pytestmark = pytest.mark.django_db

RESULT_FIELDS = {"id", "text", "kind", "company", "score", "ref", "created_at", "last_seen_at"}


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def run_json(*args: str):
    out, _ = run(*args, "--json")
    return json.loads(out)


def refused(*args: str) -> str:
    with pytest.raises(CommandError) as caught:
        run(*args)
    message = str(caught.value)
    assert "\n" not in message and message
    return message


# --- remember -----------------------------------------------------------------------------


def test_remember_prints_id_created_and_seen_count_as_json():
    first = run_json("remember", "Prefers remote", "--kind", "preference", "--company", "Acme")
    assert first == {"id": first["id"], "created": True, "seen_count": 1}
    again = run_json("remember", "prefers REMOTE", "--kind", "preference", "--company", "acme")
    assert again == {"id": first["id"], "created": False, "seen_count": 2}
    row = Memory.objects.get(pk=first["id"])
    assert (row.kind, row.company, row.source) == ("preference", "Acme", "teach")


def test_remember_stores_the_ref():
    created = run_json("remember", "Interviewed", "--ref", "qualification:12")
    assert Memory.objects.get(pk=created["id"]).ref == "qualification:12"


def test_remember_says_what_happened_in_plain_words():
    out, _ = run("remember", "Prefers remote")
    fact_id = Memory.objects.get().pk
    assert out == f"remembered fact {fact_id}\n"
    out, _ = run("remember", "Prefers remote")
    assert out == f"already known: fact {fact_id}, seen 2 times\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["  "], "text is empty"),
        (["x", "--kind", "opinion"], "unknown kind 'opinion'"),
        (["x", "--company", " "], "company name is empty"),
        (["password=hunter22"], "credential (Secret Keyword)"),
        (["x" * 2001], "limit is 2000"),
    ],
)
def test_remember_refuses_bad_input_in_one_line_writing_nothing(args, message):
    before = counts()
    assert message in refused("remember", *args)
    assert counts() == before


# --- recall -------------------------------------------------------------------------------


@pytest.fixture
def small_ledger():
    return {
        "acme": services.remember(
            text="Acme pays above market", company="Acme", ref="qualification:1"
        ).id,
        "global": services.remember(text="Prefers remote platform teams").id,
        "globex": services.remember(text="Globex platform is legacy", company="Globex").id,
    }


def test_recall_prints_the_issue_json_shape(small_ledger):
    body = run_json("recall", "platform", "--company", "Globex")
    assert set(body) == {"mode", "fallback", "results"}
    assert (body["mode"], body["fallback"]) == ("basic", False)
    assert [r["id"] for r in body["results"]] == [small_ledger["globex"], small_ledger["global"]]
    for result in body["results"]:
        assert set(result) == RESULT_FIELDS
    top = body["results"][0]
    assert (top["text"], top["kind"], top["company"], top["score"], top["ref"]) == (
        "Globex platform is legacy",
        "note",
        "Globex",
        1.0,
        None,
    )
    row = Memory.objects.get(pk=top["id"])
    assert top["created_at"] == row.created_at.isoformat()
    assert top["last_seen_at"] == row.last_seen_at.isoformat()


def test_recall_honours_the_limit(small_ledger):
    assert len(run_json("recall", "platform", "--limit", "1")["results"]) == 1


def test_recall_prints_a_readable_table_by_default(small_ledger):
    out, _ = run("recall", "acme market")
    lines = out.splitlines()
    assert "recall · mode basic" in lines[0]
    header = next(line for line in lines if "score" in line)
    for column in ("id", "score", "kind", "company", "text", "last seen"):
        assert column in header
    assert any("Acme pays above market" in line and "Acme" in line for line in lines)
    assert "Prefers remote" not in out


def test_recall_says_so_when_nothing_matches(small_ledger):
    out, _ = run("recall", "kubernetes")
    assert out.rstrip().endswith("no matching facts")
    assert run_json("recall", "kubernetes")["results"] == []


def test_recall_reports_mode_off_with_no_results(small_ledger, settings):
    settings.KARANI_MEMORY = "off"
    assert run_json("recall", "platform") == {"mode": "off", "fallback": False, "results": []}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["x", "--limit", "0"], "limit 0 is outside 1-100"),
        (["x", "--limit", "101"], "limit 101 is outside 1-100"),
        (["x", "--company", ""], "company name is empty"),
        ([""], "query is empty"),
    ],
)
def test_recall_refuses_bad_input_in_one_line(small_ledger, args, message):
    assert message in refused("recall", *args)


# --- forget and correct -------------------------------------------------------------------


def test_forget_soft_deletes_with_the_reason(small_ledger):
    out, _ = run("forget", str(small_ledger["acme"]), "--reason", "wrong company")
    assert out == f"forgot fact {small_ledger['acme']}\n"
    row = Memory.all_objects.get(pk=small_ledger["acme"])
    assert (row.delete_reason, row.deleted_by) == ("wrong company", "cli")
    assert run_json("forget", str(small_ledger["global"]), "--reason", "r") == {
        "id": small_ledger["global"],
        "deleted": True,
    }


def test_forget_refuses_unknown_deleted_and_reasonless_facts(small_ledger):
    assert refused("forget", "999999", "--reason", "r") == "no fact with id 999999"
    assert "a reason is required" in refused("forget", str(small_ledger["acme"]), "--reason", " ")
    run("forget", str(small_ledger["acme"]), "--reason", "first")
    assert "already deleted" in refused("forget", str(small_ledger["acme"]), "--reason", "again")
    assert "positive whole number" in refused("forget", "0", "--reason", "r")


def test_correct_says_which_fact_supersedes_which(small_ledger):
    out, _ = run("correct", str(small_ledger["acme"]), "Acme pays at market", "--reason", "fixed")
    new = Memory.objects.get(supersedes_id=small_ledger["acme"])
    assert out == f"corrected fact {small_ledger['acme']}: fact {new.pk} supersedes it\n"
    assert new.text == "Acme pays at market" and new.company == "Acme"
    again = run_json("correct", str(new.pk), "Acme pays below market", "--reason", "again")
    assert again == {"id": again["id"], "supersedes": new.pk, "changed": True}
    assert Memory.objects.get(pk=again["id"]).supersedes_id == new.pk
    # The same text again (as stored: trimmed) changes nothing and says so.
    before = Memory.all_objects.count()
    same = run_json("correct", str(again["id"]), " Acme pays below market ", "--reason", "x")
    assert same == {"id": again["id"], "supersedes": None, "changed": False}
    out, _ = run("correct", str(again["id"]), "Acme pays below market", "--reason", "x")
    assert out == f"fact {again['id']} already says that; nothing changed\n"
    assert Memory.all_objects.count() == before


def test_correct_refuses_bad_input_in_one_line_changing_nothing(small_ledger):
    before = counts()
    fact = str(small_ledger["acme"])
    assert refused("correct", "424242", "new text", "--reason", "r") == "no fact with id 424242"
    assert "a reason is required" in refused("correct", fact, "new text", "--reason", "")
    assert "Secret Keyword" in refused("correct", fact, "password: hunter22", "--reason", "r")
    assert counts() == before


# --- import -------------------------------------------------------------------------------


@pytest.fixture
def jsonl(tmp_path):
    def write(lines: list, name: str = "facts.jsonl"):
        path = tmp_path / name
        with path.open("wb") as handle:
            for line in lines:
                if isinstance(line, bytes):
                    handle.write(line + b"\n")
                elif isinstance(line, str):
                    handle.write(line.encode() + b"\n")
                else:
                    handle.write(json.dumps(line).encode() + b"\n")
        return path

    return write


def test_import_reports_created_touched_and_rejected_lines_and_keeps_going(jsonl):
    services.remember(text="Already known")
    path = jsonl(
        [
            {"text": "Prefers remote", "kind": "preference", "company": "Acme", "ref": "q:1"},
            "{not json",
            {"text": "password=hunter22"},
            {"text": "Likes Rust", "kind": "opinion"},
            b"\xff\xfe not utf-8",
            "",
            {"text": "already KNOWN"},
            {"text": "prefers remote", "kind": "preference", "company": "ACME"},
            {"text": "Got an offer", "kind": "outcome", "created_at": "2026-01-02T03:04:05Z"},
        ]
    )
    out, err = run("import", str(path), "--allow-partial")
    assert out == "created 2, touched 2, rejected 4\n"
    assert err.splitlines() == [
        "line 2: not valid JSON (Expecting property name enclosed in double quotes)",
        "line 3: refused: text looks like it contains a credential (Secret Keyword); "
        "nothing was stored",
        "line 4: unknown kind 'opinion'; use one of: preference, outcome, question, note",
        "line 5: not UTF-8 text",
    ]
    assert sorted(Memory.objects.values_list("text", "seen_count")) == [
        ("Already known", 2),
        ("Got an offer", 1),
        ("Prefers remote", 2),
    ]


def test_import_prints_json_with_every_reject(jsonl):
    path = jsonl([{"text": "ok"}, "[1, 2]", {"text": ""}])
    assert run_json("import", str(path), "--allow-partial") == {
        "created": 1,
        "touched": 0,
        "rejected": 2,
        "rejects": [
            {"line": 2, "error": "each line must be a JSON object"},
            {"line": 3, "error": "text is empty"},
        ],
    }


def test_import_fails_when_lines_were_rejected_after_printing_the_report(jsonl):
    path = jsonl([{"text": "Good line"}, "{broken", {"text": "Another good line"}])
    out, err = StringIO(), StringIO()
    with pytest.raises(CommandError) as caught:
        call_command("import", str(path), stdout=out, stderr=err)
    assert str(caught.value) == (
        "1 line rejected, the rest imported (--allow-partial accepts a partial import)"
    )
    assert out.getvalue() == "created 2, touched 0, rejected 1\n"
    assert err.getvalue().startswith("line 2: not valid JSON")
    assert Memory.objects.count() == 2


def test_import_accepts_a_utf8_bom_on_the_first_line(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"text": "Zürich office"}).encode() + b"\n")
    assert run_json("import", str(path))["created"] == 1


def test_import_refuses_a_missing_file(tmp_path):
    assert refused("import", str(tmp_path / "nope.jsonl")).startswith("no such file")


# --- export and restore -------------------------------------------------------------------


def test_export_writes_every_row_deleted_ones_included(small_ledger):
    services.forget(id=small_ledger["acme"], reason="gone")
    new = services.correct(id=small_ledger["global"], text="Prefers hybrid teams", reason="r")
    out, _ = run("export")
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in records] == sorted(Memory.all_objects.values_list("pk", flat=True))
    by_id = {r["id"]: r for r in records}
    assert by_id[small_ledger["acme"]]["delete_reason"] == "gone"
    assert by_id[small_ledger["acme"]]["deleted_at"] is not None
    assert by_id[new.pk]["supersedes"] == small_ledger["global"]
    assert set(by_id[new.pk]) == set(EXPORT_FIELDS)


def test_export_writes_to_a_file(small_ledger, tmp_path):
    target = tmp_path / "ledger.jsonl"
    out, err = run("export", "-o", str(target))
    assert out == ""
    assert err == f"exported 3 facts to {target}\n"
    assert len(target.read_text().splitlines()) == 3


def test_restore_refuses_a_ledger_that_already_has_facts(small_ledger, tmp_path):
    target = tmp_path / "ledger.jsonl"
    run("export", "-o", str(target))
    before = counts()
    assert "restore needs an empty ledger" in refused("import", str(target), "--restore")
    assert counts() == before


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda r: r.pop("seen_count"), "line 1: not an export record"),
        (lambda r: r.update(id=1), "line 2: id 1 already appears on line 1"),
        (lambda r: r.update(supersedes=77), "line 1: supersedes 77, which is not in the file"),
        (lambda r: r.update(supersedes="1"), "line 1: supersedes must be a fact id or null"),
        (lambda r: r.update(deleted_at="2026-01-01T00:00:00"), "line 1: a deleted row needs"),
        (lambda r: r.update(delete_reason=5), "line 1: delete_reason must be a string"),
        (lambda r: r.update(created_at="soon"), "line 1: created_at 'soon' is not an ISO"),
        (lambda r: r.update(text="token=abcd1234efgh5678"), "line 1: refused"),
    ],
)
def test_restore_refuses_a_bad_file_naming_the_line(jsonl, mutate, message):
    first = {
        "id": 1,
        "text": "A",
        "kind": "note",
        "company": None,
        "source": "teach",
        "fit_score": None,
        "ref": None,
        "created_at": "2026-01-01T00:00:00+00:00",
        "last_seen_at": "2026-01-01T00:00:00+00:00",
        "seen_count": 1,
        "created_by": "",
        "deleted_at": None,
        "delete_reason": "",
        "deleted_by": "",
        "supersedes": None,
    }
    second = {**first, "id": 2, "text": "B"}
    target = second if message.startswith("line 2") else first
    mutate(target)
    before = counts()
    assert refused("import", str(jsonl([first, second])), "--restore").startswith(message)
    assert counts() == before


def test_restore_refuses_two_live_copies_of_one_fact(jsonl):
    row = {
        "id": 1,
        "text": "A",
        "kind": "note",
        "company": None,
        "source": "teach",
        "fit_score": None,
        "ref": None,
        "created_at": "2026-01-01T00:00:00",
        "last_seen_at": "2026-01-01T00:00:00",
        "seen_count": 1,
        "created_by": "",
        "deleted_at": None,
        "delete_reason": "",
        "deleted_by": "",
        "supersedes": None,
    }
    path = jsonl([row, {**row, "id": 2, "text": " a "}])
    assert refused("import", str(path), "--restore") == (
        "line 2: a second live copy of the same fact"
    )
    assert not any(counts().values())


def test_restore_refuses_a_fact_superseded_twice(jsonl):
    row = {
        "id": 1,
        "text": "A",
        "kind": "note",
        "company": None,
        "source": "teach",
        "fit_score": None,
        "ref": None,
        "created_at": "2026-01-01T00:00:00",
        "last_seen_at": "2026-01-01T00:00:00",
        "seen_count": 1,
        "created_by": "",
        "deleted_at": "2026-01-02T00:00:00",
        "delete_reason": "corrected",
        "deleted_by": "",
        "supersedes": None,
    }
    path = jsonl(
        [
            row,
            {**row, "id": 2, "text": "B", "supersedes": 1},
            {**row, "id": 3, "text": "C", "supersedes": 1, "deleted_at": None},
        ]
    )
    assert refused("import", str(path), "--restore") == (
        "line 3: supersedes 1, which another row already supersedes"
    )
    assert not any(counts().values())


def test_restore_loads_naive_timestamps_as_utc(jsonl):
    row = {
        "id": 5,
        "text": "Naive stamps",
        "kind": "note",
        "company": None,
        "source": "teach",
        "fit_score": None,
        "ref": None,
        "created_at": "2026-01-01T00:00:00",
        "last_seen_at": "2026-01-02T00:00:00",
        "seen_count": 3,
        "created_by": "",
        "deleted_at": None,
        "delete_reason": "",
        "deleted_by": "",
        "supersedes": None,
    }
    assert run_json("import", str(jsonl([row])), "--restore") == {"restored": 1}
    restored = Memory.objects.get(pk=5)
    assert restored.created_at.isoformat() == "2026-01-01T00:00:00+00:00"
    assert restored.seen_count == 3
    # Restored facts are recallable and new ids continue after the restored ones.
    assert [r.id for r in selectors.recall(query="naive").results] == [5]
    assert services.remember(text="After restore").id > 5
