"""In mem0 mode, `karani secrets --redact` leaves no copy in the semantic index: the vectors
of the redacted facts go, the store's table is rewritten, and the live facts come back with
their redacted text (the real store, the bundled embedding model)."""

from io import StringIO

import psycopg
import pytest
from django.core.management import call_command
from psycopg import sql
from semantic_support import *  # noqa: F403  (fixtures)
from semantic_support import index_vectors

from memory import text as textmod
from memory.models import Memory

pytestmark = [pytest.mark.pgvector, pytest.mark.django_db(transaction=True)]

TOKEN = "ghp_Q7mZ2xW9rT4kP1vN8bL3cF6hJ0dS5gY2aE7u"


def _payload_texts(dsn: str, collection: str) -> list[str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            sql.SQL("SELECT payload::text FROM {}").format(sql.Identifier(collection))
        ).fetchall()
    return [row[0] for row in rows]


def test_redaction_purges_the_vectors_and_reindexes_the_live_fact(mem0_mode, vector_database):
    text = f"Recruiter pasted {TOKEN} into the chat about the Berlin role"
    fact = Memory.all_objects.create(
        text=text, fact_key=textmod.fact_key(text=text, kind="note", company_key=None)
    )
    call_command("reindex", stdout=StringIO(), stderr=StringIO())
    assert index_vectors(vector_database, mem0_mode) == {fact.pk: 1}
    assert any(TOKEN in p for p in _payload_texts(vector_database, mem0_mode))

    call_command("secrets", "--redact", stdout=StringIO())

    payloads = _payload_texts(vector_database, mem0_mode)
    assert payloads and not any(TOKEN in p for p in payloads)
    assert any("[redacted: github-pat]" in p for p in payloads)
    assert index_vectors(vector_database, mem0_mode) == {fact.pk: 1}
    assert Memory.objects.get(pk=fact.pk).indexed_at is not None
