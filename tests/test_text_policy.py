"""One text policy at every door (issue 43, item 4; docs/security.md, "Text as it arrives").

Text as job boards send it (a BOM, a soft hyphen, a tab, CRLF, no-break and thin spaces) is
taken and stored normalised: line breaks kept as LF in multi-line fields, one line of single
spaces in the others. NUL and a bidi override are refused with the policy's one message,
naming the field, the character and its position, and nothing is written. Every door: the
REST API (memory's and qualify's), ``call_command``, the real ``karani`` console script, the
MCP server through the SDK's client, the admin's forms, ``karani import`` and
``karani postings import``.
"""

import asyncio
import io
import json
import sqlite3

import psycopg
import pytest
from admin_helpers import ADD, correct_url, forget_url
from api_helpers import client_with, error_of, token_for
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection
from django.urls import reverse
from ledger_helpers import children_database_url, counts, karani, one_line_error
from test_mcp_server import server_env, session_for  # noqa: F401  (a fixture)

from memory import services
from memory.errors import SecretRefused
from memory.models import Memory
from qualify.models import Company, Outcome, Posting, Profile, Qualification

# Every awkward character a job board sends, in one text.
SENT = "\ufeffOn\u00adcall\tweeks\r\nare\u00a0paid\u202fdouble\u2009here\r"
AS_LINES = "Oncall weeks\nare paid double here"  # a multi-line field
AS_ONE_LINE = "Oncall weeks are paid double here"  # a single-line field
COMPANY_SENT = "\ufeffNorth\u00adwind\u00a0Robotics\t"
COMPANY = "Northwind Robotics"
EXTERNAL_ID_SENT = "\ufeffhttps://jobs.example.com/42\r\n"
EXTERNAL_ID = "https://jobs.example.com/42"

# (name, value, what the refusal says once the field is named in front of it)
REFUSED = [
    ("NUL", "bad \x00 nul", "contains a control character U+0000 at position 5; remove it"),
    ("bidi", "bad \u202e txt", "contains a bidi control U+202E at position 5; remove it"),
]
refused = pytest.mark.parametrize(
    ("value", "says"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED]
)


def all_counts() -> dict[str, int]:
    models = [*apps.get_app_config("qualify").get_models()]
    return {**counts(), **{m._meta.db_table: m._base_manager.count() for m in models}}


@pytest.fixture
def api(db, settings):
    settings.KARANI_MEMORY = "basic"
    return client_with(token_for("policy-writer", writer=True))


DECISION = {
    "external_id": EXTERNAL_ID_SENT,
    "company": COMPANY_SENT,
    "title": SENT,
    "verdict": "qualified",
    "fit_score": 70,
    "prompt_version": "policy-v1",
    "reasons": SENT,
    "location": SENT,
    "description": SENT,
    "model": SENT,
}


def _decide(api) -> dict:
    response = api.post("/api/decisions", DECISION, format="json")
    assert response.status_code == 201, response.content[:300]
    return response.json()


# --- the REST API: taken and stored normalised ------------------------------------------


def test_the_api_stores_a_fact_normalised(api):
    body = {"text": SENT, "company": COMPANY_SENT, "ref": SENT}
    response = api.post("/api/memories", body, format="json")
    assert response.status_code == 201, response.content[:300]
    row = Memory.objects.get(pk=response.json()["id"])
    assert (row.text, row.company, row.company_key, row.ref) == (
        AS_LINES,
        COMPANY,
        COMPANY.casefold(),
        AS_ONE_LINE,
    )
    # Dedupe sees the normalised text: the same fact typed plainly is the same fact.
    again = api.post("/api/memories", {"text": AS_LINES, "company": COMPANY}, format="json")
    assert (again.status_code, again.json()["id"]) == (200, row.pk)


