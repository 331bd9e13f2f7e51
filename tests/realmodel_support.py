"""Where the real-model tests (marker ``realmodel``) find their LLM, and when they skip.

They are opt-in: they run only when selected with ``-m realmodel`` or when KARANI_TEST_LLM_URL
is set, so a server left running does not add its twenty minutes to the normal suite. The
model is the one ``scripts/local-llm start`` serves (its port file under var/models), or any
OpenAI-compatible server named by KARANI_TEST_LLM_URL. Unreachable: the test skips, in CI too
(CI does not build llama.cpp; docs/local-model.md says how to run them).
"""

import json
import os
import urllib.request
from pathlib import Path

import pytest

PORT_FILE = Path(__file__).resolve().parent.parent / "var" / "models" / "llm-server.port"


def real_llm_url() -> str | None:
    url = os.environ.get("KARANI_TEST_LLM_URL", "").strip()
    if not url and PORT_FILE.exists():
        url = f"http://127.0.0.1:{PORT_FILE.read_text().strip()}/v1"
    return url.rstrip("/") or None


def reachable_model(url: str | None) -> str | None:
    """The first model id the server lists, or None when it does not answer."""
    if not url:
        return None
    try:
        # Generous: llama-cpp-python's server answers nothing else while it generates.
        with urllib.request.urlopen(f"{url}/models", timeout=120) as response:
            models = json.load(response).get("data") or []
    except (OSError, ValueError):
        return None
    return str(models[0].get("id") or "local-model") if models else "local-model"


@pytest.fixture(scope="session")
def real_llm(pytestconfig: pytest.Config) -> tuple[str, str]:
    """(base URL, model id) of a reachable real model; skips the test otherwise."""
    chosen = "realmodel" in (pytestconfig.getoption("markexpr") or "")
    if not chosen and not os.environ.get("KARANI_TEST_LLM_URL", "").strip():
        pytest.skip("real-model test: opt in with -m realmodel (docs/local-model.md)")
    url = real_llm_url()
    model = reachable_model(url)
    if model is None:
        pytest.skip(
            "no real model answering: run scripts/local-llm start "
            "(or set KARANI_TEST_LLM_URL to an OpenAI-compatible server)"
        )
    return url, os.environ.get("KARANI_TEST_LLM_MODEL", "").strip() or model
