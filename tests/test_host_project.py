"""Issue 27: `memory` and `qualify` in someone else's Django project (tests/hostproject).

The host has its own settings with only what docs/embedding.md requires: no KARANI_* settings,
no CACHES, its own URLconf with memory's and qualify's API under `karani/api/` (in either
order) and its own page after them. Every step runs in a real process with
DJANGO_SETTINGS_MODULE=hostproject.settings.
"""

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from api_helpers import free_port, http, serving
from ledger_helpers import REPO, child_env
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

pytestmark = pytest.mark.one_pass

HOST = REPO / "tests" / "hostproject"
PREFIX = "/karani/api/"
# karani's includes in either order (hostproject/urls.py, urls_qualify_first.py).
ORDERS = ["hostproject.urls", "hostproject.urls_qualify_first"]


def _host_env(tmp: Path, urlconf: str = ORDERS[0], docs: bool = False) -> dict[str, str]:
    env = child_env(DATABASE_URL=None, DJANGO_SETTINGS_MODULE="hostproject.settings")
    env["HOSTPROJECT_URLCONF"] = urlconf
    env["HOSTPROJECT_API_DOCS"] = "1" if docs else "0"
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
index = client.get("/admin/").content.decode()
print(json.dumps({
    "admin_index": index,
    "created": written.created,
    "recalled": [r.text for r in recalled.results],
    "admin_status": page.status_code,
    "admin_list": page.content.decode(),
    "admin_templates": sorted(t.name for t in page.templates if "memory/memory" in t.name),
    "site_imported": sorted(m for m in sys.modules if m.split(".")[0] == "karani_site"),
}))
"""


def test_it_writes_through_the_service_and_shows_the_apps_admin_under_the_hosts_title(host):
    out = json.loads(manage(host, "shell", "-c", PROBE).strip().splitlines()[-1])
    assert out["created"] is True
    assert out["recalled"] == ["Prefers remote work"]
    assert out["site_imported"] == []  # the apps never import the ready-made project
    assert out["admin_status"] == 200
    # karani's own change list, found by APP_DIRS in memory/templates/.
    assert "admin/memory/memory/change_list.html" in out["admin_templates"]
    # The host's admin keeps Django's defaults, as this host left them: the apps rename nothing.
    index = out["admin_index"]
    assert "<title>Site administration | Django site admin</title>" in index
    assert ">Django administration<" in index
    assert "karani" not in index.lower().replace("/admin/memory/", "")
    assert 'id="nav-sidebar"' in out["admin_list"]


@pytest.fixture
def host_server(host, tmp_path):
    """The host's WSGI application on a real gunicorn."""
    with _served(host, tmp_path) as port:
        yield port


def _served(env: dict[str, str], tmp: Path):
    args = ["hostproject.wsgi:application", "-w", "1"]
    log = tmp / "gunicorn.log"
    return serving(args, port=free_port(), ready_path="/", cwd=HOST, env=env, log=log)


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
    for forbidden in ("KARANI_", "CACHES", "karani_site", "SPECTACULAR_SETTINGS"):
        assert forbidden not in settings_text.split('"""', 2)[-1]


def _json(port: int, method: str, path: str, token: str, body: dict | None = None):
    data = None if body is None else json.dumps(body).encode()
    status, content_type, raw = http(port, method, f"{PREFIX}{path}", token, data)
    assert content_type.startswith("application/json"), (method, path, status, raw[:200])
    return status, json.loads(raw)


