"""Token rows cached per worker, emptied by PostgreSQL's NOTIFY (memory/api/token_cache.py).

The cache must never let a revoked token through: each spec revokes from somewhere else (a
real ``karani api-token`` process, another connection) and expects the next request to be
refused. Requests go through the WSGI application, outside any transaction, as a gunicorn
worker runs them; the test database is real PostgreSQL with migration 0010's triggers.
"""

import http.client
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest
from api_helpers import admin_connection, terminate_backend, token_for, wsgi_get
from django.db import connection, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from ledger_helpers import REPO, child_env, children_database_url, karani

from memory import services
from memory.api import token_cache

RECALL = "/api/memories/recall?q=remote"


def _get(token: str) -> int:
    return wsgi_get(RECALL, token)


def _token_queries(token: str) -> tuple[int, int]:
    """(status, how many token lookups the request sent)."""
    with CaptureQueriesContext(connection) as queries:
        status = _get(token)
    return status, sum("authtoken_token" in q["sql"] for q in queries.captured_queries)


def _cache() -> token_cache.TokenRowCache:
    cache = token_cache.for_connection(connection)
    assert cache is not None
    return cache


def _until_refused(token: str, seconds: float = 2.0) -> float:
    """Seconds until the token is refused (a notification takes a moment to arrive)."""
    start = time.monotonic()
    while (status := _get(token)) == 200:
        assert time.monotonic() - start < seconds, "a revoked token is still accepted"
        time.sleep(0.005)
    assert status == 401
    return time.monotonic() - start


@pytest.fixture
def token():
    services.remember(text="Prefers async remote teams")
    return token_for("carol")


pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_a_known_token_is_looked_up_once_then_answered_from_the_cache(token):
    assert _token_queries(token) == (200, 1)
    assert _token_queries(token) == (200, 0)
    assert _token_queries(token) == (200, 0)


def test_a_wrong_token_is_looked_up_every_time(token):
    assert _token_queries("0" * 40) == (401, 1)
    assert _token_queries("0" * 40) == (401, 1)


def test_a_token_rotated_by_another_process_stops_working_at_once(token):
    assert _token_queries(token)[0] == 200
    assert _token_queries(token) == (200, 0)  # cached
    proc = karani(
        "api-token",
        "carol",
        "--rotate",
        cwd=REPO,
        env=child_env(DATABASE_URL=children_database_url()),
    )
    assert proc.returncode == 0, proc.stderr
    new = proc.stdout.strip()
    # The child process has committed and exited: the notification was sent at its commit.
    assert _until_refused(token) < 0.5
    assert _get(new) == 200


def test_a_user_deactivated_from_another_connection_is_refused(token):
    assert _get(token) == 200 and _token_queries(token) == (200, 0)
    with admin_connection() as admin:
        admin.execute("UPDATE auth_user SET is_active = false WHERE username = 'carol'")
    _until_refused(token)


def test_a_token_deleted_while_the_listener_is_dead_is_still_refused(token, monkeypatch):
    monkeypatch.setattr(token_cache, "RETRY_AFTER", 0.0)
    assert _get(token) == 200 and _token_queries(token) == (200, 0)
    pid = _cache().listener_pid()
    terminate_backend(pid)
    with admin_connection() as admin:
        # The notification of this delete goes nowhere: nobody listens any more.
        admin.execute("DELETE FROM authtoken_token")
    assert _get(token) == 401
    # The next request opens a new listener, and caching resumes on it.
    fresh = token_for("dave")
    assert _token_queries(fresh) == (200, 1)
    assert _token_queries(fresh) == (200, 0)
    assert _cache().listener_pid() not in (None, pid)


def test_without_a_listener_every_request_queries(token, monkeypatch):
    def refuse(*args, **kwargs):
        raise psycopg.OperationalError("injected: LISTEN connection refused")

    monkeypatch.setattr(token_cache, "_connect", refuse)
    assert _token_queries(token) == (200, 1)
    assert _token_queries(token) == (200, 1)
    with admin_connection() as admin:
        admin.execute("DELETE FROM authtoken_token")
    assert _get(token) == 401


