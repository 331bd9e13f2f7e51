"""Settings come from the environment; bad values fail at start-up, naming what is allowed.

Each case imports the settings module in a fresh interpreter, since settings are read once.
"""

import json
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from ledger_helpers import KARANI, REPO, child_env

# Each case reads settings in a child process: the suite's own database plays no part.
pytestmark = pytest.mark.one_pass

PROBE = r"""
import json
from django.core.exceptions import ImproperlyConfigured
try:
    from karani_site import settings
except ImproperlyConfigured as exc:
    print(json.dumps({"error": str(exc)}))
else:
    db = settings.DATABASES["default"]
    print(json.dumps({
        "memory": settings.KARANI_MEMORY,
        "engine": db["ENGINE"],
        "name": str(db["NAME"]),
        "host": db.get("HOST", ""),
        "data_dir": str(settings.DATA_DIR),
        "options": {k: v for k, v in db.get("OPTIONS", {}).items() if isinstance(v, (int, bool))},
        "allowed_hosts": settings.ALLOWED_HOSTS,
        "local_key": settings.SECRET_KEY == settings.LOCAL_SECRET_KEY,
        "https": {
            name: getattr(settings, name, None)
            for name in (
                "SECURE_PROXY_SSL_HEADER", "SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE",
                "CSRF_COOKIE_SECURE", "SECURE_HSTS_SECONDS", "SECURE_HSTS_INCLUDE_SUBDOMAINS",
                "SECURE_HSTS_PRELOAD", "CSRF_TRUSTED_ORIGINS",
            )
        },
    }))
"""


def load_settings(tmp_path, **env: str | None) -> dict:
    return _run_probe(PROBE, tmp_path, env)


def _run_probe(probe: str, tmp_path, env: dict) -> dict:
    env.setdefault("KARANI_DATA_DIR", str(tmp_path / "data"))
    proc = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=REPO,
        env=child_env(**env),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("value", ["on", "mem1", "basic,mem0", "2"])
def test_it_refuses_an_unknown_memory_mode_naming_the_allowed_ones(tmp_path, value):
    loaded = load_settings(tmp_path, KARANI_MEMORY=value)
    assert loaded == {
        "error": f"KARANI_MEMORY={value!r} is not valid; use one of: off, basic, mem0"
    }


@pytest.mark.parametrize(
    ("value", "mode"),
    [(None, "basic"), ("", "basic"), ("off", "off"), (" OFF ", "off"), ("mem0", "mem0")],
)
def test_it_reads_the_memory_mode(tmp_path, value, mode):
    assert load_settings(tmp_path, KARANI_MEMORY=value)["memory"] == mode