def test_the_api_reads_with_normalised_queries(api):
    fact = services.remember(text="Oncall weeks are paid double here", company=COMPANY)
    recall = api.get("/api/memories/recall", {"q": SENT, "company": COMPANY_SENT})
    assert recall.status_code == 200, recall.content[:300]
    assert [r["id"] for r in recall.json()["results"]] == [fact.id]
    listed = api.get("/api/memories", {"company": COMPANY_SENT})
    assert [r["id"] for r in listed.json()["results"]] == [fact.id]


def test_the_api_corrects_and_forgets_with_normalised_text(api):
    old = services.remember(text="Oncall is unpaid")
    response = api.post(
        f"/api/memories/{old.id}/correct", {"text": SENT, "reason": SENT}, format="json"
    )
    assert response.status_code == 201, response.content[:300]
    new = Memory.objects.get(pk=response.json()["id"])
    assert new.text == AS_LINES
    assert Memory.all_objects.get(pk=old.id).delete_reason == AS_ONE_LINE
    gone = api.delete(f"/api/memories/{new.pk}", {"reason": SENT}, format="json")
    assert gone.status_code == 200, gone.content[:300]
    assert Memory.all_objects.get(pk=new.pk).delete_reason == AS_ONE_LINE


def test_the_api_builds_a_context_from_normalised_fields(api):
    fact = services.remember(text="Northwind pays on-call weeks double", company=COMPANY)
    query = {"company": COMPANY_SENT, "title": SENT, "external_id": EXTERNAL_ID_SENT}
    got = api.get("/api/context", query)
    assert got.status_code == 200, got.content[:300]
    assert fact.id in [f["id"] for f in got.json()["facts"]]
    posted = api.post(
        "/api/context",
        {**query, "description": SENT, "task": SENT, "location": SENT},
        format="json",
    )
    assert posted.status_code == 200, posted.content[:300]
    assert fact.id in [f["id"] for f in posted.json()["facts"]]


def test_the_api_records_a_decision_and_an_outcome_normalised(api):
    decision = _decide(api)
    posting = Posting.objects.select_related("company").get(pk=decision["posting_id"])
    assert posting.external_id == EXTERNAL_ID
    assert posting.company.name == COMPANY
    assert (posting.title, posting.location) == (AS_ONE_LINE, AS_ONE_LINE)
    assert posting.description == AS_LINES
    verdict = Qualification.objects.get(pk=decision["id"])
    assert (verdict.reasons, verdict.model_name) == (AS_ONE_LINE, AS_ONE_LINE)
    history = api.get("/api/decisions", {"external_id": EXTERNAL_ID_SENT})
    assert history.status_code == 200, history.content[:300]
    assert history.json()["posting_id"] == posting.pk
    body = {"external_id": EXTERNAL_ID_SENT, "stage": "applied", "note": SENT}
    outcome = api.post("/api/outcomes", body, format="json")
    assert outcome.status_code == 201, outcome.content[:300]
    assert Outcome.objects.get(pk=outcome.json()["id"]).note == AS_ONE_LINE


# --- the REST API: refused with the one message, nothing written -------------------------

# (operation, method, path, the other fields, the field spoilt)
API_DOORS = [
    ("remember", "post", "/api/memories", {"text": "A fine fact"}, "text"),
    ("remember", "post", "/api/memories", {"text": "A fine fact"}, "company"),
    ("remember", "post", "/api/memories", {"text": "A fine fact"}, "ref"),
    ("recall", "get", "/api/memories/recall", {}, "q"),
    ("list", "get", "/api/memories", {}, "company"),
    ("correct", "post", "/api/memories/{id}/correct", {"text": "Fine", "reason": "newer"}, "text"),
    (
        "correct",
        "post",
        "/api/memories/{id}/correct",
        {"text": "Fine", "reason": "newer"},
        "reason",
    ),
    ("forget", "delete", "/api/memories/{id}", {}, "reason"),
    ("context", "get", "/api/context", {"company": "Acme", "title": "SRE"}, "title"),
    ("context", "get", "/api/context", {"company": "Acme", "title": "SRE"}, "company"),
    ("context", "post", "/api/context", {"company": "Acme", "title": "SRE"}, "description"),
    ("context", "post", "/api/context", {"title": "SRE"}, "task"),
    ("decision", "post", "/api/decisions", DECISION, "external_id"),
    ("decision", "post", "/api/decisions", DECISION, "title"),
    ("decision", "post", "/api/decisions", DECISION, "description"),
    ("decision", "post", "/api/decisions", DECISION, "reasons"),
    ("history", "get", "/api/decisions", {}, "external_id"),
    ("outcome", "post", "/api/outcomes", {"external_id": EXTERNAL_ID, "stage": "offer"}, "note"),
]


