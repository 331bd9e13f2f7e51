"""Shared helpers for the REST API specs: users with and without write rights, clients.

Not a test module; the API test files import it by name (pytest puts tests/ on sys.path).
"""

import io
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.client import HTTPConnection
from pathlib import Path

import psycopg
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from ledger_helpers import REPO, karani
from rest_framework.test import APIClient

from memory.api.permissions import WRITERS_GROUP


def token_for(username: str, *, writer: bool = False) -> str:
    """A token through the real command, as an operator would get one."""
    out = io.StringIO()
    args = ["api-token", username, "--create-user"] + (["--writer"] if writer else [])
    call_command(*args, stdout=out)
    return out.getvalue().strip()


def client_with(token: str | None) -> APIClient:
    # Throttle history lives in the process-wide cache, keyed by user id, and SQLite test
    # databases reuse ids after each rollback: start every test's clients from zero.
    cache.clear()
    client = APIClient()
    if token is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def json_client(token: str | None) -> APIClient:
    """``client_with(token)`` sending its bodies as JSON unless told otherwise."""
    client = client_with(token)
    client.default_format = "json"
    return client


def user_with_perm(username: str, perm: str) -> str:
    """A token for a user holding one model permission directly (no writers group)."""
    token = token_for(username)
    user = get_user_model().objects.get(username=username)
    app_label, codename = perm.split(".")
    user.user_permissions.add(
        Permission.objects.get(content_type__app_label=app_label, codename=codename)
    )
    assert not user.groups.filter(name=WRITERS_GROUP).exists()
    return token


def decision_body(**overrides: object) -> dict:
    """A valid `POST /api/decisions` body (Northwind's Senior SRE, rejected at 35); ``overrides``
    replace or add fields."""
    body = {
        "external_id": "https://jobs.example.com/northwind/sre-7",
        "company": "Northwind",
        "title": "Senior SRE",
        "verdict": "rejected",
        "fit_score": 35,
        "prompt_version": "pipeline-v1",
    }
    return {**body, **overrides}


def fuzzing(examples: int) -> "hypothesis.settings":  # noqa: F821
    """hypothesis' settings for a schemathesis spec: ``examples`` cases, no deadline, and no
    complaint about the function-scoped ledger fixture or a slow request."""
    # Imported here: only the fuzzing specs load hypothesis.
    from hypothesis import HealthCheck, settings

    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


def error_of(response) -> dict:
    """The one error shape; fails loudly when a response does not use it."""
    assert response["Content-Type"].startswith("application/json"), response.content[:200]
    body = response.json()
    assert set(body) == {"error"}, body
    assert {"code", "message", "fields"} <= set(body["error"]), body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]


def wsgi_get(path: str, token: str) -> int:
    """One request through the real WSGI handler, as gunicorn calls it (the test client
    disconnects Django's per-request connection bookkeeping, the health check with it)."""
    from karani_site.wsgi import application

    path, _, query = path.partition("?")
    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "HTTP_HOST": "testserver",
        "HTTP_AUTHORIZATION": f"Token {token}",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": io.StringIO(),
    }
    status = []
    result = application(environ, lambda s, headers, exc_info=None: status.append(s))
    b"".join(result)
    result.close()
    return int(status[0].split()[0])


def admin_connection() -> psycopg.Connection:
    """A separate autocommit connection to the test database (PostgreSQL), as another
    process would have."""
    return psycopg.connect(**connection.get_connection_params(), autocommit=True)


def terminate_backend(pid: int) -> None:
    """End a PostgreSQL session as a restart would, and wait until it is gone."""
    with admin_connection() as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])
        deadline = time.monotonic() + 10
        while admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone():
            assert time.monotonic() < deadline, "the backend did not end"
            time.sleep(0.01)


GUNICORN_CONF = REPO / "deploy" / "gunicorn.conf.py"


def api_token(username: str, env: dict[str, str], *args: str) -> str:
    """A token from the real ``karani api-token`` in another process (it commits there)."""
    proc = karani("api-token", username, "--create-user", *args, cwd=REPO, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def http(
    port: int, method: str, path: str, token: str | None = None, body: bytes | None = None
) -> tuple[int, str, bytes]:
    """(status, content type, body) of one request on a new connection."""
    headers = {"Authorization": f"Token {token}"} if token else {}
    if body is not None:
        headers["Content-Type"] = "application/json"
    conn = HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.getheader("Content-Type", ""), response.read()
    finally:
        conn.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(
    args: list[str], *, port: int, ready_path: str, cwd: Path, env: dict[str, str], log: Path
) -> Iterator[int]:
    """A gunicorn started with ``args``, polled (bounded) until ``ready_path`` answers 200;
    stopped when the block ends."""
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), *args, "--bind", f"127.0.0.1:{port}"],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),  # a file: a full pipe would stall the server
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if http(port, "GET", ready_path)[0] == 200:
                    break
            except OSError:
                pass
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "gunicorn did not start"
            time.sleep(0.1)
        yield port
    finally:
        server.terminate()
        server.wait(timeout=30)


@contextmanager
def gunicorn(
    env: dict[str, str], log: Path, *, workers: int = 1, config: Path = GUNICORN_CONF
) -> Iterator[int]:
    """The deployed server (deploy/gunicorn.conf.py) on a free port, until the block ends."""
    args = ["-c", str(config), "--workers", str(workers)]
    with serving(
        args, port=free_port(), ready_path="/api/schema/", cwd=REPO, env=env, log=log
    ) as port:
        yield port
