"""Issue 27: `memory` and `qualify` in someone else's Django project (tests/hostproject).

The host has its own settings with only what docs/embedding.md requires: no KARANI_* settings,
no REST_FRAMEWORK, no CACHES, its own URLconf with karani's API under `karani/api/`. Every
step runs in a real process with DJANGO_SETTINGS_MODULE=hostproject.settings.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from api_helpers import free_port, http, serving
from ledger_helpers import REPO, child_env

pytestmark = pytest.mark.one_pass

HOST = REPO / "tests" / "hostproject"
PREFIX = "/karani/api/"


def _host_env(tmp: Path) -> dict[str, str]:
    env = child_env(DATABASE_URL=None, DJANGO_SETTINGS_MODULE="hostproject.settings")
    for name in [n for n in env if n.startswith("KARANI_")]:
        del env[name]  # the host's settings name none; nothing may come from karani_site
    # The default data dir is the user's; keep it in this test's directory.
    env["XDG_DATA_HOME"] = str(tmp / "xdg")
    env["HOSTPROJECT_DB"] = str(tmp / "host.sqlite3")
    return env


def manage(env: dict[str, str], *args: str, stdin: str | None = None) -> str:
    proc = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=HOST,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"manage.py {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="module")
def host(tmp_path_factory) -> dict[str, str]:
    """The host project's environment, its database migrated by its own manage.py."""
    env = _host_env(tmp_path_factory.mktemp("host"))
    manage(env, "migrate", "-v0")
    return env


def test_it_passes_the_hosts_system_checks_and_its_migrations_stand_alone(host):
    assert manage(host, "check").strip() == "System check identified no issues (0 silenced)."
    assert "No changes detected" in manage(host, "makemigrations", "--check", "--dry-run")


def test_it_remembers_and_recalls_through_the_hosts_manage_py(host):
    manage(host, "remember", "Northwind pays in euros", "--company", "Northwind", "--json")
    found = json.loads(manage(host, "recall", "euros", "--company", "Northwind", "--json"))
    assert found["mode"] == "basic"
    assert [fact["text"] for fact in found["results"]] == ["Northwind pays in euros"]
    funnel = json.loads(manage(host, "funnel", "--json"))
    assert funnel["arms"]["holdout_fraction"] == 0.0  # qualify reads its settings too


PROBE = r"""
import json, sys
from django.contrib.auth import get_user_model
from django.test import Client
from django.test.utils import setup_test_environment
from memory import selectors, services

setup_test_environment()  # records the templates each response rendered

written = services.remember(text="Prefers remote work", kind="preference")
recalled = selectors.recall(query="remote", limit=5)
admin = get_user_model().objects.create_superuser("root", "root@example.com", "pw-for-test")
client = Client()
client.force_login(admin)
page = client.get("/admin/memory/memory/")
print(json.dumps({
    "created": written.created,
    "recalled": [r.text for r in recalled.results],
    "admin_status": page.status_code,
    "admin_templates": sorted(t.name for t in page.templates if "memory/memory" in t.name),
    "site_imported": sorted(m for m in sys.modules if m.split(".")[0] == "karani_site"),
}))
"""


def test_it_writes_through_the_service_and_shows_the_apps_admin_templates(host):
    out = json.loads(manage(host, "shell", "-c", PROBE).strip().splitlines()[-1])
    assert out["created"] is True
    assert out["recalled"] == ["Prefers remote work"]
    assert out["site_imported"] == []  # the apps never import the ready-made project
    assert out["admin_status"] == 200
    # karani's own change list, found by APP_DIRS in memory/templates/.
    assert "admin/memory/memory/change_list.html" in out["admin_templates"]


@pytest.fixture
def host_server(host, tmp_path):
    """The host's WSGI application on a real gunicorn."""
    args = ["hostproject.wsgi:application", "-w", "1"]
    log = tmp_path / "gunicorn.log"
    with serving(args, port=free_port(), ready_path="/", cwd=HOST, env=host, log=log) as port:
        yield port


def _error(status: int, content_type: str, body: bytes) -> dict:
    assert content_type.startswith("application/json"), (status, body[:200])
    parsed = json.loads(body)
    assert set(parsed) == {"error"} and {"code", "message", "fields"} <= set(parsed["error"])
    return parsed["error"]


def test_it_serves_the_api_under_the_hosts_prefix(host, host_server):
    port = host_server
    token = manage(host, "api-token", "pipeline", "--create-user", "--writer").strip()
    fact = json.dumps({"text": "Initech interviews take three rounds", "company": "Initech"})

    status, _, body = http(port, "POST", f"{PREFIX}memories", token, fact.encode())
    assert status == 201, body
    assert json.loads(body)["created"] is True

    status, _, body = http(port, "GET", f"{PREFIX}memories/recall?q=interviews+rounds", token)
    assert status == 200, body
    assert [r["text"] for r in json.loads(body)["results"]] == [
        "Initech interviews take three rounds"
    ]

    # The apps' own authentication and permissions, whatever the host's REST_FRAMEWORK says.
    status, *rest = http(port, "GET", f"{PREFIX}memories/recall?q=interviews")
    assert status == 401 and _error(status, *rest)["code"] == "not_authenticated"
    # The one error shape from the apps' own exception handler and parser.
    status, *rest = http(port, "POST", f"{PREFIX}memories", token, b"{not json")
    assert status == 400 and _error(status, *rest)["code"] == "parse_error"
    status, *rest = http(port, "GET", f"{PREFIX}no/such/endpoint", token)
    assert status == 404 and _error(status, *rest)["code"] == "not_found"
    # The schema is optional: this host did not install drf_spectacular.
    status, *rest = http(port, "GET", f"{PREFIX}schema/", token)
    assert status == 404 and _error(status, *rest)["code"] == "not_found"
    # Outside the prefix the host's own pages answer as the host decides.
    assert http(port, "GET", "/")[2] == b"the host's own home page"


def test_the_host_environment_names_no_karani_setting(host):
    assert not [name for name in host if name.startswith("KARANI_")]
    settings_text = (HOST / "hostproject" / "settings.py").read_text()
    for forbidden in ("KARANI_", "REST_FRAMEWORK", "CACHES", "karani_site"):
        assert forbidden not in settings_text.split('"""', 2)[-1]