@pytest.mark.parametrize("urlconf", ORDERS)
def test_every_endpoint_answers_with_the_includes_in_either_order(urlconf, tmp_path):
    env = _host_env(tmp_path, urlconf)
    manage(env, "migrate", "-v0")
    token = manage(env, "api-token", "pipeline", "--create-user", "--writer").strip()
    with _served(env, tmp_path) as port:
        status, fact = _json(port, "POST", "memories", token, {"text": "Initech pays in euros"})
        assert status == 201, fact
        status, listed = _json(port, "GET", "memories/", token)  # the other spelling too
        assert status == 200 and [f["id"] for f in listed["results"]] == [fact["id"]]
        status, one = _json(port, "GET", f"memories/{fact['id']}", token)
        assert status == 200 and one["text"] == "Initech pays in euros"
        correction = {"text": "Initech pays in dollars", "reason": "misread the offer"}
        status, new = _json(port, "POST", f"memories/{fact['id']}/correct", token, correction)
        assert status == 201, new
        status, found = _json(port, "GET", "memories/recall?q=dollars", token)
        assert status == 200 and [f["id"] for f in found["results"]] == [new["id"]]
        status, gone = _json(port, "DELETE", f"memories/{new['id']}?reason=test", token)
        assert status == 200 and gone["status"] == "deleted"

        posting = {"external_id": "https://jobs.example/1", "company": "Initech"}
        status, context = _json(port, "GET", "context?company=Initech&title=SRE", token)
        assert status == 200 and "block" in context
        decision = {**posting, "title": "SRE", "verdict": "qualified", "fit_score": 80}
        decision["prompt_version"] = context["prompt_version"]
        status, made = _json(port, "POST", "decisions", token, decision)
        assert status == 201, made
        status, history = _json(port, "GET", "decisions?external_id=https://jobs.example/1", token)
        assert status == 200 and [d["id"] for d in history["decisions"]] == [made["id"]]
        status, outcome = _json(
            port,
            "POST",
            "outcomes/",
            token,
            {"external_id": posting["external_id"], "stage": "applied"},
        )
        assert status == 201, outcome
        status, funnel = _json(port, "GET", "funnel", token)
        assert status == 200 and "steps" in funnel

        # Any other path under the prefix: the API's JSON 404, from either app's resources
        # and from the host's handler404; the host's own page beside karani's still answers.
        for unknown in ("memories/1/nope", "decisions/x", "no/such/endpoint"):
            status, error = _json(port, "GET", unknown, token)
            assert status == 404 and error["error"]["code"] == "not_found", unknown
        assert http(port, "GET", f"{PREFIX}status")[2] == b"the host's own page beside it"


DOCS_PROBE = r"""
import json
from django.contrib.staticfiles import finders
from django.test import Client

client = Client()
pages = {name: client.get(f"/karani/api/{name}/") for name in ("schema", "docs", "redoc")}
schema = client.get("/karani/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
print(json.dumps({
    "status": {name: page.status_code for name, page in pages.items()},
    "docs": pages["docs"].content.decode(),
    "redoc": pages["redoc"].content.decode(),
    "title": json.loads(schema.content)["info"]["title"],
    "paths": sorted(json.loads(schema.content)["paths"]),
    "found": bool(finders.find("drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")),
}))
"""


def test_the_offline_api_docs_need_no_spectacular_settings(tmp_path):
    env = _host_env(tmp_path, ORDERS[1], docs=True)
    out = json.loads(manage(env, "shell", "-c", DOCS_PROBE).strip().splitlines()[-1])
    assert out["status"] == {"schema": 200, "docs": 200, "redoc": 200}
    # Swagger UI and Redoc from the sidecar's local files, never a CDN.
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in out["docs"]
    assert "/static/drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js" in out["redoc"]
    assert "cdn" not in (out["docs"] + out["redoc"]).lower()
    assert out["found"]
    assert out["title"] == "karani memory API"
    assert "/karani/api/memories/recall" in out["paths"] and "/karani/api/funnel" in out["paths"]
    assert "/karani/api/schema/" not in out["paths"]


def test_the_hosts_manage_py_serves_the_mcp_tools(host):
    async def scenario() -> tuple[list[str], dict]:
        params = StdioServerParameters(
            command=sys.executable, args=["manage.py", "mcp"], env=host, cwd=str(HOST)
        )
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, read_timeout_seconds=60) as session,
        ):
            await session.initialize()
            tools = sorted(tool.name for tool in (await session.list_tools()).tools)
            await session.call_tool("remember", {"text": "Globex replies within a week"})
            found = await session.call_tool("recall", {"query": "Globex replies"})
            return tools, found.structured_content or json.loads(found.content[0].text)

    tools, found = asyncio.run(scenario())
    assert tools == ["context", "recall", "record_decision", "record_outcome", "remember"]
    assert "Globex replies within a week" in [fact["text"] for fact in found["results"]]
