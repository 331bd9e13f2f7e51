"""Servable from a plain install: the WSGI server is one of the package's own dependencies, and
the serving commands docs/operations.md and docs/api.md give really serve the app."""

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from api_helpers import free_port, http, serving
from ledger_helpers import REPO, child_env

pytestmark = pytest.mark.one_pass

DOCS = ["docs/operations.md", "docs/api.md"]


def _requirement_names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[; ]", req, maxsplit=1)[0].lower() for req in requirements}


def test_a_plain_install_brings_the_wsgi_server():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert "gunicorn" in _requirement_names(project["dependencies"])
    # scripts/dev installs the base profile, a plain `pip install -e .` without extras.
    assert "install -e .\n" in (REPO / "scripts" / "bootstrap").read_text()


def _served_commands() -> list[list[str]]:
    lines = [
        line.split("#")[0].strip()
        for doc in DOCS
        for line in (REPO / doc).read_text().splitlines()
        if line.startswith(".venv/bin/gunicorn ")
    ]
    return [shlex.split(line) for line in dict.fromkeys(lines)]


@pytest.mark.parametrize("command", _served_commands(), ids=" ".join)
def test_the_docs_serving_command_serves_the_app(command, tmp_path):
    assert command[:3] == [".venv/bin/gunicorn", "-c", "deploy/gunicorn.conf.py"], command
    # The clone's venv after the README's set-up has the server the docs name.
    assert (REPO / command[0]).exists()
    env = child_env(DATABASE_URL=None, KARANI_DATA_DIR=str(tmp_path))
    karani = Path(sys.executable).parent / "karani"
    subprocess.run([str(karani), "migrate", "-v0"], env=env, check=True, timeout=300)
    # The docs' command as written, on a free port with one worker (the machine is small).
    args = [*command[1:], "--workers", "1"]
    log = tmp_path / "gunicorn.log"
    with serving(args, port=free_port(), ready_path="/", cwd=REPO, env=env, log=log) as port:
        assert http(port, "GET", "/admin/login/")[0] == 200
        status, content_type, _ = http(port, "GET", "/api/memories/recall?q=x")
        assert status == 401 and content_type.startswith("application/json")
