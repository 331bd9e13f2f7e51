"""The API as deployed: real gunicorn processes on one ledger, on SQLite and on PostgreSQL.

Throttle counts live in the ledger's database cache, so two servers (two processes, as two
hosts would be) spend one budget; a token rotated by another process is refused by every
worker at once; oversized and too-deeply nested bodies are answered in the one JSON shape.
"""

import json
import subprocess
import sys
from http.client import HTTPConnection
from urllib.parse import quote

import pytest
from api_helpers import GUNICORN_CONF, api_token, gunicorn, http
from django.conf import settings
from django.db import connection
from ledger_helpers import REPO, child_env, children_database_url, karani

RECALL = "/api/memories/recall?q=remote"


@pytest.fixture(scope="module")
def sqlite_ledger(tmp_path_factory) -> str:
    """A DATABASE_URL for a migrated SQLite ledger file the servers share."""
    url = f"sqlite:///{tmp_path_factory.mktemp('ledger') / 'karani.sqlite3'}"
    proc = subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v0"],
        cwd=REPO,
        env=child_env(DATABASE_URL=url, DJANGO_SETTINGS_MODULE="karani_site.settings"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return url


@pytest.fixture
def ledger_env(request) -> dict[str, str]:
    """The environment of servers and commands sharing this test's ledger."""
    if connection.vendor == "postgresql":
        request.getfixturevalue("transactional_db")  # children see what is committed
        url = children_database_url()
    else:
        url = request.getfixturevalue("sqlite_ledger")
    return child_env(
        DATABASE_URL=url,
        DJANGO_SETTINGS_MODULE="karani_site.settings",
        KARANI_API_RECALL_RATE="off",
        KARANI_MEMORY="basic",
    )


def test_two_servers_spend_one_throttle_budget(ledger_env, tmp_path):
    env = ledger_env | {"KARANI_API_RECALL_RATE": "6/min"}
    token = api_token("budget", env)
    with (
        gunicorn(env, tmp_path / "a.log") as a,
        gunicorn(env, tmp_path / "b.log") as b,
    ):
        # Alternating: each server answers half, and neither knows the other's requests
        # unless the counts are shared.
        answers = [(port, http(port, "GET", RECALL, token)[0]) for port in [a, b] * 6]
    assert [status for _, status in answers] == [200] * 6 + [429] * 6
    assert {port for port, status in answers if status == 200} == {a, b}


def test_every_worker_refuses_a_token_rotated_by_another_process(ledger_env, tmp_path):
    token = api_token("carol", ledger_env)
    with gunicorn(ledger_env, tmp_path / "gunicorn.log", workers=2) as port:
        assert [http(port, "GET", RECALL, token)[0] for _ in range(20)] == [200] * 20
        proc = karani("api-token", "carol", "--rotate", cwd=REPO, env=ledger_env)
        assert proc.returncode == 0, proc.stderr
        # Refused from the next request on, whichever worker answers.
        assert [http(port, "GET", RECALL, token)[0] for _ in range(20)] == [401] * 20
        assert http(port, "GET", RECALL, proc.stdout.strip())[0] == 200


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (json.dumps({"text": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)}), 413, None),
        ("[" * 2000 + "]" * 2000, 400, "parse_error"),
        ('{"text": "Likes Rust", "kind": "gossip"}', 400, "invalid"),
    ],
    ids=["over-the-upload-limit", "nested-2000-deep", "unknown-kind"],
)
def test_bad_bodies_get_the_one_json_shape(ledger_env, tmp_path, body, status, code):
    token = api_token("writer", ledger_env, "--writer")
    log = tmp_path / "gunicorn.log"
    with gunicorn(ledger_env, log) as port:
        answer, content_type, raw = http(port, "POST", "/api/memories", token, body.encode())
    assert (answer, content_type) == (status, "application/json"), raw[:300]
    error = json.loads(raw)["error"]
    assert error["code"] == (code or "request_too_large")
    assert "Traceback" not in log.read_text()


