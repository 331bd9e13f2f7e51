"""Credentials that got in before the screen knew them: `karani secrets` lists each by table,
id, field and kind without its value and exits 1; `karani secrets --redact` rewrites them in
place, audits it, and afterwards the bytes are in no store: not in the SQLite files, not in a
real pg_dump, not in an export."""

import json
import os
import shutil
import sqlite3
import subprocess
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from ledger_helpers import child_env, karani, one_line_error

from memory import selectors
from memory import text as textmod
from memory.models import Memory, Redaction
from qualify.models import Company, Outcome, Posting, Profile, Qualification

# Fresh random bodies in real shapes: a GitHub token and a password in a German sentence.
TOKEN = "ghp_Q7mZ2xW9rT4kP1vN8bL3cF6hJ0dS5gY2aE7u"
PASSWORD = "Bergwelt58!qx"
PROSE = f"Das Passwort für das Bewerberportal ist {PASSWORD}"


def _plant_fact(**fields) -> Memory:
    """A fact written with the ORM, past the door's screen (as rules before today let in)."""
    text = fields.setdefault("text", "Plain fact")
    fields.setdefault("fact_key", textmod.fact_key(text=text, kind="note", company_key=None))
    return Memory.all_objects.create(**fields)


def _call(*args: str) -> tuple[str, int]:
    out = StringIO()
    try:
        call_command("secrets", *args, stdout=out, stderr=StringIO())
    except CommandError:
        return out.getvalue(), 1
    return out.getvalue(), 0


@pytest.fixture
def planted() -> dict[str, int]:
    live = _plant_fact(text=f"Recruiter pasted {TOKEN} into the chat", ref="note 1")
    gone = _plant_fact(text="Portal login shared by the recruiter")
    Memory.all_objects.filter(pk=gone.pk).update(
        deleted_at="2026-01-01T00:00:00Z", delete_reason=PROSE, deleted_by="cli"
    )
    company = Company.objects.create(name="Initech")
    posting = Posting.objects.create(
        company=company, title="SRE", description=f"Apply with {TOKEN}", dealbreakers=[PROSE]
    )
    Outcome.objects.create(posting=posting, stage="applied", note=PROSE)
    qualification = Qualification.objects.create(
        posting=posting,
        prompt_version="v1",
        verdict="qualified",
        fit_score=80,
        criteria={"reasons": f"use {TOKEN}", "ok": "yes"},
    )
    Profile.objects.create(summary="Staff engineer", preferences=PROSE)
    return {"live": live.pk, "gone": gone.pk, "posting": posting.pk, "q": qualification.pk}


@pytest.mark.django_db(transaction=True)
def test_it_lists_every_planted_credential_without_its_value_and_redacts_them(planted):
    out, code = _call("--json")
    assert code == 1
    assert TOKEN not in out and PASSWORD not in out
    found = {(f["table"], f["id"], f["field"]): f["kinds"] for f in json.loads(out)["flagged"]}
    assert found[("memories", planted["live"], "text")] == ["github-pat"]
    assert found[("memories", planted["gone"], "delete_reason")] == ["Secret Keyword"]
    assert found[("qualify_posting", planted["posting"], "description")] == ["github-pat"]
    assert ("qualify_posting", planted["posting"], "dealbreakers[0]") in found
    assert ("qualify_qualification", planted["q"], "criteria.reasons") in found
    assert any(table == "qualify_outcome" for table, _, _ in found)
    assert any(key[0] == "qualify_profile" and key[2] == "preferences" for key in found)

    out, code = _call("--redact", "--json")
    assert code == 0 and TOKEN not in out and PASSWORD not in out
    assert selectors.stored_credentials() == []
    fact = Memory.all_objects.get(pk=planted["live"])
    assert fact.text == "Recruiter pasted [redacted: github-pat] into the chat"
    assert fact.fact_key == textmod.fact_key(text=fact.text, kind="note", company_key=None)
    assert TOKEN.lower() not in fact.terms
    gone = Memory.all_objects.get(pk=planted["gone"])
    assert gone.delete_reason == (
        "Das Passwort für das Bewerberportal ist [redacted: Secret Keyword]"
    )
    assert Qualification.objects.get(pk=planted["q"]).criteria == {
        "reasons": "use [redacted: github-pat]",
        "ok": "yes",
    }
    (audit,) = Redaction.objects.all()
    assert audit.actor == "cli" and len(audit.items) == len(found)
    assert TOKEN not in json.dumps(audit.items) and PASSWORD not in json.dumps(audit.items)
    # Nothing flagged any more: the listing exits 0.
    assert _call() == ("no stored text holds a credential\n", 0)


