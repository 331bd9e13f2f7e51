"""Bad input, field by field, through every door: each row is refused clearly, writes nothing.

One row = an interface (the REST API, the ``karani`` console script, the MCP server through
the SDK's client, the admin's forms), an operation, the field it spoils and the payload. The
contract for every row (issue 14, Goals):

- a clear refusal: the API's one error shape with a 4xx, one stderr line and a non-zero exit
  from the CLI, one line in an MCP tool error, a form error in the admin;
- nothing written: every table keeps its row count (the admin's log included);
- never a 500, never a traceback.
"""

import asyncio
import json
import re
import sqlite3
from dataclasses import dataclass

import pytest
from admin_helpers import ADD, correct_url, forget_url
from api_helpers import client_with, error_of, token_for
from django.apps import apps
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.db import connection
from ledger_helpers import KARANI, child_env, counts, karani, one_line_error

from memory import services

GITHUB = "ghp_1234567890abcdefghijABCDEFGHIJ123456"
LONG_TEXT = "word " * 401  # 2,004 characters after stripping; the limit is 2,000

# payload name -> (value, what the refusal must say)
PAYLOADS = {
    "credential": ("my AWS key is AKIAIOSFODNN7EXAMPLE", r"credential"),
    "look-alike credential": (
        "push with gh\u0440_1234567890abcdefghijABCDEFGHIJ123456",
        r"credential",
    ),
    "prose password": ("the password was hunter22", r"credential"),
    # Issue 30: words between the keyword and the value, pairs, a provider the old screen missed.
    "german prose password": ("Das Passwort für das Bewerberportal ist Falke12!", r"credential"),
    "user password pair": ("Recruiter sent my login: jdoe / Sunshine99", r"credential"),
    "provider token": ("Hugging Face token 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", r"credential"),
    "company credential": ("Acme password=hunter22", r"credential"),
    "ref credential": (GITHUB, r"credential"),
    "reason credential": ("rotated, token=abcd1234efgh5678", r"credential"),
    # The text policy's one message, the same through every door (memory.text.refusal).
    "escape sequence": (
        "bad \x1b[31m red",
        r"contains a control character U\+001B at position 5; remove it",
    ),
    "NUL": ("bad \x00 nul", r"contains a control character U\+0000 at position 5; remove it"),
    "blank": ("   ", r"empty|blank|required"),
    "long text": (LONG_TEXT, r"2,?000|characters"),
    "long company": ("C" * 201, r"200|characters|longer"),
    "long ref": ("r" * 201, r"200|characters"),
    "long reason": ("r" * 501, r"500|characters"),
    "unknown kind": ("gossip", r"gossip|kind"),
    "not a number": (123, r"string|valid"),
    "id not a number": ("abc", r"id|int|whole number|integer"),
    "id zero": ("0", r"id|positive|whole number"),
    "missing id": ("999999", r"no fact|not found|999999"),
    "unknown verdict": ("maybe", r"maybe.*verdict|verdict.*maybe"),
    "unknown remote policy": (
        "sometimes (flexible)",
        r"remote 'sometimes \(flexible\)' names no policy",
    ),
    # A location at its limit, and the remote policy's detail it would have to keep.
    "location past its limit with the detail": (
        "L" * 195,
        r"location .*limit is 200|location .*longer than 200",
    ),
    "unknown stage": ("hired", r"hired.*stage|stage.*hired"),
    "fit score high": (101, r"100"),
    "fit score negative": (-1, r"\b0\b"),
    "long external id": ("x" * 501, r"500|characters"),
    "unknown external id": ("https://jobs.example.com/never-seen", r"no posting.*never-seen"),
    "limit zero": (0, r"limit|\b1\b"),
}


@dataclass(frozen=True)
class Row:
    interface: str
    operation: str  # remember, forget, correct
    field: str
    payload: str

    @property
    def id(self) -> str:
        return f"{self.interface}-{self.operation}-{self.field}-{self.payload}".replace(" ", "_")


def _rows(interface: str, operation: str, field: str, *payloads: str) -> list[Row]:
    return [Row(interface, operation, field, p) for p in payloads]


