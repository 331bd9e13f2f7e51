"""Extraction on a real small model (Qwen2.5-Coder 0.5B, 4,096-token context): every job-search
fact is indexed as it is written, none waits for `reindex`, and the index stays recallable.

    scripts/local-llm start
    .venv/bin/python -m pytest -m realmodel tests/test_realmodel_extraction.py

Skipped unless a model answers (tests/realmodel_support.py); needs pgvector like every mem0
test.
"""

import json
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from realmodel_support import real_llm  # noqa: F401  (fixture)
from semantic_support import *  # noqa: F403  (fixtures)
from semantic_support import karani_warnings, load_paraphrases

from memory import selectors, services
from memory.credentials import find_secrets
from memory.models import Memory
from memory.semantic import client as clientmod
from memory.semantic import extraction

pytestmark = [
    pytest.mark.realmodel,
    pytest.mark.pgvector,
    pytest.mark.django_db(transaction=True),
]

DEMO = Path(__file__).resolve().parent.parent / "scripts" / "demo.jsonl"


@pytest.fixture
def extracting(mem0_mode, settings, real_llm):  # noqa: F811
    url, model = real_llm
    settings.KARANI_LLM_BASE_URL = url
    settings.KARANI_LLM_MODEL = model
    settings.KARANI_LLM_TIMEOUT = 120.0
    settings.KARANI_LLM_CONTEXT = 4096
    extraction.outage.reset()
    yield mem0_mode
    extraction.outage.reset()
    clientmod.discard_all()


def job_search_facts() -> list[dict]:
    demo = [json.loads(line) for line in DEMO.read_text().splitlines() if line.strip()]
    items, _ = load_paraphrases()
    return demo + [{"text": i["fact"], "company": i["company"]} for i in items[:10]]


def index_rows(dsn: str, collection: str) -> list[tuple[int, str]]:
    with psycopg.connect(dsn) as conn:
        return conn.execute(
            sql.SQL("SELECT (payload->>'ledger_id')::int, payload->>'data' FROM {}").format(
                sql.Identifier(collection)
            )
        ).fetchall()


def test_it_indexes_every_fact_as_it_is_written(extracting, vector_database, caplog):
    facts = job_search_facts()
    written, missed_at_once = [], []
    for f in facts:
        w = services.remember(text=f["text"], kind=f.get("kind", "note"), company=f.get("company"))
        written.append(w)
        # Recalled the moment it is written, while the index holds the model's statements.
        at_once = selectors.recall(query=f["text"], company=f.get("company"), limit=5)
        if at_once.fallback or w.id not in [r.id for r in at_once.results]:
            missed_at_once.append(f["text"])

    assert missed_at_once == []
    assert Memory.objects.filter(indexed_at__isnull=True).count() == 0, "a write went pending"
    assert karani_warnings(caplog) == [], "the model must take every prompt karani sends"
    rows = index_rows(vector_database, extracting)
    ledger = {w.id: w.memory.text for w in written}
    assert {ledger_id for ledger_id, _ in rows} == set(ledger)
    extracted = {ledger_id for ledger_id, text in rows if text != ledger[ledger_id]}
    assert extracted, "the model extracted nothing: every row went in verbatim"
    assert [text for _, text in rows if find_secrets(text)] == []
    # Recall answers with the ledger's own words, whatever the index holds.
    for fact, w in zip(facts, written, strict=True):
        result = selectors.recall(query=fact["text"], company=fact.get("company"))
        assert not result.fallback
        assert w.id in [r.id for r in result.results], fact["text"]
