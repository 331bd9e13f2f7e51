"""How mem0 mode is set up: lazy, private, offline, and what a missing DSN does."""

import json
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import psycopg
import pytest
from semantic_support import *  # noqa: F403  (fixtures)
from semantic_support import FakeOpenAIServer, karani_warnings

from memory import selectors, services
from memory.models import Memory

REPO = Path(__file__).resolve().parent.parent


def _python(code: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    base = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "KARANI_DATA_DIR": str(tmp_path / "data"),
        "DJANGO_SETTINGS_MODULE": "karani_site.settings",
    }
    (tmp_path / "home").mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
        env={**base, **env},
    )


def test_it_never_imports_mem0_or_torch_at_start_up(tmp_path):
    done = _python(
        """
        import sys, django
        django.setup()
        from django.core.management import call_command
        call_command("check", verbosity=0)
        from memory import services, index
        print(sorted(m for m in ("mem0", "torch", "sentence_transformers") if m in sys.modules))
        """,
        tmp_path,
        KARANI_MEMORY="mem0",
        KARANI_VECTOR_DSN="postgresql://postgres@127.0.0.1:5432/nowhere",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_it_warns_at_start_up_when_mem0_mode_has_no_dsn(tmp_path):
    done = _python("import django; django.setup()", tmp_path, KARANI_MEMORY="mem0")
    assert done.returncode == 0
    assert "KARANI_VECTOR_DSN is not set" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_it_rejects_a_collection_name_that_is_not_a_table_name(tmp_path):
    done = subprocess.run(
        [str(Path(sys.executable).parent / "karani"), "check"],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "KARANI_DATA_DIR": str(tmp_path),
            "KARANI_VECTOR_COLLECTION": "Robert'); DROP TABLE",
        },
    )
    assert done.returncode == 2
    assert "KARANI_VECTOR_COLLECTION" in done.stderr


@pytest.mark.django_db(transaction=True)
def test_it_falls_back_and_keeps_writes_pending_without_a_dsn(settings, caplog):
    from memory.semantic.breaker import breaker

    breaker.reset()
    settings.KARANI_MEMORY = "mem0"
    settings.KARANI_VECTOR_DSN = ""
    try:
        fact = services.remember(text="Prefers remote roles")
        result = selectors.recall(query="remote roles")
    finally:
        breaker.reset()

    assert Memory.objects.get(pk=fact.id).indexed_at is None
    assert (result.fallback, [f.id for f in result.results]) == (True, [fact.id])
    warnings = karani_warnings(caplog)
    assert len(warnings) == 1 and "KARANI_VECTOR_DSN is not set" in warnings[0]


@pytest.mark.pgvector
@pytest.mark.one_pass
def test_it_keeps_mem0_offline_and_its_files_under_the_data_dir(tmp_path, vector_database):
    done = _python(
        """
        import json, os, django
        django.setup()
        from django.core.management import call_command
        call_command("migrate", verbosity=0)
        from memory import selectors, services
        services.remember(text="Prefers remote roles")
        result = selectors.recall(query="working from home")
        from memory.semantic import client
        import mem0.memory.telemetry as telemetry
        print(json.dumps({
            "fallback": result.fallback,
            "telemetry": telemetry.MEM0_TELEMETRY,
            "mem0_dir": os.environ["MEM0_DIR"],
            "llm": str(client.get().memory.llm.client.base_url),
        }))
        """,
        tmp_path,
        KARANI_MEMORY="mem0",
        KARANI_VECTOR_DSN=vector_database,
        KARANI_VECTOR_COLLECTION=f"t_{uuid.uuid4().hex[:12]}",
        # mem0 would send extraction to OpenRouter with this set; karani must not.
        OPENROUTER_API_KEY="sk-or-v1-not-a-real-key",
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["fallback"] is False and seen["telemetry"] is False
    assert seen["mem0_dir"] == str(tmp_path / "data" / "mem0")
    assert seen["llm"].startswith("http://127.0.0.1:9/")
    assert not (tmp_path / "home" / ".mem0").exists()
    assert (tmp_path / "data" / "mem0" / "config.json").exists()


@pytest.mark.pgvector
@pytest.mark.django_db(transaction=True)
def test_it_embeds_through_a_local_openai_compatible_endpoint(mem0_mode, settings):
    server = FakeOpenAIServer()
    settings.KARANI_EMBEDDER = server.url
    settings.KARANI_EMBEDDER_MODEL = "all-minilm"
    try:
        fact = services.remember(text="Avoids companies in the gambling industry")
        result = selectors.recall(query="would she work for a betting or casino business?")
    finally:
        server.close()

    assert not result.fallback and [f.id for f in result.results] == [fact.id]
    assert server.paths().count("/v1/embeddings") >= 3  # probe, write, query


@pytest.mark.pgvector
@pytest.mark.django_db(transaction=True)
def test_it_uses_mem0_extraction_when_an_llm_is_configured(mem0_mode, settings, vector_database):
    server = FakeOpenAIServer(reply={"memory": [{"text": "Dislikes betting companies"}]})
    settings.KARANI_LLM_BASE_URL = server.url
    try:
        fact = services.remember(text="She said no to the casino startup and to the bookmaker")
    finally:
        server.close()

    assert "/v1/chat/completions" in server.paths()
    row = Memory.objects.get(pk=fact.id)
    assert row.indexed_at is not None
    with psycopg.connect(vector_database) as conn:
        data, ledger_id = conn.execute(
            f"SELECT payload->>'data', payload->>'ledger_id' FROM {mem0_mode}"
        ).fetchone()
    assert (data, int(ledger_id)) == ("Dislikes betting companies", fact.id)
    result = selectors.recall(query="gambling employers")
    assert [f.id for f in result.results] == [fact.id]


@pytest.mark.pgvector
@pytest.mark.django_db(transaction=True)
def test_it_loads_the_embedder_in_the_configured_dtype_with_the_same_meaning(mem0_mode, settings):
    import numpy as np
    import torch

    from memory.semantic import client, store

    sentences = [
        "Recruiters at documentation-driven remote employers typically respond within 48 hours.",
        "how fast do handbook-first companies reply?",
    ]
    vectors = {}
    for dtype in ("float32", "bfloat16"):
        settings.KARANI_EMBEDDER_DTYPE = dtype
        loaded = client.get()
        model = loaded.memory.embedding_model.model
        assert next(model.parameters()).dtype == getattr(torch, dtype)
        vectors[dtype] = np.asarray(store.embed_texts(loaded, sentences))

    cosines = np.sum(vectors["float32"] * vectors["bfloat16"], axis=1)
    assert cosines.min() > 0.99, cosines
    # and the paraphrase still matches its fact as well in either type
    for v in vectors.values():
        assert float(v[0] @ v[1]) == pytest.approx(
            float(vectors["float32"][0] @ vectors["float32"][1]), abs=0.02
        )
