"""memory.semantic.mem0_adapter, the one module that leans on what mem0 does not publish, run
against the installed mem0 and a real pgvector store: a mem0 upgrade that breaks any of it
fails here, in one place."""

import gc
import json
import tomllib
from importlib import metadata
from pathlib import Path

import psycopg
import pytest
from packaging.requirements import Requirement
from semantic_support import *  # noqa: F403  (fixtures)

from memory import services
from memory.semantic import client as clientmod
from memory.semantic import mem0_adapter, schema
from memory.semantic.config import MEM0_USER, UNUSED_LLM_URL

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def _indexes(dsn: str, table: str) -> set[str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = %s", [table])
        return {name for (name,) in rows.fetchall()}


def test_it_runs_on_a_mem0_in_the_range_pyproject_pins():
    extra = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]["memory"]
    pinned = next(r for r in map(Requirement, extra) if r.name == "mem0ai")
    assert pinned.specifier.contains(metadata.version("mem0ai")), (
        f"mem0ai {metadata.version('mem0ai')} is outside {pinned.specifier}: re-check "
        "memory/semantic/mem0_adapter.py against it, then move the pin"
    )


@pytest.mark.pgvector
@pytest.mark.django_db(transaction=True)
def test_it_creates_a_new_stores_missing_collection(mem0_mode, vector_database):
    clientmod.get().store.delete_col()
    clientmod.discard_store()
    store = clientmod.get().store  # a new store: schema.ensure -> ensure_collection

    with psycopg.connect(vector_database) as conn:
        assert conn.execute("SELECT to_regclass(%s) IS NOT NULL", [mem0_mode]).fetchone()[0]
    mem0_adapter.ensure_collection(store)  # and once there, nothing to do
    assert store.list(top_k=5) == [[]]


@pytest.mark.pgvector
@pytest.mark.django_db(transaction=True)
def test_it_names_the_indexes_mem0_builds_so_karani_keeps_one_and_drops_the_other(
    mem0_mode, vector_database
):
    client = clientmod.get()
    hnsw = mem0_adapter.index_name(mem0_mode, mem0_adapter.HNSW_INDEX_SUFFIX)
    keyword = mem0_adapter.index_name(mem0_mode, mem0_adapter.KEYWORD_INDEX_SUFFIX)
    client.store.delete_col()
    client.store.create_col()  # mem0's own, with both of its indexes
    assert {hnsw, keyword} <= _indexes(vector_database, mem0_mode)

    schema.ensure_indexes(client.store, client.config)

    found = _indexes(vector_database, mem0_mode)
    assert hnsw in found
    assert keyword not in found


@pytest.mark.pgvector
@pytest.mark.django_db(transaction=True)
def test_it_hands_mem0s_memory_karanis_store(mem0_mode):
    fact = services.remember(text="Prefers teams that write design documents before coding")
    client = clientmod.get()
    gc.collect()  # the detached spare store is gone, and it closed nothing of ours

    assert client.memory.vector_store is client.store
    assert client.memory.collection_name == mem0_mode
    assert not client.pool.closed
    # mem0's own public read goes through the adopted store and finds karani's vector.
    found = client.memory.get_all(filters={"user_id": MEM0_USER})["results"]
    assert [r["metadata"]["ledger_id"] for r in found] == [fact.id]


@pytest.mark.pgvector
@pytest.mark.django_db(transaction=True)
def test_it_keeps_mem0s_llm_calls_on_the_configured_endpoint(mem0_mode, monkeypatch):
    # mem0 would send them to OpenRouter whenever this is set.
    monkeypatch.setenv("OPENROUTER_API_KEY", "not-a-real-key")
    clientmod.discard_all()

    llm = clientmod.get().memory.llm

    assert str(llm.client.base_url).rstrip("/") == UNUSED_LLM_URL
    assert llm.client.max_retries == 0


def test_it_reads_a_chatty_or_fenced_reply_as_mem0_does():
    fenced = '```json\n{"memory": [{"text": "Uses Rust"}]}\n```'
    chatty = 'Sure! {"memory": [{"text": "Uses Rust"}]} Hope that helps.'

    assert json.loads(mem0_adapter.strip_code_fences(fenced)) == {"memory": [{"text": "Uses Rust"}]}
    assert json.loads(mem0_adapter.json_in(chatty)) == {"memory": [{"text": "Uses Rust"}]}
    assert mem0_adapter.strip_code_fences("<think>hmm</think>plain") == "plain"
