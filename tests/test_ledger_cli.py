"""The real ``karani`` console script, run from another directory on a fresh SQLite ledger.

Every test gets its own KARANI_DATA_DIR (a copy of one migrated ledger, so migrate runs once
per module) and runs from a directory that is not the repository.
"""

import json
import shutil
import subprocess
import sys

import pytest
from django.db import connection
from ledger_helpers import KARANI, REPO, child_env, karani, one_line_error

# These children run on their own SQLite file ledgers whatever the suite's ledger is, so the
# PostgreSQL pass of scripts/test would only repeat them (about a minute of process starts).
pytestmark = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="console-script specs run in the SQLite pass"
)

RESULT_FIELDS = {"id", "text", "kind", "company", "score", "ref", "created_at", "last_seen_at"}


@pytest.fixture
def ledger(migrated_ledger, tmp_path):
    """(cwd, env) for a karani run against a fresh, migrated, empty ledger."""
    data = tmp_path / "data"
    shutil.copytree(migrated_ledger, data)
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    return cwd, child_env(DATABASE_URL=None, KARANI_DATA_DIR=str(data), KARANI_MEMORY=None)


def ok(ledger, *args: str, stdin: str | None = None) -> str:
    cwd, env = ledger
    proc = karani(*args, cwd=cwd, env=env, stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stdout


def ok_json(ledger, *args: str):
    return json.loads(ok(ledger, *args, "--json"))


def test_it_runs_from_any_directory_against_the_data_dir(ledger):
    cwd, _ = ledger
    first = ok_json(ledger, "remember", "Prefers remote teams", "--company", "Acme", "--ref", "q:1")
    assert first == {"id": 1, "created": True, "seen_count": 1}
    assert ok_json(ledger, "remember", "PREFERS remote teams", "--company", " acme") == {
        "id": 1,
        "created": False,
        "seen_count": 2,
    }
    assert not list(cwd.iterdir())  # nothing lands in the working directory
    body = ok_json(ledger, "recall", "remote", "--company", "ACME")
    assert (body["mode"], body["fallback"]) == ("basic", False)
    (hit,) = body["results"]
    assert set(hit) == RESULT_FIELDS
    assert (hit["id"], hit["text"], hit["company"], hit["ref"], hit["score"]) == (
        1,
        "Prefers remote teams",
        "Acme",
        "q:1",
        1.0,
    )


def test_manage_py_and_karani_are_the_same_commands(ledger):
    cwd, env = ledger
    ok_json(ledger, "remember", "Written by karani")
    proc = subprocess.run(
        [sys.executable, str(REPO / "manage.py"), "recall", "karani", "--json"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert [r["text"] for r in json.loads(proc.stdout)["results"]] == ["Written by karani"]


def test_it_prints_a_readable_recall_table(ledger):
    ok(ledger, "remember", "Zürich office has a rooftop", "--kind", "note")
    out = ok(ledger, "recall", "zürich")
    assert "recall · mode basic" in out
    assert "Zürich office has a rooftop" in out
    assert ok(ledger, "recall", "zeppelins").rstrip().endswith("no matching facts")


def test_it_lists_every_standing_preference(ledger):
    ok(ledger, "remember", "Two office days a week is my limit", "--kind", "preference")
    ok(ledger, "remember", "Acme pays well", "--company", "Acme", "--kind", "preference")
    ok(ledger, "remember", "I hold no clearance")

    out = ok(ledger, "list", "--kind", "preference", "--global")
    lines = ok(ledger, "list", "--json").splitlines()

    assert out == "1\tpreference\t-\tTwo office days a week is my limit\n"
    assert [json.loads(line)["id"] for line in lines] == [3, 2, 1]


def test_it_forgets_and_corrects(ledger):
    ok_json(ledger, "remember", "Prefers remote")
    ok_json(ledger, "remember", "Dislikes long loops")
    assert ok(ledger, "correct", "1", "Prefers hybrid", "--reason", "changed") == (
        "corrected fact 1: fact 3 supersedes it\n"
    )
    assert ok(ledger, "forget", "2", "--reason", "not true") == "forgot fact 2\n"
    body = ok_json(ledger, "recall", "prefers loops hybrid remote", "--limit", "100")
    assert [r["id"] for r in body["results"]] == [3]
    records = [json.loads(line) for line in ok(ledger, "export").splitlines()]
    assert [(r["id"], r["deleted_at"] is not None, r["supersedes"]) for r in records] == [
        (1, True, None),
        (2, True, None),
        (3, False, 1),
    ]
    assert (records[0]["delete_reason"], records[1]["delete_reason"]) == ("changed", "not true")


def test_it_imports_a_file_reporting_rejects_without_stopping(ledger, tmp_path):
    path = tmp_path / "facts.jsonl"
    path.write_bytes(
        b'{"text": "Prefers remote", "company": "Acme"}\n'
        b"{broken\n"
        b'{"text": "my password is hunter22"}\n'
        b'{"text": "x", "kind": "opinion"}\n'
        b'{"text": "prefers remote", "company": "ACME"}\n'
        b'{"text": "Likes Rust"}\n'
    )
    cwd, env = ledger
    proc = karani("import", str(path), cwd=cwd, env=env)
    # The report is printed and the good lines are in, but a script must notice the rejects.
    assert proc.returncode == 1
    assert proc.stdout == "created 2, touched 1, rejected 3\n"
    assert proc.stderr.splitlines()[-1] == (
        "karani: 3 lines rejected, the rest imported (--allow-partial accepts a partial import)"
    )
    assert [line.split(":")[0] for line in proc.stderr.splitlines()[:-1]] == [
        "line 2",
        "line 3",
        "line 4",
    ]
    assert "Secret Keyword" in proc.stderr
    again = ok_json(ledger, "import", str(path), "--allow-partial")
    assert (again["touched"], again["rejected"]) == (3, 3)


def _build_history(ledger, tmp_path) -> int:
    """A ledger with touches, scopes, refs, fit scores, unicode, deletions and a chain."""
    seed = tmp_path / "seed.jsonl"
    seed.write_text(
        "\n".join(
            json.dumps(r, ensure_ascii=False)
            for r in [
                {"text": "Fit for the platform role", "fit_score": 81, "source": "verdict"},
                {"text": "Liked the Zürich office", "company": "Northwind Robotics"},
                {"text": "Offer declined", "kind": "outcome", "ref": "qualification:9"},
                {"text": "Old fact", "created_at": "2025-05-05T05:05:05Z"},
            ]
        ),
        encoding="utf-8",
    )
    ok(ledger, "import", str(seed))
    ok(ledger, "remember", "Liked the Zürich office", "--company", "northwind robotics")
    # Ids from the commands' own answers: a touch may use up a sequence value (an upsert).
    first = ok_json(ledger, "correct", "3", "Offer declined: salary too low", "--reason", "more")
    second = ok_json(ledger, "correct", str(first["id"]), "Offer declined: salary", "--reason", "x")
    ok(ledger, "forget", "4", "--reason", "stale")
    return second["id"]


def test_export_then_restore_reproduces_the_ledger_exactly(ledger, migrated_ledger, tmp_path):
    latest = _build_history(ledger, tmp_path)
    exported = ok(ledger, "export")
    dump = tmp_path / "dump.jsonl"
    dump.write_text(exported, encoding="utf-8")

    empty = tmp_path / "restored"
    shutil.copytree(migrated_ledger, empty)
    other = (ledger[0], {**ledger[1], "KARANI_DATA_DIR": str(empty)})
    assert ok_json(other, "import", str(dump), "--restore") == {"restored": 6}
    assert ok(other, "export") == exported
    # The restored ledger is a working one: recall, dedupe and new ids continue.
    body = ok_json(other, "recall", "salary offer", "--limit", "100")
    assert [r["id"] for r in body["results"]] == [latest]
    assert (
        ok_json(other, "remember", "liked the zürich office", "--company", "NORTHWIND ROBOTICS")[
            "seen_count"
        ]
        == 3
    )
    assert ok_json(other, "remember", "A new fact")["id"] > latest


def test_restore_refuses_a_ledger_that_has_facts(ledger, tmp_path):
    ok(ledger, "remember", "Something")
    dump = tmp_path / "dump.jsonl"
    dump.write_text(ok(ledger, "export"), encoding="utf-8")
    cwd, env = ledger
    line = one_line_error(karani("import", str(dump), "--restore", cwd=cwd, env=env))
    assert "restore needs an empty ledger" in line
    assert len(ok(ledger, "export").splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "env_overrides", "expected"),
    [
        (["remember"], {}, "the following arguments are required: text"),
        (["remember", "x", "--bogus"], {}, "unrecognized arguments: --bogus"),
        (["remember", "x", "--kind", "opinion"], {}, "unknown kind 'opinion'"),
        (["remember", "password=hunter22"], {}, "credential (Secret Keyword)"),
        (["remember", "   "], {}, "text is empty"),
        (["forget", "5"], {}, "the following arguments are required: --reason"),
        (["forget", "abc", "--reason", "r"], {}, "invalid int value: 'abc'"),
        (["forget", "999", "--reason", "r"], {}, "no fact with id 999"),
        (["forget", "-3", "--reason", "r"], {}, "fact id must be a positive whole number"),
        (["correct", "999", "new", "--reason", "r"], {}, "no fact with id 999"),
        (["correct", "1"], {}, "the following arguments are required: text, --reason"),
        (["recall", "x", "--limit", "0"], {}, "limit 0 is outside 1-100"),
        (["recall", "x", "--limit", "many"], {}, "invalid int value: 'many'"),
        (["recall"], {}, "the following arguments are required: query"),
        (["import", "nope.jsonl"], {}, "no such file: nope.jsonl"),
        (["remembr", "x"], {}, "unknown command 'remembr'; did you mean remember?"),
        (["recall", "x"], {"KARANI_MEMORY": "bogus"}, "use one of: off, basic, mem0"),
        (["recall", "x"], {"DATABASE_URL": "bogus://x"}, "DATABASE_URL is not a usable"),
        (
            ["recall", "x"],
            {"DATABASE_URL": "postgresql://postgres@127.0.0.1:1/nope"},
            "database error: connection",
        ),
        (
            ["recall", "x"],
            {"DATABASE_URL": "mysql://u@127.0.0.1/db"},
            "configuration error: Error loading MySQLdb module. Did you install",
        ),
    ],
)
def test_every_error_is_one_line_on_stderr_with_a_non_zero_exit(
    ledger, args, env_overrides, expected
):
    cwd, env = ledger
    proc = karani(*args, cwd=cwd, env={**env, **env_overrides})
    line = one_line_error(proc)
    assert expected in line, line
    assert line.startswith("karani: "), line  # one prefix, whichever stage refused
    assert proc.stdout == ""


def test_a_fresh_data_dir_says_to_migrate(tmp_path):
    env = child_env(DATABASE_URL=None, KARANI_DATA_DIR=str(tmp_path / "new" / "dir"))
    line = one_line_error(karani("recall", "x", cwd=tmp_path, env=env))
    assert "run `karani migrate`" in line


def test_the_console_script_is_the_one_beside_the_interpreter():
    assert KARANI.is_file(), f"{KARANI} missing: run scripts/bootstrap"