@pytest.mark.django_db(transaction=True)
def test_two_facts_that_read_the_same_once_redacted_keep_one_live():
    first = _plant_fact(text=f"Token {TOKEN}")
    other = "ghp_" + TOKEN[4:][::-1]
    second = _plant_fact(text=f"Token {other}")
    assert _call("--redact")[1] == 0
    rows = {m.pk: m for m in Memory.all_objects.filter(pk__in=[first.pk, second.pk])}
    assert {m.text for m in rows.values()} == {"Token [redacted: github-pat]"}
    live = [m for m in rows.values() if m.deleted_at is None]
    assert len(live) == 1
    (dropped,) = [m for m in rows.values() if m.deleted_at is not None]
    assert dropped.delete_reason == f"redacted: the same fact as {live[0].pk}"


def _bytes_anywhere(folder: Path, needle: str) -> list[str]:
    return [p.name for p in folder.iterdir() if p.is_file() and needle.encode() in p.read_bytes()]


def test_after_redact_the_bytes_are_in_no_sqlite_file_and_no_export(migrated_ledger, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(migrated_ledger, data)
    env = child_env(DATABASE_URL=None, KARANI_DATA_DIR=str(data), KARANI_MEMORY=None)
    proc = karani("remember", "Prefers small teams", cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    # Planted with SQL, past the door, the way an older screen would have let it in.
    text = f"Recruiter pasted {TOKEN} into the chat"
    key = textmod.fact_key(text=text, kind="note", company_key=None)
    with sqlite3.connect(data / "karani.sqlite3") as db:
        db.execute(
            "INSERT INTO memories (text, kind, source, fact_key, created_at, last_seen_at,"
            " seen_count, created_by, delete_reason, deleted_by, terms)"
            " VALUES (?, 'note', 'teach', ?, '2026-01-01', '2026-01-01', 1, '', '', '', ?)",
            (text, key, " ".join(textmod.tokens(text))),
        )
    assert _bytes_anywhere(data, TOKEN)

    listed = karani("secrets", cwd=tmp_path, env=env)
    assert one_line_error(listed).endswith("`karani secrets --redact` removes them")
    assert "memories id 2 field text: github-pat" in listed.stdout
    assert TOKEN not in listed.stdout + listed.stderr

    redacted = karani("secrets", "--redact", cwd=tmp_path, env=env)
    assert redacted.returncode == 0, redacted.stderr
    assert _bytes_anywhere(data, TOKEN) == []
    assert _bytes_anywhere(data, TOKEN.lower()) == []  # the full-text index's word too
    exported = karani("export", cwd=tmp_path, env=env)
    assert exported.returncode == 0 and TOKEN not in exported.stdout
    assert "[redacted: github-pat]" in exported.stdout
    recall = karani("recall", "recruiter pasted chat", "--json", cwd=tmp_path, env=env)
    assert "[redacted: github-pat]" in recall.stdout  # still found by its other words
    assert karani("secrets", cwd=tmp_path, env=env).returncode == 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_after_redact_the_bytes_are_in_no_pg_dump_and_no_export(planted):
    assert _call("--redact")[1] == 0
    s = connection.settings_dict
    dump = subprocess.run(
        ["pg_dump", "-h", s["HOST"] or "127.0.0.1", "-p", str(s["PORT"] or 5432),
         "-U", s["USER"] or "postgres", s["NAME"]],
        capture_output=True, text=True, check=True,
        env={**os.environ, "PGPASSWORD": s.get("PASSWORD") or ""},
    )  # fmt: skip
    assert "Recruiter pasted [redacted: github-pat] into the chat" in dump.stdout
    assert TOKEN not in dump.stdout and PASSWORD not in dump.stdout
    assert TOKEN.lower() not in dump.stdout
    out = StringIO()
    call_command("export", stdout=out)
    assert TOKEN not in out.getvalue() and PASSWORD not in out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_the_admin_lists_and_redacts_for_superusers_only(client, planted):
    from django.contrib.auth import get_user_model

    users = get_user_model().objects
    staff = users.create(username="staff", is_staff=True)
    root = users.create(username="root", is_staff=True, is_superuser=True)
    url = "/admin/memory/redaction/secrets/"

    client.force_login(staff)
    assert client.get(url).status_code == 403
    assert client.post(url).status_code == 403
    assert selectors.stored_credentials()  # the staff user redacted nothing

    client.force_login(root)
    page = client.get(url)
    assert page.status_code == 200
    html = page.content.decode()
    assert "github-pat" in html and f"<td>{planted['live']}</td>" in html
    assert TOKEN not in html and PASSWORD not in html
    assert client.get("/admin/memory/redaction/").status_code == 200

    done = client.post(url, follow=True)
    assert done.status_code == 200 and "secrets-none" in done.content.decode()
    assert selectors.stored_credentials() == []
    (audit,) = Redaction.objects.all()
    assert audit.actor == "root"
    log = client.get(f"/admin/memory/redaction/{audit.pk}/change/").content.decode()
    assert TOKEN not in log and PASSWORD not in log