def test_a_500_is_logged_with_its_traceback_and_answered_in_the_one_shape(ledger_env, tmp_path):
    # Injected fault: the deployed configuration, plus a hook that breaks recall in the
    # worker once the app is loaded.
    config = tmp_path / "gunicorn.conf.py"
    config.write_text(
        f"exec(open({str(GUNICORN_CONF)!r}).read())\n\n"
        "def post_worker_init(worker):\n"
        "    from memory import selectors\n\n"
        "    def broken(**kwargs):\n"
        "        raise RuntimeError('injected fault')\n\n"
        "    selectors.recall = broken\n"
    )
    token = api_token("reader", ledger_env)
    log = tmp_path / "gunicorn.log"
    with gunicorn(ledger_env, log, config=config) as port:
        status, content_type, raw = http(port, "GET", RECALL, token)
    assert (status, content_type) == (500, "application/json")
    assert json.loads(raw)["error"]["code"] == "server_error"
    assert "injected" not in raw.decode()  # no internals leak to the client
    text = log.read_text()
    assert "ERROR django.request: Internal Server Error: /api/memories/recall" in text
    assert "Traceback (most recent call last)" in text
    assert "RuntimeError: injected fault" in text
    assert text.count("Internal Server Error") == 1  # logged once, not again by Django


def _chunked(port: int, path: str, token: str, body: bytes) -> tuple[int, str, bytes]:
    """One POST whose body goes in chunks (no Content-Length), as streaming clients send it."""
    conn = HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        pieces = (body[i : i + 7] for i in range(0, len(body), 7))
        headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
        conn.request("POST", path, body=pieces, headers=headers, encode_chunked=True)
        response = conn.getresponse()
        return response.status, response.getheader("Content-Type", ""), response.read()
    finally:
        conn.close()


def test_a_chunked_body_is_read_as_any_other(ledger_env, tmp_path):
    token = api_token("streamer", ledger_env, "--writer")
    decision = {
        "external_id": "https://jobs.example.com/chunked/1",
        "company": "Acme",
        "title": "SRE",
        "verdict": "rejected",
        "fit_score": 20,
        "prompt_version": "chunked-v1",
        "reasons": "on-call every other week",
    }
    too_big = json.dumps({"text": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)})
    with gunicorn(ledger_env, tmp_path / "gunicorn.log") as port:
        fact = _chunked(port, "/api/memories", token, b'{"text": "Likes chunked Go"}')
        decided = _chunked(port, "/api/decisions", token, json.dumps(decision).encode())
        history = http(port, "GET", f"/api/decisions?external_id={decision['external_id']}", token)
        over = _chunked(port, "/api/memories", token, too_big.encode())
    assert fact[0] == 201, fact[2]
    assert decided[0] == 201, decided[2]
    assert json.loads(history[2])["decisions"][0]["reasons"] == "on-call every other week"
    assert (over[0], over[1]) == (413, "application/json")
    assert json.loads(over[2])["error"]["code"] == "request_too_large"


def test_a_long_url_the_schema_allows_is_answered_and_a_longer_one_is_a_json_414(
    ledger_env, tmp_path
):
    token = api_token("longurl", ledger_env)
    # q at its 2,000-character limit, each character 12 bytes percent-encoded: 24 KB.
    longest = "/api/memories/recall?q=" + quote("😀" * 2000) + "&company=" + quote("é" * 200)
    with gunicorn(ledger_env, tmp_path / "gunicorn.log") as port:
        allowed = http(port, "GET", longest, token)
        over = http(port, "GET", "/api/memories/recall?q=" + "a" * 40_000, token)
    assert allowed[0] == 200, allowed[2][:300]
    assert (over[0], over[1]) == (414, "application/json"), over[2][:300]
    assert json.loads(over[2])["error"]["code"] == "uri_too_long"
