"""Recall's full-text half on the stored tsvector: mem0's keyword_search, same rows and scores."""

import logging
import random

import psycopg
import pytest
from psycopg import sql
from semantic_support import *  # noqa: F403  (fixtures)

from memory import services
from memory.models import Memory
from memory.semantic import client as clientmod
from memory.semantic import search, store
from memory.semantic.reindex import reindex

pytestmark = [pytest.mark.pgvector, pytest.mark.django_db(transaction=True)]

ROLES = ["frontend engineer", "backend engineer", "devops engineer", "data scientist"]
TRAITS = ["remote", "async", "python", "rust", "salary", "visa", "design documents"]
RARE = ["quokka", "zeppelin", "marzipan", "obsidian", "tamarind"]
COMPANIES = [None, "Acme", "Globex"]
QUERIES = [
    "frontend engineer",  # common words: hundreds of matches, ties at every LIMIT
    "engineer",
    "remote python role",
    "devops engineer with salary visa",
    "quokka",  # rare words: a handful of matches, all returned
    "zeppelin marzipan",
    "nothing matches this",
]


def _facts(n: int) -> list[dict]:
    rng = random.Random(7)
    facts = []
    for i in range(n):
        words = [rng.choice(ROLES), *rng.sample(TRAITS, rng.randint(0, 3))]
        if rng.random() < 0.05:
            words.append(rng.choice(RARE))
        # Repeating a word changes ts_rank_cd, so scores vary beyond "matched or not".
        if rng.random() < 0.2:
            words.append(words[0])
        fact = {"text": f"Fact {i}: {' '.join(words)}"}
        if company := rng.choice(COMPANIES):
            fact["company"] = company
        facts.append(fact)
    return facts


def _mem0(client, lemmatized: str, top_k: int, filters: dict) -> list[tuple[str, float]]:
    found = client.store.keyword_search(query=lemmatized, top_k=top_k, filters=filters)
    assert found is not None, "mem0's keyword_search failed"
    return [(r.id, r.score) for r in found]


def _assert_same(ours: list, theirs: list, top_k: int) -> None:
    """Same score-sorted lists; at a LIMIT cut through exact ties, only which tied rows differ."""
    assert [s for _, s in ours] == [s for _, s in theirs]
    if len(theirs) < top_k or not theirs:
        assert sorted(ours) == sorted(theirs)
        return
    boundary = theirs[-1][1]
    assert {r for r in ours if r[1] > boundary} == {r for r in theirs if r[1] > boundary}


@pytest.fixture
def many_facts(mem0_mode, settings):
    settings.KARANI_MEMORY = "basic"  # a ledger the index has never seen
    report = services.import_facts(records=enumerate(_facts(600), start=1))
    assert report.created == 600
    settings.KARANI_MEMORY = "mem0"
    assert reindex().matches
    return mem0_mode


def test_it_returns_mem0s_full_text_rows_and_scores(many_facts):
    from mem0.utils.lemmatization import lemmatize_for_bm25

    client = clientmod.get()
    cut_through_ties = 0
    for query in QUERIES:
        lemmatized = lemmatize_for_bm25(query)
        for company in (None, "acme", "globex"):
            filters = search.scope_filters(company)
            for top_k in (5, 30, 1000):
                ours = search.full_text_scores(
                    client, lemmatized=lemmatized, top_k=top_k, filters=filters
                )
                theirs = _mem0(client, lemmatized, top_k, filters)
                _assert_same(ours, theirs, top_k)
                if len(theirs) == top_k and theirs[-1][1] == theirs[0][1]:
                    cut_through_ties += 1
    # The comparison covered what matters: LIMITs that cut through ties, and scope filters
    # that really narrow (a scoped query sees fewer rows than the unscoped one).
    assert cut_through_ties > 0
    everything = search.full_text_scores(
        client, lemmatized="engineer", top_k=1000, filters=search.scope_filters(None)
    )
    scoped = search.full_text_scores(
        client, lemmatized="engineer", top_k=1000, filters=search.scope_filters("acme")
    )
    assert 0 < len(scoped) < len(everything) < 1000
    assert len({s for _, s in everything}) > 1  # scores vary, not just matched-or-not