def test_without_the_triggers_nothing_is_cached(token, caplog):
    # A database restored without migration 0010's triggers: no revocation would be
    # announced, so the cache must stay off (and say why).
    with admin_connection() as admin:
        admin.execute("ALTER TABLE authtoken_token DISABLE TRIGGER karani_auth_changed")
    try:
        with caplog.at_level("WARNING", logger="karani.api"):
            assert _token_queries(token) == (200, 1)
            assert _token_queries(token) == (200, 1)
        assert "karani_auth_changed triggers are missing" in caplog.text
        assert _cache().listener_pid() is None
    finally:
        with admin_connection() as admin:
            admin.execute("ALTER TABLE authtoken_token ENABLE TRIGGER karani_auth_changed")
    _cache().close()  # forget the minute's wait: with the triggers back, it caches again
    assert _token_queries(token) == (200, 1)
    assert _token_queries(token) == (200, 0)


def test_a_change_committed_during_a_lookup_is_not_cached(token):
    cache = _cache()
    row, ticket = cache.get(token, connection)
    assert row is None and ticket is not None
    with admin_connection() as admin:
        admin.execute("NOTIFY karani_auth")
    deadline = time.monotonic() + 2
    while cache.get(token, connection)[1] == ticket:  # applies the notification when it lands
        assert time.monotonic() < deadline, "the notification never arrived"
        time.sleep(0.005)
    cache.put(token, ("stale",), ticket)
    assert cache.get(token, connection)[0] is None


def test_rows_expire_after_max_age(token, monkeypatch):
    monkeypatch.setattr(token_cache, "MAX_AGE", 0.0)
    assert _token_queries(token) == (200, 1)
    time.sleep(0.01)
    assert _token_queries(token) == (200, 1)


def test_the_cache_is_not_used_inside_a_transaction(token):
    with transaction.atomic():
        assert token_cache.for_connection(connection) is None


@override_settings(KARANI_API_TOKEN_CACHE=False)
def test_the_setting_turns_the_cache_off(token):
    assert token_cache.for_connection(connection) is None
    assert _token_queries(token) == (200, 1)
    assert _token_queries(token) == (200, 1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _http_get(port: int, token: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", RECALL, headers={"Authorization": f"Token {token}"})
        return conn.getresponse().status
    finally:
        conn.close()


def _burst(port: int, token: str) -> list[int]:
    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(lambda _: _http_get(port, token), range(80)))


def test_gunicorn_workers_refuse_a_token_rotated_by_another_process(token, tmp_path):
    # The deployed server (deploy/gunicorn.conf.py: sync workers, one per core, a new
    # connection per request, so requests land on every worker): each worker caches the
    # token, and each must drop it when `karani api-token --rotate` commits elsewhere.
    port = _free_port()
    env = child_env(DATABASE_URL=children_database_url(), KARANI_API_RECALL_RATE="off")
    gunicorn = Path(sys.executable).parent / "gunicorn"
    server = subprocess.Popen(
        [
            str(gunicorn),
            "-c",
            "deploy/gunicorn.conf.py",
            "--workers",
            "2",
            "--bind",
            f"127.0.0.1:{port}",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "gunicorn.log").open("w"),  # a file: a full pipe would stall it
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                assert _http_get(port, token) == 200
                break
            except OSError:
                assert server.poll() is None, (tmp_path / "gunicorn.log").read_text()
                assert time.monotonic() < deadline, "gunicorn did not start"
                time.sleep(0.1)
        # Concurrent requests, so that both workers answer some (one at a time, one worker
        # can take them all).
        assert _burst(port, token) == [200] * 80
        with admin_connection() as admin:
            listeners = admin.execute(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND application_name = %s"
                " AND query = 'LISTEN karani_auth'",
                [token_cache.APPLICATION_NAME],
            ).fetchone()[0]
        assert listeners == 2, "each worker should hold one LISTEN connection"

        proc = karani("api-token", "carol", "--rotate", cwd=REPO, env=env)
        assert proc.returncode == 0, proc.stderr
        new = proc.stdout.strip()
        start = time.monotonic()
        while _http_get(port, token) == 200:
            assert time.monotonic() - start < 2, "a worker still accepts the rotated token"
            time.sleep(0.005)
        # Refused from then on, whichever worker answers.
        assert _burst(port, token) == [401] * 80
        assert _http_get(port, new) == 200
    finally:
        server.terminate()
        server.wait(timeout=30)