@refused
@pytest.mark.parametrize(
    ("operation", "method", "path", "body", "field"),
    API_DOORS,
    ids=[f"{d[0]}-{d[1]}-{d[4]}" for d in API_DOORS],
)
def test_the_api_refuses_with_the_one_message(
    api, operation, method, path, body, field, value, says
):
    _decide(api)
    fact = services.remember(text="Seed fact for the policy table")
    before = all_counts()
    body = {**body, field: value}
    if operation == "decision":
        body["prompt_version"] = "policy-v2"
    url = path.format(id=fact.id)
    if method == "get":
        response = api.get(url, body)
    else:
        response = getattr(api, method)(url, body, format="json")
    assert response.status_code == 400, response.content[:300]
    error = error_of(response)
    assert error["message"] == f"{field} {says}"
    assert error["fields"] == {field: [f"{field} {says}"]}
    assert all_counts() == before


# --- the admin's forms ----------------------------------------------------------------------


@pytest.fixture
def curator(client, db):
    client.force_login(get_user_model().objects.create_superuser("policy-curator"))
    return client


def test_the_admin_stores_normalised_text(curator):
    data = {"text": SENT, "kind": "note", "company": COMPANY_SENT, "ref": SENT}
    assert curator.post(ADD, data).status_code == 302
    row = Memory.objects.get()
    assert (row.text, row.company, row.ref) == (AS_LINES, COMPANY, AS_ONE_LINE)
    response = curator.post(correct_url(row.pk), {"text": "now: " + SENT, "reason": SENT})
    assert response.status_code == 302
    assert Memory.all_objects.get(pk=row.pk).delete_reason == AS_ONE_LINE
    new = Memory.objects.get()
    assert new.text == "now: " + AS_LINES
    assert curator.post(forget_url(new.pk), {"reason": SENT}).status_code == 302
    assert Memory.all_objects.get(pk=new.pk).delete_reason == AS_ONE_LINE


@refused
@pytest.mark.parametrize(
    "form", ["remember-text", "remember-company", "correct-reason", "forget-reason"]
)
def test_the_admin_refuses_with_the_one_message(curator, form, value, says):
    fact = services.remember(text="Seed fact for the admin")
    before = all_counts()
    operation, field = form.split("-")
    if operation == "remember":
        data = {"text": "A fine fact", "kind": "note", "company": "", "ref": "", field: value}
        response = curator.post(ADD, data)
    elif operation == "correct":
        response = curator.post(correct_url(fact.id), {"text": "Fine", "reason": value})
    else:
        response = curator.post(forget_url(fact.id), {"reason": value})
    assert response.status_code == 200
    assert response.context["form"].errors[field] == [f"{field} {says}"]
    assert all_counts() == before


def _admin_form(curator, name: str, data: dict, pk: int | None = None):
    if pk is None:
        return curator.post(reverse(f"admin:qualify_{name}_add"), data)
    return curator.post(reverse(f"admin:qualify_{name}_change", args=[pk]), data)