def _column_and_index(dsn: str, collection: str) -> tuple[bool, bool]:
    with psycopg.connect(dsn) as conn:
        column = conn.execute(
            "SELECT attgenerated FROM pg_attribute WHERE attrelid = to_regclass(%s) "
            "AND attname = %s AND NOT attisdropped",
            (f'"{collection}"', store.TSV_COLUMN),
        ).fetchone()
        index = conn.execute(
            "SELECT reloptions FROM pg_class WHERE oid = to_regclass(%s)",
            (f'"{collection}_{store.TSV_COLUMN}_idx"',),
        ).fetchone()
    return column == ("s",), index is not None and index[0] == ["fastupdate=off"]


def test_it_leaves_an_older_collection_to_reindex_and_answers_meanwhile(
    mem0_mode, vector_database, caplog
):
    first = services.remember(text="Rejected the zeppelin startup over salary")
    assert _column_and_index(vector_database, mem0_mode) == (True, True)
    # As an older karani left it: mem0's table and indexes, no stored tsvector.
    with psycopg.connect(vector_database, autocommit=True) as conn:
        conn.execute(
            sql.SQL("ALTER TABLE {} DROP COLUMN {}").format(
                sql.Identifier(mem0_mode), sql.Identifier(store.TSV_COLUMN)
            )
        )
    assert _column_and_index(vector_database, mem0_mode) == (False, False)
    # A process that cached the store before: the full-text half fails like mem0's (None),
    # and recall still answers from the vector query.
    assert (
        search.full_text_scores(
            clientmod.get(), lemmatized="zeppelin", top_k=5, filters=search.scope_filters(None)
        )
        is None
    )
    assert not services.recall(query="zeppelin salary", limit=5).fallback

    # A new process: first use does not rewrite a populated table (a web worker would hang
    # on it past its timeout); the full-text half goes through mem0's own query instead.
    clientmod.discard_store()
    with caplog.at_level(logging.WARNING, logger="karani.memory"):
        result = services.recall(query="zeppelin salary", limit=5)
    assert "until `karani reindex` adds it" in caplog.text
    assert not result.fallback and first.id in [r.id for r in result.results]
    assert _column_and_index(vector_database, mem0_mode) == (False, False)
    client = clientmod.get()
    assert client.full_text_column is False
    ours = search.full_text_scores(
        client, lemmatized="zeppelin", top_k=5, filters=search.scope_filters(None)
    )
    assert ours == _mem0(client, "zeppelin", 5, search.scope_filters(None)) and len(ours) == 1

    # An operator's reindex adds the column and its index; the next connection uses them.
    assert reindex(pending_only=True).matches
    assert _column_and_index(vector_database, mem0_mode) == (True, True)
    clientmod.discard_store()
    client = clientmod.get()
    assert client.full_text_column is True
    ours = search.full_text_scores(
        client, lemmatized="zeppelin", top_k=5, filters=search.scope_filters(None)
    )
    assert ours == _mem0(client, "zeppelin", 5, search.scope_filters(None)) and len(ours) == 1


def _toast_bytes(dsn: str, collection: str) -> int:
    with psycopg.connect(dsn) as conn:
        return conn.execute(
            "SELECT pg_relation_size(reltoastrelid) FROM pg_class WHERE oid = to_regclass(%s)",
            (f'"{collection}"',),
        ).fetchone()[0]


def test_it_finds_a_fact_remembered_afterwards_by_full_text(mem0_mode, vector_database):
    services.remember(text="Prefers async teams")
    client = clientmod.get()
    filters = search.scope_filters("acme")
    assert search.full_text_scores(client, lemmatized="marzipan", top_k=5, filters=filters) == []
    # Long enough that, with its tsvector, the row passes PostgreSQL's default TOAST threshold.
    text = "Acme ships marzipan robots to confectioners " + "and bakeries across the region " * 4
    fact = services.remember(text=text, company="Acme")
    ours = search.full_text_scores(client, lemmatized="marzipan", top_k=5, filters=filters)
    assert ours == _mem0(client, "marzipan", 5, filters)
    stored = Memory.all_objects.get(pk=fact.id).vector_id
    assert [vector_id for vector_id, _ in ours] == [stored]
    # The vector stayed in the row (toast_tuple_target): none went to the TOAST table.
    assert _toast_bytes(vector_database, mem0_mode) == 0