def test_it_defaults_to_an_sqlite_file_under_the_data_dir_created_on_first_use(tmp_path):
    data = tmp_path / "not" / "yet"
    loaded = load_settings(tmp_path, DATABASE_URL=None, KARANI_DATA_DIR=str(data))
    assert loaded["engine"] == "django.db.backends.sqlite3"
    assert loaded["name"] == str(data / "karani.sqlite3")
    assert loaded["data_dir"] == str(data)
    assert not (data / "karani.sqlite3").exists()
    # First use: any command that touches the ledger creates the file.
    proc = subprocess.run(
        [sys.executable, str(REPO / "manage.py"), "migrate", "-v0"],
        cwd=tmp_path,
        env=child_env(DATABASE_URL=None, KARANI_DATA_DIR=str(data)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert (data / "karani.sqlite3").is_file()


def test_it_uses_the_database_url_when_set(tmp_path):
    loaded = load_settings(
        tmp_path, DATABASE_URL="postgresql://postgres@127.0.0.1:5432/karani_example"
    )
    assert loaded["engine"] == "django.db.backends.postgresql"
    assert (loaded["name"], loaded["host"]) == ("karani_example", "127.0.0.1")
    assert not (tmp_path / "data" / "karani.sqlite3").exists()


@pytest.mark.parametrize(("value", "threshold"), [(None, 5), ("on", 5), ("off", None)])
def test_it_prepares_repeated_statements_on_postgres_unless_told_not_to(tmp_path, value, threshold):
    # Off for transaction-mode poolers, which cannot carry prepared statements.
    loaded = load_settings(
        tmp_path,
        DATABASE_URL="postgresql://postgres@127.0.0.1:5432/karani_example",
        KARANI_DB_PREPARE=value,
    )
    assert loaded["options"].get("prepare_threshold") == threshold
    assert loaded["options"]["server_side_binding"] is True


def test_it_refuses_a_prepare_switch_it_cannot_read(tmp_path):
    loaded = load_settings(tmp_path, KARANI_DB_PREPARE="sometimes")
    assert loaded == {"error": "KARANI_DB_PREPARE='sometimes' is not valid; use true or false"}


def test_it_refuses_an_extraction_switch_it_cannot_read(tmp_path):
    loaded = load_settings(tmp_path, KARANI_MEMORY_EXTRACTION="maybe")
    assert loaded == {"error": "KARANI_MEMORY_EXTRACTION='maybe' is not valid; use true or false"}


@pytest.mark.parametrize("url", ["bogus://x", "postgresql://h:notaport/db"])
def test_it_refuses_an_unusable_database_url(tmp_path, url):
    error = load_settings(tmp_path, DATABASE_URL=url)["error"]
    assert error.startswith("DATABASE_URL is not a usable database URL")


@pytest.mark.parametrize("value", ["fp16", "int8", "half"])
def test_it_refuses_an_unknown_embedder_dtype_naming_the_allowed_ones(tmp_path, value):
    loaded = load_settings(tmp_path, KARANI_EMBEDDER_DTYPE=value)
    assert loaded == {
        "error": f"KARANI_EMBEDDER_DTYPE={value!r} is not valid; use auto, float32 or bfloat16"
    }


EMBEDDER_PROBE = r"""
import json
from django.core.exceptions import ImproperlyConfigured
try:
    from karani_site import settings
except ImproperlyConfigured as exc:
    print(json.dumps({"error": str(exc)}))
else:
    print(json.dumps({n: getattr(settings, n) for n in dir(settings) if "EMBEDDER_" in n}))
"""


def load_embedder_settings(tmp_path, **env: str) -> dict:
    return _run_probe(EMBEDDER_PROBE, tmp_path, env)


def test_it_keeps_an_embedder_prefix_as_written_trailing_space_included(tmp_path):
    loaded = load_embedder_settings(
        tmp_path,
        KARANI_EMBEDDER_QUERY_PREFIX="query: ",
        KARANI_EMBEDDER_PASSAGE_PREFIX="passage: ",
    )
    assert loaded["KARANI_EMBEDDER_QUERY_PREFIX"] == "query: "
    assert loaded["KARANI_EMBEDDER_PASSAGE_PREFIX"] == "passage: "
    assert loaded["KARANI_EMBEDDER_QUERY_MODEL"] == loaded["KARANI_EMBEDDER_PASSAGE_MODEL"] == ""


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("KARANI_EMBEDDER_QUERY_PREFIX", "query:\nx"),
        ("KARANI_EMBEDDER_PASSAGE_PREFIX", "passage:\t"),
        ("KARANI_EMBEDDER_QUERY_PREFIX", "q" * 201),
    ],
)
def test_it_refuses_an_embedder_prefix_it_cannot_send(tmp_path, name, value):
    loaded = load_embedder_settings(tmp_path, **{name: value})
    assert loaded == {
        "error": f"{name}={value!r} is not valid; "
        "use at most 200 characters on one line, e.g. 'query: '"
    }


@pytest.mark.parametrize("name", ["KARANI_EMBEDDER_QUERY_MODEL", "KARANI_EMBEDDER_PASSAGE_MODEL"])
def test_it_refuses_a_per_side_model_name_without_an_endpoint(tmp_path, name):
    loaded = load_embedder_settings(tmp_path, **{name: "e5-query"})
    assert loaded["error"].startswith(f"{name} names an endpoint's model, but KARANI_EMBEDDER")
    ok = load_embedder_settings(
        tmp_path, KARANI_EMBEDDER="http://127.0.0.1:8000/v1", **{name: "e5-query"}
    )
    assert ok[name] == "e5-query"


# --- production: the key, the hosts, HTTPS (issue 14, item 2) -----------------------------

PRODUCTION_ENV = REPO / "deploy" / "production.env"


def random_key() -> str:
    return secrets.token_urlsafe(50)


def production_env() -> dict[str, str]:
    """deploy/production.env as documented, with a real key in place of the placeholder."""
    env = {}
    for line in PRODUCTION_ENV.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, value = line.partition("=")
            env[name] = value
    assert env["KARANI_SECRET_KEY"] == "replace-me"
    env["KARANI_SECRET_KEY"] = random_key()
    return env


@pytest.mark.parametrize("hosts", ["karani.example.com", "localhost,karani.example.com", "*"])
def test_it_refuses_the_built_in_key_for_a_host_that_is_not_local(tmp_path, hosts):
    loaded = load_settings(tmp_path, KARANI_SECRET_KEY=None, KARANI_ALLOWED_HOSTS=hosts)
    public = next(h for h in hosts.split(",") if h != "localhost")
    assert loaded == {
        "error": f"KARANI_SECRET_KEY is not set but KARANI_ALLOWED_HOSTS serves {public!r}: "
        "set KARANI_SECRET_KEY to a long random value (docs/security.md)"
    }


