"""karani's runserver: staticfiles' dev server, with TCP_NODELAY on every accepted socket.

Without it, Django's dev server answers a kept-alive client ~40 ms late on every request:
wsgiref writes the status line alone, Nagle holds the rest until the client's delayed ACK.
"""

import json
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from django.core.management import get_commands, load_command_class
from django.core.servers.basehttp import WSGIRequestHandler
from django.db import connection
from ledger_helpers import REPO, child_env, karani

from karani_site.management.commands.runserver import Command, NoDelayWSGIServer


def test_its_runserver_is_karanis_and_keeps_the_static_options():
    assert get_commands()["runserver"] == "karani_site"
    command = load_command_class("karani_site", "runserver")
    assert isinstance(command, Command)
    assert command.server_cls is NoDelayWSGIServer
    parser = command.create_parser("manage.py", "runserver")
    options = parser.parse_args(["--insecure", "--nostatic"])
    assert options.insecure_serving is True and options.use_static_handler is False


def test_it_turns_nagle_off_on_each_accepted_connection():
    server = NoDelayWSGIServer(("127.0.0.1", 0), WSGIRequestHandler)
    accepted: list[socket.socket] = []
    try:
        accept = threading.Thread(target=lambda: accepted.append(server.get_request()[0]))
        accept.start()
        with socket.create_connection(server.server_address, timeout=5):
            accept.join(timeout=5)
        assert accepted, "no connection accepted"
        assert accepted[0].getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        for conn in accepted:
            conn.close()
        server.server_close()


# --- scripts/dev, run for real twice on one data directory ----------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_dev(env: dict[str, str], log: Path) -> str:
    """Run scripts/dev until its server answers; return what it printed, then stop it."""
    port = _free_port()
    with log.open("w") as out:
        proc = subprocess.Popen(
            ["bash", str(REPO / "scripts" / "dev"), f"127.0.0.1:{port}"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # runserver's autoreloader child goes with the group
        )
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/static/admin/css/base.css"):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"scripts/dev did not serve: {log.read_text()}")
                time.sleep(0.5)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    return log.read_text()


def _export(env: dict[str, str]) -> list[dict]:
    proc = karani("export", cwd=REPO, env=env)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


@pytest.mark.skipif(connection.vendor != "sqlite", reason="scripts/dev runs on SQLite")
def test_rerunning_scripts_dev_leaves_the_demo_facts_alone(tmp_path):
    env = child_env(DATABASE_URL=None, KARANI_DATA_DIR=str(tmp_path / "data"), KARANI_DEBUG=None)
    for name in ("DJANGO_SUPERUSER_USERNAME", "DJANGO_SUPERUSER_PASSWORD"):
        env.pop(name, None)

    first = _run_dev(env, tmp_path / "first.log")
    assert "created " in first
    assert "createsuperuser" in first  # no superuser yet: the tip
    before = _export(env)
    assert before

    created = karani(
        "createsuperuser",
        "--noinput",
        cwd=REPO,
        env={
            **env,
            "DJANGO_SUPERUSER_USERNAME": "me",
            "DJANGO_SUPERUSER_PASSWORD": "dev-pass-2026",
            "DJANGO_SUPERUSER_EMAIL": "me@example.com",
        },
    )
    assert created.returncode == 0, created.stderr
    second = _run_dev(env, tmp_path / "second.log")
    assert "the ledger has facts already: nothing imported" in second
    assert "createsuperuser" not in second
    assert _export(env) == before  # same rows, same last_seen_at and seen_count