REMEMBER_TEXT = (
    "credential",
    "look-alike credential",
    "prose password",
    "german prose password",
    "user password pair",
    "provider token",
    "escape sequence",
)
API_ROWS = [
    *_rows("api", "remember", "text", *REMEMBER_TEXT, "NUL", "blank", "long text"),
    *_rows("api", "remember", "company", "company credential", "escape sequence", "blank"),
    *_rows("api", "remember", "company", "long company"),
    *_rows("api", "remember", "ref", "ref credential", "escape sequence", "long ref"),
    *_rows("api", "remember", "kind", "unknown kind"),
    *_rows("api", "forget", "reason", "reason credential", "blank", "NUL", "long reason"),
    *_rows("api", "forget", "id", "id not a number", "id zero", "missing id"),
    *_rows("api", "correct", "text", "credential", "escape sequence", "blank"),
    *_rows("api", "correct", "reason", "reason credential", "blank"),
    *_rows("api", "correct", "id", "missing id"),
]
CLI_ROWS = [
    *_rows("cli", "remember", "text", *REMEMBER_TEXT, "blank", "long text"),
    *_rows("cli", "remember", "company", "company credential", "escape sequence", "blank"),
    *_rows("cli", "remember", "company", "long company"),
    *_rows("cli", "remember", "ref", "ref credential", "escape sequence", "long ref"),
    *_rows("cli", "remember", "kind", "unknown kind"),
    *_rows("cli", "forget", "reason", "reason credential", "blank", "escape sequence"),
    *_rows("cli", "forget", "id", "id not a number", "missing id"),
    *_rows("cli", "correct", "text", "credential"),
    *_rows("cli", "correct", "reason", "reason credential"),
    *_rows("cli", "correct", "id", "missing id"),
]
MCP_ROWS = [
    *_rows("mcp", "remember", "text", *REMEMBER_TEXT, "NUL", "blank", "long text"),
    *_rows("mcp", "remember", "text", "not a number"),
    *_rows("mcp", "remember", "company", "company credential", "escape sequence", "blank"),
    *_rows("mcp", "remember", "company", "long company"),
    *_rows("mcp", "remember", "kind", "unknown kind"),
]
ADMIN_ROWS = [
    *_rows("admin", "remember", "text", *REMEMBER_TEXT, "NUL", "long text"),
    *_rows("admin", "remember", "company", "company credential", "escape sequence"),
    *_rows("admin", "remember", "company", "long company"),
    *_rows("admin", "remember", "ref", "ref credential", "escape sequence"),
    *_rows("admin", "correct", "text", "credential", "escape sequence"),
    *_rows("admin", "correct", "reason", "reason credential", "long reason"),
    *_rows("admin", "forget", "reason", "reason credential", "escape sequence", "blank"),
]


# qualify's endpoints (decisions, outcomes, context) for outside pipelines.
EXTERNAL_ID = ("credential", "blank", "long external id", "escape sequence")
QUALIFY_ROWS = [
    *_rows("api", "decision", "external_id", *EXTERNAL_ID),
    *_rows("api", "decision", "verdict", "unknown verdict"),
    *_rows("api", "decision", "remote", "unknown remote policy"),
    *_rows("api", "decision", "location", "location past its limit with the detail"),
    *_rows("api", "decision", "fit_score", "fit score high", "fit score negative"),
    *_rows("api", "decision", "company", "company credential", "long company"),
    *_rows("api", "decision", "title", "credential", "blank"),
    *_rows("api", "decision", "reasons", "credential"),
    *_rows("api", "decision", "prompt_version", "credential", "blank"),
    *_rows("api", "decision", "fact_ids", "missing id"),
    *_rows("api", "outcome", "external_id", *EXTERNAL_ID, "unknown external id"),
    *_rows("api", "outcome", "stage", "unknown stage"),
    *_rows("api", "outcome", "note", "credential", "long reason", "escape sequence"),
    *_rows("api", "context", "title", "credential", "escape sequence"),
    *_rows("api", "context", "external_id", "credential", "long external id"),
    *_rows("api", "context", "limit", "limit zero"),
]


def test_the_table_has_at_least_sixty_rows():
    rows = API_ROWS + CLI_ROWS + MCP_ROWS + ADMIN_ROWS + QUALIFY_ROWS
    assert len(rows) >= 60
    assert len({r.id for r in rows}) == len(rows)
    assert {r.interface for r in rows} == {"api", "cli", "mcp", "admin"}


def _value(row: Row):
    return PAYLOADS[row.payload][0]


def _says(row: Row, message: str) -> None:
    assert re.search(PAYLOADS[row.payload][1], message, re.IGNORECASE), (row.id, message)
    assert "Traceback" not in message and "\n" not in message.strip(), message
    # A refused credential is never echoed back.
    if "credential" in row.payload:
        assert _value(row) not in message