def test_it_runs_locally_on_the_built_in_key_without_testserver(tmp_path):
    loaded = load_settings(tmp_path, KARANI_SECRET_KEY=None, KARANI_ALLOWED_HOSTS=None)
    assert loaded["local_key"] is True
    # Django's test client host is added by the test environment, never by the settings.
    assert loaded["allowed_hosts"] == ["localhost", "127.0.0.1"]
    assert loaded["https"]["SECURE_SSL_REDIRECT"] is None


def test_it_serves_a_public_host_with_its_own_key(tmp_path):
    loaded = load_settings(
        tmp_path, KARANI_SECRET_KEY=random_key(), KARANI_ALLOWED_HOSTS="karani.example.com"
    )
    assert loaded["allowed_hosts"] == ["karani.example.com"]
    assert loaded["local_key"] is False


def test_it_turns_on_every_https_setting_behind_a_proxy(tmp_path):
    https = load_settings(tmp_path, **production_env())["https"]
    assert https == {
        "SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"],
        "SECURE_SSL_REDIRECT": True,
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SECURE_HSTS_SECONDS": 31_536_000,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
        "SECURE_HSTS_PRELOAD": True,
        "CSRF_TRUSTED_ORIGINS": ["https://karani.example.com"],
    }


def test_it_trusts_no_forwarded_header_when_the_server_speaks_tls_itself(tmp_path):
    https = load_settings(tmp_path, **{**production_env(), "KARANI_HTTPS": "direct"})["https"]
    assert https["SECURE_PROXY_SSL_HEADER"] is None
    assert https["SECURE_SSL_REDIRECT"] is True


@pytest.mark.parametrize(
    ("env", "error"),
    [
        (
            {"KARANI_HTTPS": "yes"},
            "KARANI_HTTPS='yes' is not valid; use one of: off, proxy, direct",
        ),
        (
            {"KARANI_HTTPS": "proxy", "KARANI_HSTS_SECONDS": "a year"},
            "is not valid; use a whole number",
        ),
        (
            {"KARANI_CSRF_TRUSTED_ORIGINS": "karani.example.com"},
            "KARANI_CSRF_TRUSTED_ORIGINS has 'karani.example.com': use scheme://host[:port]",
        ),
    ],
)
def test_it_refuses_https_settings_it_cannot_read(tmp_path, env, error):
    assert error in load_settings(tmp_path, **env)["error"]


def check_deploy(tmp_path, **env: str | None) -> subprocess.CompletedProcess[str]:
    env.setdefault("KARANI_DATA_DIR", str(tmp_path / "data"))
    return subprocess.run(
        [str(KARANI), "check", "--deploy", "--fail-level", "WARNING"],
        cwd=tmp_path,
        env=child_env(**{"DATABASE_URL": None, "KARANI_MEMORY": None, **env}),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_is_clean_in_the_documented_production_configuration(tmp_path):
    env = production_env()
    env["DATABASE_URL"] = None  # the check needs no database; the file's URL is an example
    proc = check_deploy(tmp_path, **env)
    assert proc.returncode == 0, proc.stderr
    assert "System check identified no issues" in proc.stdout


def test_check_deploy_names_what_the_local_defaults_lack(tmp_path):
    proc = check_deploy(tmp_path, KARANI_SECRET_KEY=None, KARANI_ALLOWED_HOSTS=None)
    assert proc.returncode != 0
    for check in ("W004", "W008", "W009", "W012", "W016"):
        assert f"security.{check}" in proc.stderr, proc.stderr


def test_gunicorn_refuses_to_start_on_the_built_in_key_for_a_public_host(tmp_path):
    gunicorn = Path(sys.executable).parent / "gunicorn"
    proc = subprocess.run(
        [
            str(gunicorn),
            "-c",
            str(REPO / "deploy" / "gunicorn.conf.py"),
            "--bind",
            "127.0.0.1:0",
            "--workers",
            "1",
        ],
        cwd=REPO,
        env=child_env(
            KARANI_SECRET_KEY=None,
            KARANI_ALLOWED_HOSTS="karani.example.com",
            KARANI_DATA_DIR=str(tmp_path / "data"),
        ),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0
    assert "KARANI_SECRET_KEY is not set but KARANI_ALLOWED_HOSTS serves" in proc.stderr


@pytest.mark.parametrize("value", ["LOUD", "verbose", "5"])
def test_it_refuses_an_unknown_log_level_naming_the_allowed_ones(tmp_path, value):
    error = load_settings(tmp_path, KARANI_LOG_LEVEL=value)["error"]
    assert f"KARANI_LOG_LEVEL={value!r} is not valid" in error
    assert "DEBUG, INFO, WARNING, ERROR, CRITICAL" in error


def test_it_takes_a_log_level_in_any_case(tmp_path):
    assert "error" not in load_settings(tmp_path, KARANI_LOG_LEVEL="info")
