"""Settings come from the environment; bad values fail at start-up, naming what is allowed.

Each case imports the settings module in a fresh interpreter, since settings are read once.
"""

import json
import subprocess
import sys

import pytest
from ledger_helpers import REPO, child_env

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
    }))
"""


def load_settings(tmp_path, **env: str | None) -> dict:
    env.setdefault("KARANI_DATA_DIR", str(tmp_path / "data"))
    proc = subprocess.run(
        [sys.executable, "-c", PROBE],
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
    assert loaded == {"error": "KARANI_DB_PREPARE='sometimes': use one of true, false"}


@pytest.mark.parametrize("url", ["bogus://x", "postgresql://h:notaport/db"])
def test_it_refuses_an_unusable_database_url(tmp_path, url):
    error = load_settings(tmp_path, DATABASE_URL=url)["error"]
    assert error.startswith("DATABASE_URL is not a usable database URL")


@pytest.mark.parametrize("value", ["fp16", "int8", "half"])
def test_it_refuses_an_unknown_embedder_dtype_naming_the_allowed_ones(tmp_path, value):
    loaded = load_settings(tmp_path, KARANI_EMBEDDER_DTYPE=value)
    assert loaded == {"error": f"KARANI_EMBEDDER_DTYPE={value!r}: use auto, float32 or bfloat16"}