# --- the REST API -------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("row", API_ROWS, ids=lambda r: r.id)
def test_the_api_refuses(row):
    fact = services.remember(text="Seed fact for the bad-input table", company="Acme")
    client = client_with(token_for("table-writer", writer=True))
    before = counts()
    value = _value(row)
    fact_id = value if row.field == "id" else fact.id
    if row.operation == "remember":
        body = {"text": "A fine fact", "kind": "note", row.field: value}
        response = client.post("/api/memories", body, format="json")
    elif row.operation == "forget":
        reason = value if row.field == "reason" else "obsolete"
        response = client.delete(f"/api/memories/{fact_id}", {"reason": reason}, format="json")
    else:
        body = {"text": "A corrected fine fact", "reason": "newer", row.field: value}
        body.pop("id", None)
        response = client.post(f"/api/memories/{fact_id}/correct", body, format="json")
    assert 400 <= response.status_code < 500, (response.status_code, response.content[:300])
    _says(row, error_of(response)["message"])
    assert counts() == before


SEED_POSTING = "https://jobs.example.com/seed"


def _all_counts() -> dict[str, int]:
    models = [*apps.get_app_config("qualify").get_models()]
    return {**counts(), **{m._meta.db_table: m._base_manager.count() for m in models}}


@pytest.mark.django_db
@pytest.mark.parametrize("row", QUALIFY_ROWS, ids=lambda r: r.id)
def test_the_qualify_api_refuses(row, settings):
    settings.KARANI_MEMORY = "basic"
    client = client_with(token_for("table-pipeline", writer=True))
    decision = {
        "external_id": SEED_POSTING,
        "company": "Acme",
        "title": "SRE",
        "verdict": "qualified",
        "fit_score": 70,
        "prompt_version": "table-v1",
    }
    assert client.post("/api/decisions", decision, format="json").status_code == 201
    before = _all_counts()
    value = [int(_value(row))] if row.field == "fact_ids" else _value(row)
    if row.operation == "decision":
        body = {**decision, "prompt_version": "table-v2", row.field: value}
        if row.field == "location":
            body |= {"external_id": f"{SEED_POSTING}/new", "remote": "Hybrid (2 days)"}
        response = client.post("/api/decisions", body, format="json")
    elif row.operation == "outcome":
        body = {"external_id": SEED_POSTING, "stage": "applied", row.field: value}
        response = client.post("/api/outcomes", body, format="json")
    else:
        query = {"company": "Acme", "title": "SRE", row.field: value}
        response = client.get("/api/context", query)
    assert 400 <= response.status_code < 500, (response.status_code, response.content[:300])
    _says(row, error_of(response)["message"])
    assert _all_counts() == before


# --- the admin ----------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("row", ADMIN_ROWS, ids=lambda r: r.id)
def test_the_admin_refuses(row, client):
    fact = services.remember(text="Seed fact for the admin table", company="Acme")
    client.force_login(get_user_model().objects.create_superuser("table-admin"))
    before, logged = counts(), LogEntry.objects.count()
    value = _value(row)
    if row.operation == "remember":
        data = {"text": "A fine fact", "kind": "note", "company": "", "ref": "", row.field: value}
        response = client.post(ADD, data)
    elif row.operation == "correct":
        data = {"text": "A corrected fine fact", "reason": "newer", row.field: value}
        response = client.post(correct_url(fact.id), data)
    else:
        response = client.post(forget_url(fact.id), {"reason": value})
    assert response.status_code == 200, response.status_code  # the form again, not a redirect
    page = response.content.decode()
    errors = re.findall(r'<ul class="errorlist[^"]*"[^>]*>(.*?)</ul>', page, re.S)
    assert errors, page[:500]
    message = " ".join(re.sub(r"<[^>]+>", " ", e) for e in errors)
    _says(row, " ".join(message.split()).replace("&#x27;", "'"))
    assert counts() == before
    # A refused reason or credential never reaches the admin's own log either.
    assert LogEntry.objects.count() == logged


# --- the console script and the MCP server (their own SQLite ledger) ----------------------

console = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="child-process rows run in the SQLite pass"
)