def test_the_qualify_admin_stores_normalised_text(curator):
    assert _admin_form(curator, "company", {"name": COMPANY_SENT}).status_code == 302
    company = Company.objects.get()
    assert company.name == COMPANY
    data = {
        "company": company.pk,
        "title": SENT,
        "description": SENT,
        "location": SENT,
        "remote": "unknown",
        "external_id": EXTERNAL_ID_SENT,
        "dealbreakers": json.dumps([SENT]),
    }
    response = _admin_form(curator, "posting", data)
    assert response.status_code == 302, response.context and response.context["errors"]
    posting = Posting.objects.get()
    assert (posting.title, posting.location) == (AS_ONE_LINE, AS_ONE_LINE)
    assert (posting.description, posting.external_id) == (AS_LINES, EXTERNAL_ID)
    assert posting.dealbreakers == [AS_ONE_LINE]
    data = {"summary": SENT, "preferences": SENT, "dealbreakers": json.dumps([SENT])}
    assert _admin_form(curator, "profile", data).status_code == 302
    profile = Profile.objects.get()
    assert (profile.summary, profile.preferences) == (AS_LINES, AS_LINES)
    assert profile.dealbreakers == [AS_ONE_LINE]


@refused
@pytest.mark.parametrize("form", ["company-name", "posting-title", "profile-summary"])
def test_the_qualify_admin_refuses_with_the_one_message(curator, form, value, says):
    company = Company.objects.create(name="Acme")
    before = all_counts()
    name, field = form.split("-")
    data = {
        "company": {"name": value},
        "posting": {"company": company.pk, "title": value, "remote": "unknown"},
        "profile": {"summary": value, "dealbreakers": "[]"},
    }[name]
    response = _admin_form(curator, name, data)
    assert response.status_code == 200
    assert response.context["adminform"].form.errors[field] == [f"{field} {says}"]
    assert all_counts() == before


# --- management commands in process ------------------------------------------------------


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.mark.django_db
def test_the_commands_store_normalised_text(settings):
    settings.KARANI_MEMORY = "basic"
    made = json.loads(_run("remember", SENT, "--company", COMPANY_SENT, "--ref", SENT, "--json"))
    row = Memory.objects.get(pk=made["id"])
    assert (row.text, row.company, row.ref) == (AS_LINES, COMPANY, AS_ONE_LINE)
    fixed = json.loads(_run("correct", str(row.pk), "now: " + SENT, "--reason", SENT, "--json"))
    assert Memory.all_objects.get(pk=row.pk).delete_reason == AS_ONE_LINE
    _run("forget", str(fixed["id"]), "--reason", SENT)
    assert Memory.all_objects.get(pk=fixed["id"]).delete_reason == AS_ONE_LINE


@pytest.mark.django_db
def test_profile_set_stores_normalised_text():
    _run("profile", "set", "--summary", SENT, "--preferences", SENT, "--dealbreaker", SENT)
    profile = Profile.objects.get()
    assert (profile.summary, profile.preferences) == (AS_LINES, AS_LINES)
    assert profile.dealbreakers == [AS_ONE_LINE]


@pytest.mark.django_db
@refused
def test_profile_set_refuses_with_the_one_message(value, says):
    for option, field in [("--summary", "summary"), ("--dealbreaker", "dealbreakers")]:
        with pytest.raises(CommandError) as caught:
            _run("profile", "set", "--summary", "Engineer", option, value)
        assert str(caught.value) == f"{field} {says}"
    assert Profile.objects.count() == 0


@pytest.mark.django_db
def test_karani_import_stores_normalised_text(tmp_path):
    path = tmp_path / "facts.jsonl"
    line = json.dumps({"text": SENT, "company": COMPANY_SENT, "ref": SENT})
    path.write_bytes(("\ufeff" + line + "\r\n").encode())
    _run("import", str(path))
    row = Memory.objects.get()
    assert (row.text, row.company, row.ref) == (AS_LINES, COMPANY, AS_ONE_LINE)


