"""examples/pipeline.py, the outside pipeline, run as a user would: a real gunicorn serving
the API, a stand-in OpenAI-compatible endpoint, and the script over HTTP only. Its decisions,
outcomes and the funnel land in the ledger; a second run changes nothing."""

import json
import subprocess
import sys

import pytest
from api_helpers import api_token, gunicorn, http
from django.db import connection
from ledger_helpers import REPO, child_env, children_database_url, karani
from qualify_fakes import body_text

from qualify import prompts

PIPELINE = REPO / "examples" / "pipeline.py"
POSTINGS = REPO / "examples" / "postings.json"


@pytest.fixture
def ledger_env(request, tmp_path) -> dict[str, str]:
    if connection.vendor == "postgresql":
        request.getfixturevalue("transactional_db")  # the children see what is committed
        url = children_database_url()
    else:
        url = f"sqlite:///{tmp_path / 'karani.sqlite3'}"
    env = child_env(
        DATABASE_URL=url,
        DJANGO_SETTINGS_MODULE="karani_site.settings",
        KARANI_MEMORY="basic",
        KARANI_DATA_DIR=str(tmp_path / "data"),
    )
    if connection.vendor != "postgresql":
        assert karani("migrate", "-v0", cwd=REPO, env=env).returncode == 0
    return env


def judged(body: dict) -> dict:
    """The stand-in model: it turns a posting down when its memory block mentions a pager."""
    pager = "pager" in body_text(body).lower()
    return {
        "verdict": "rejected" if pager else "qualified",
        "fit_score": 30 if pager else 85,
        "reasons": "memory says the pager is heavy" if pager else "fits",
    }


def test_the_example_pipeline_runs_the_loop_over_http(ledger_env, fake_llm, tmp_path):
    fake_llm.responder = judged
    proc = karani(
        "remember",
        "Northwind SREs carry a weekly pager",
        "--company",
        "Northwind",
        cwd=REPO,
        env=ledger_env,
    )
    assert proc.returncode == 0, proc.stderr
    token = api_token("pipeline", ledger_env, "--writer")
    with gunicorn(ledger_env, tmp_path / "gunicorn.log") as port:
        env = ledger_env | {
            "KARANI_URL": f"http://127.0.0.1:{port}",
            "KARANI_TOKEN": token,
            "LLM_BASE_URL": fake_llm.url,
        }
        runs = [
            subprocess.run(
                [sys.executable, str(PIPELINE), str(POSTINGS)],
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            for _ in range(2)
        ]
        status, _, raw = http(port, "GET", "/api/funnel", token)

    for run in runs:
        assert run.returncode == 0, run.stderr
    lines = runs[0].stdout.splitlines()
    assert lines[0].endswith("northwind/senior-sre: rejected 30 (none, 1 facts)")
    assert lines[1].endswith("acme/platform-engineer: qualified 85 (none, 0 facts)")
    assert "weekly pager" in body_text(fake_llm.requests[0])  # the block reached the model
    assert status == 200
    funnel = json.loads(raw)
    assert funnel == json.loads(runs[1].stdout.split("\n", 2)[2])  # what the script printed
    (version,) = funnel["versions"]  # the second run added nothing
    assert version["prompt_version"] == prompts.MEMORY_AWARE
    assert version["decisions"] == 2
    assert {s: version["counts"][s] for s in ("qualified", "applied", "screen")} == {
        "qualified": 1,
        "applied": 1,
        "screen": 1,
    }
    assert "Traceback" not in (tmp_path / "gunicorn.log").read_text()