@pytest.fixture(scope="module")
def child_ledger(tmp_path_factory):
    """(cwd, env, seeded fact id) of a migrated SQLite ledger for child processes."""
    cwd = tmp_path_factory.mktemp("bad-input")
    env = child_env(DATABASE_URL=None, KARANI_DATA_DIR=str(cwd / "data"), KARANI_MEMORY=None)
    assert karani("migrate", "-v0", cwd=cwd, env=env).returncode == 0
    proc = karani("remember", "Seed fact for the child table", "--json", cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stderr
    return cwd, env, json.loads(proc.stdout)["id"]


def table_counts(env: dict[str, str]) -> dict[str, int]:
    with sqlite3.connect(f"{env['KARANI_DATA_DIR']}/karani.sqlite3") as db:
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {n: db.execute(f'SELECT COUNT(*) FROM "{n}"').fetchone()[0] for n in names}


def _cli_args(row: Row, fact_id: int) -> list[str]:
    value = str(_value(row))
    if row.operation == "remember":
        args = ["remember", value if row.field == "text" else "A fine fact"]
        if row.field != "text":
            args += [f"--{row.field}", value]
        return args
    target = value if row.field == "id" else str(fact_id)
    reason = value if row.field == "reason" else "newer"
    if row.operation == "forget":
        return ["forget", target, "--reason", reason]
    text = value if row.field == "text" else "A corrected fine fact"
    return ["correct", target, text, "--reason", reason]


@console
@pytest.mark.parametrize("row", CLI_ROWS, ids=lambda r: r.id)
def test_the_console_script_refuses(row, child_ledger):
    cwd, env, fact_id = child_ledger
    before = table_counts(env)
    line = one_line_error(karani(*_cli_args(row, fact_id), cwd=cwd, env=env))
    _says(row, line)
    assert table_counts(env) == before


@pytest.fixture(scope="module")
def mcp_answers(child_ledger):
    """Every MCP row's tool result, one server session for the table; counts around each."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    cwd, env, _ = child_ledger

    async def run() -> dict[str, tuple]:
        answers = {}
        params = StdioServerParameters(command=str(KARANI), args=["mcp"], env=env)
        with open(cwd / "mcp.stderr", "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                for row in MCP_ROWS:
                    arguments = {"text": "A fine fact", row.field: _value(row)}
                    before = table_counts(env)
                    result = await session.call_tool("remember", arguments)
                    text = " ".join(b.text for b in result.content if b.type == "text")
                    answers[row.id] = (result.is_error, text, before == table_counts(env))
        return answers

    answers = asyncio.run(run())
    stderr = (cwd / "mcp.stderr").read_text()
    assert "Traceback" not in stderr, stderr
    return answers


@console
@pytest.mark.parametrize("row", MCP_ROWS, ids=lambda r: r.id)
def test_the_mcp_server_refuses(row, mcp_answers):
    is_error, text, unchanged = mcp_answers[row.id]
    assert is_error, text
    _says(row, text)
    assert "pydantic" not in text and "http" not in text, text
    assert unchanged


# --- the admin again, in a real browser (the rows a curator is likeliest to hit) ----------

BROWSER_ROWS = [
    Row("admin-browser", "remember", "company", "company credential"),
    Row("admin-browser", "correct", "reason", "reason credential"),
    Row("admin-browser", "forget", "reason", "reason credential"),
]


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("row", BROWSER_ROWS, ids=lambda r: r.id)
def test_the_admin_refuses_in_a_real_browser(row, browser, live_server):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 30)
    fact = services.remember(text="Seed fact for the browser table", company="Acme")
    get_user_model().objects.create_superuser("table-curator", "t@example.org", "table-pass-26")
    browser.get(f"{live_server.url}/admin/login/?next=/admin/")
    browser.find_element(By.NAME, "username").send_keys("table-curator")
    browser.find_element(By.NAME, "password").send_keys("table-pass-26")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    wait.until(ec.url_to_be(f"{live_server.url}/admin/"))
    before, logged = counts(), LogEntry.objects.count()

    url = {"remember": ADD, "correct": correct_url(fact.id), "forget": forget_url(fact.id)}
    browser.get(live_server.url + url[row.operation])
    fields = {"remember": {"text": "A fine fact"}, "correct": {"text": "A corrected fact"}}
    fields = {**fields.get(row.operation, {}), row.field: _value(row)}
    for name, value in fields.items():
        box = wait.until(ec.presence_of_element_located((By.NAME, name)))
        box.clear()
        box.send_keys(value)
    browser.find_element(By.NAME, row.field).submit()

    error = wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "ul.errorlist")))
    _says(row, " ".join(error.text.split()))
    assert "Server Error" not in browser.page_source
    assert counts() == before
    assert LogEntry.objects.count() == logged