@pytest.mark.django_db
@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_postings_import_stores_normalised_text(tmp_path, suffix):
    record = {"company": COMPANY_SENT, "title": SENT, "description": SENT, "url": ""}
    record["dealbreakers"] = "on\u00adsite\u00a0only; US\tcitizens" if suffix == ".csv" else [SENT]
    if suffix == ".jsonl":
        text = json.dumps(record) + "\r\n"
    else:
        quoted = {k: '"' + v.replace('"', '""') + '"' for k, v in record.items()}
        text = ",".join(record) + "\r\n" + ",".join(quoted.values()) + "\r\n"
    path = tmp_path / f"postings{suffix}"
    path.write_bytes(("\ufeff" + text).encode())  # as Excel and Notepad save it
    _run("postings", "import", str(path))
    posting = Posting.objects.select_related("company").get()
    assert posting.company.name == COMPANY
    assert (posting.title, posting.description) == (AS_ONE_LINE, AS_LINES)
    expected = ["onsite only", "US citizens"] if suffix == ".csv" else [AS_ONE_LINE]
    assert posting.dealbreakers == expected


@pytest.mark.django_db
@refused
def test_the_commands_refuse_with_the_one_message(tmp_path, value, says):
    fact = services.remember(text="Seed fact for the commands")
    before = all_counts()
    for args, field in [
        (["remember", value], "text"),
        (["remember", "A fine fact", "--company", value], "company"),
        (["correct", str(fact.id), "Fine", "--reason", value], "reason"),
        (["forget", str(fact.id), "--reason", value], "reason"),
    ]:
        with pytest.raises(CommandError) as caught:
            _run(*args)
        assert str(caught.value) == f"{field} {says}", args
    postings = tmp_path / "bad.jsonl"
    postings.write_text(json.dumps({"company": "Acme", "title": value}) + "\n")
    err = io.StringIO()
    call_command("postings", "import", str(postings), stdout=io.StringIO(), stderr=err)
    assert err.getvalue().strip() == f"line 1: title {says}"
    facts = tmp_path / "bad-facts.jsonl"
    facts.write_text(json.dumps({"text": value}) + "\n")
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("import", str(facts), stdout=io.StringIO(), stderr=err)
    assert f"line 1: text {says}" in err.getvalue()
    assert all_counts() == before


# --- the real console script and the real MCP server, as child processes ----------------


def child_rows(env: dict[str, str], sql: str) -> list[tuple]:
    """Rows the child wrote: the shared test database on PostgreSQL, its own file on SQLite."""
    if connection.vendor == "postgresql":  # its own connection: this runs inside asyncio too
        with psycopg.connect(children_database_url()) as db:
            return db.execute(sql).fetchall()
    with sqlite3.connect(f"{env['KARANI_DATA_DIR']}/karani.sqlite3") as db:
        return db.execute(sql).fetchall()


def child_counts(env: dict[str, str]) -> list[tuple]:
    tables = ("memories", "qualify_company", "qualify_posting", "qualify_qualification")
    return [child_rows(env, f"SELECT COUNT(*) FROM {t}") for t in (*tables, "qualify_outcome")]


