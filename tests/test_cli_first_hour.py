"""Issue 15: what a new user trips over in the ``karani`` console script, run for real."""

import json
import shutil
import subprocess
from importlib import metadata

import pytest
from django.db import connection
from ledger_helpers import KARANI, child_env, karani, one_line_error

# Children run on their own SQLite file ledgers whatever the suite's database is.
pytestmark = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="console-script specs run in the SQLite pass"
)


@pytest.fixture
def ledger(migrated_ledger, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(migrated_ledger, data)
    return tmp_path, child_env(DATABASE_URL=None, KARANI_DATA_DIR=str(data), KARANI_MEMORY=None)


def run(ledger, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    cwd, env = ledger
    return karani(*args, cwd=cwd, env=env, stdin=stdin)


def test_version_is_karanis(ledger):
    proc = run(ledger, "--version")
    assert (proc.returncode, proc.stdout) == (0, f"karani {metadata.version('karani')}\n")


@pytest.mark.parametrize("args", [[], ["--help"], ["-h"], ["help"]])
def test_help_lists_karanis_own_commands_in_groups(ledger, args):
    proc = run(ledger, *args)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for heading in ("Memory:", "Health and the semantic index:", "Serving:", "Qualify:"):
        assert f"\n{heading}\n" in out
    for command in ("remember", "recall", "correct", "forget", "import", "export", "doctor"):
        assert f"\n  {command} " in out
    for django_only in ("startapp", "compilemessages", "makemessages", "sendtestemail"):
        assert django_only not in out
    assert "karani django help" in out


def test_djangos_commands_are_under_karani_django(ledger):
    listing = run(ledger, "django", "help")
    assert listing.returncode == 0 and "startapp" in listing.stdout
    check = run(ledger, "django", "check")
    assert check.returncode == 0, check.stderr
    assert "System check identified no issues" in check.stdout


def test_export_to_a_missing_directory_is_one_line(ledger, tmp_path):
    run(ledger, "remember", "Prefers remote teams")
    proc = run(ledger, "export", "-o", "/nonexistent/dir/x.jsonl")
    line = one_line_error(proc)
    assert "cannot write /nonexistent/dir/x.jsonl: No such file or directory" in line


def test_export_to_a_file_leaves_no_partial_file(ledger, tmp_path):
    run(ledger, "remember", "Prefers remote teams")
    target = tmp_path / "out" / "dump.jsonl"
    target.parent.mkdir()
    proc = run(ledger, "export", "-o", str(target))
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(x)["text"] for x in target.read_text().splitlines()] == [
        "Prefers remote teams"
    ]
    assert sorted(p.name for p in target.parent.iterdir()) == ["dump.jsonl"]


def test_export_into_head_exits_quietly(ledger, tmp_path):
    # Enough rows that the export outlives the pipe's buffer after head has gone.
    facts = tmp_path / "many.jsonl"
    facts.write_text(
        "".join(json.dumps({"text": f"Fact number {n} about teams"}) + "\n" for n in range(3000))
    )
    assert run(ledger, "import", str(facts)).returncode == 0
    cwd, env = ledger
    proc = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {KARANI} export | head -1"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.stderr == ""
    assert json.loads(proc.stdout)["text"] == "Fact number 0 about teams"
    # Quiet, but not a success: a backup piped into a reader that died must not look complete.
    assert proc.returncode == 141


def test_remember_dash_reads_standard_input(ledger):
    proc = run(ledger, "remember", "-", "--json", stdin="Prefers async teams\n")
    assert proc.returncode == 0, proc.stderr
    recalled = json.loads(run(ledger, "recall", "async", "--json").stdout)["results"]
    assert [r["text"] for r in recalled] == ["Prefers async teams"]


def test_remember_dash_with_nothing_on_standard_input_is_refused(ledger):
    line = one_line_error(run(ledger, "remember", "-", stdin=""))
    assert "text is empty" in line
    assert json.loads(run(ledger, "export").stdout or "null") is None


def test_a_stopword_only_recall_says_so(ledger):
    run(ledger, "remember", "The office is in Berlin")
    proc = run(ledger, "recall", "the and of")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("no matching facts: every word of 'the and of' is a stopword")
    normal = run(ledger, "recall", "zeppelins")
    assert normal.stdout.rstrip().endswith("no matching facts")
    assert "stopword" not in normal.stdout


def test_the_readmes_api_token_flow_works_on_a_fresh_ledger(ledger):
    # README: `karani api-token bot --create-user --writer`, then `$(karani api-token bot)`.
    made = run(ledger, "api-token", "bot", "--create-user", "--writer")
    assert made.returncode == 0, made.stderr
    again = run(ledger, "api-token", "bot")
    assert again.returncode == 0 and again.stdout == made.stdout
    assert len(made.stdout.strip()) == 40
    missing = one_line_error(run(ledger, "api-token", "alice"))
    assert "no user 'alice'; add --create-user to create one" in missing