def test_the_console_script_stores_normalised_text_and_refuses_a_bidi_override(
    server_env,  # noqa: F811
    tmp_path,
):
    made = karani(
        "remember", SENT, "--company", COMPANY_SENT, "--ref", SENT, "--json",
        cwd=tmp_path, env=server_env,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    fact_id = json.loads(made.stdout)["id"]
    sql = f"SELECT text, company, ref FROM memories WHERE id = {fact_id}"
    assert child_rows(server_env, sql) == [(AS_LINES, COMPANY, AS_ONE_LINE)]
    before = child_counts(server_env)
    _, bidi, says = REFUSED[1]
    for args, field in [
        (["remember", bidi], "text"),
        (["remember", "A fine fact", "--company", bidi], "company"),
        (["forget", str(fact_id), "--reason", bidi], "reason"),
    ]:
        line = one_line_error(karani(*args, cwd=tmp_path, env=server_env))
        assert line.endswith(f"{field} {says}"), line
    assert child_counts(server_env) == before


def test_the_mcp_tools_store_normalised_text_and_refuse_with_the_one_message(
    server_env,  # noqa: F811
    tmp_path,
):
    server_env["KARANI_MEMORY"] = "basic"
    decision = {k: v for k, v in DECISION.items() if k != "model"}

    async def scenario() -> dict:
        answers = {}
        with open(tmp_path / "server.stderr", "w") as errlog:
            async with session_for(server_env, errlog) as session:
                call = session.call_tool
                answers["remember"] = await call(
                    "remember", {"text": SENT, "company": COMPANY_SENT}
                )
                answers["recall"] = await call("recall", {"query": SENT, "company": COMPANY_SENT})
                answers["context"] = await call(
                    "context", {"company": COMPANY_SENT, "title": SENT, "description": SENT}
                )
                answers["decision"] = await call("record_decision", decision)
                note = {"external_id": EXTERNAL_ID_SENT, "stage": "applied", "note": SENT}
                answers["outcome"] = await call("record_outcome", note)
                answers["counts"] = child_counts(server_env)
                for name, value, _ in REFUSED:
                    answers[f"text-{name}"] = await call("remember", {"text": value})
                    answers[f"note-{name}"] = await call(
                        "record_outcome", {**note, "stage": "screen", "note": value}
                    )
                    answers[f"title-{name}"] = await call(
                        "context", {"company": "Acme", "title": value}
                    )
                answers["counts after"] = child_counts(server_env)
        return answers

    answers = asyncio.run(scenario())
    assert "Traceback" not in (tmp_path / "server.stderr").read_text()
    for name in ("remember", "recall", "context", "decision", "outcome"):
        assert not answers[name].is_error, (name, answers[name].content)
    recalled = json.loads(answers["recall"].content[0].text)["results"]
    assert [(r["text"], r["company"]) for r in recalled] == [(AS_LINES, COMPANY)]
    sql = "SELECT text, company FROM memories WHERE source = 'teach'"
    assert child_rows(server_env, sql) == [(AS_LINES, COMPANY)]
    sql = "SELECT external_id, title, description FROM qualify_posting"
    assert child_rows(server_env, sql) == [(EXTERNAL_ID, AS_ONE_LINE, AS_LINES)]
    assert child_rows(server_env, "SELECT name FROM qualify_company") == [(COMPANY,)]
    assert child_rows(server_env, "SELECT note FROM qualify_outcome") == [(AS_ONE_LINE,)]
    for name, _, says in REFUSED:
        for field in ("text", "note", "title"):
            result = answers[f"{field}-{name}"]
            text = " ".join(b.text for b in result.content if b.type == "text")
            assert result.is_error and text.endswith(f"{field} {says}"), text
    assert answers["counts after"] == answers["counts"]


def test_a_credential_split_by_a_soft_hyphen_or_a_bom_is_still_refused(db):
    before = counts()
    for joiner in ("\u00ad", "\ufeff", "\u200b"):
        token = "ghp_1234567890abcdef" + joiner + "ghijABCDEFGHIJ123456"
        with pytest.raises(SecretRefused):
            services.remember(text=f"my token is {token}")
    assert counts() == before


@pytest.mark.one_pass
def test_the_schema_character_class_refuses_exactly_what_the_policy_refuses():
    import re

    import jsonschema_rs

    from memory import text

    # Compact since unassigned code points are taken: a pattern on every text field stays small.
    assert len(text.refused_ranges()) < 40
    pattern = re.compile(text.refused_class())
    # Python's re (hypothesis draws with it) and jsonschema-rs (schemathesis judges with it)
    # read the class alike.
    validator = jsonschema_rs.validator_for({"type": "string", "pattern": text.refused_class()})
    handled = text.LINE_BREAKS + text.SPACES + text.INVISIBLE + text.JOINERS + "\n"
    sample = [*handled, *text.BIDI_CONTROLS, *(chr(c) for c in range(0, 0x110000, 97))]
    for char in sample:
        refused = text.refusal(f"a{char}b", field="x") is not None
        if 0xD800 <= ord(char) <= 0xDFFF:
            # No UTF-8 text, hence no schema validator, holds a lone surrogate: not in the class.
            assert refused and not pattern.search(char)
            continue
        assert bool(pattern.search(char)) == refused == validator.is_valid(char), hex(ord(char))
