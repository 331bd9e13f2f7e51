"""Recall in mem0 mode: real pgvector, the real bundled model, mapped back to live rows."""

import pytest
from semantic_support import *  # noqa: F403  (fixtures)
from semantic_support import index_vectors, load_paraphrases

from memory import keyword, selectors, services
from memory import text as textmod
from memory.models import Memory

pytestmark = [pytest.mark.pgvector, pytest.mark.django_db(transaction=True)]

RECRUITER = "Recruiters at documentation-driven remote employers typically respond within 48 hours."
# Measured on this set (bench/recall_eval.py, job search): hybrid recall@5 0.70-0.77, keyword
# recall 0.00 by construction. Below this the semantic path has stopped working.
MIN_RECALL_AT_5 = 0.65


def _teach_paraphrase_set() -> dict[str, int]:
    items, distractors = load_paraphrases()
    ids = {}
    for item in items:
        ids[item["fact"]] = services.remember(text=item["fact"], company=item["company"]).id
    for text in distractors:
        services.remember(text=text)
    return ids


def test_it_keeps_the_paraphrase_set_free_of_shared_keywords():
    items, distractors = load_paraphrases()
    assert len(items) >= 40 and distractors
    for item in items:
        shared = set(textmod.tokens(item["fact"])) & set(textmod.tokens(item["query"]))
        assert not shared, (item["query"], shared)


def test_it_finds_a_paraphrase_that_shares_no_keyword(mem0_mode):
    ids = _teach_paraphrase_set()

    result = selectors.recall(query="how fast do handbook-first companies reply?")

    assert (result.mode, result.fallback) == ("mem0", False)
    assert ids[RECRUITER] in [f.id for f in result.results]
    assert (
        selectors.recall(query="how fast do handbook-first companies reply?").to_dict()["fallback"]
        is False
    )
    # Keyword recall cannot: not one content word in common.
    words = keyword.search(
        query="how fast do handbook-first companies reply?", company_key=None, limit=5
    )
    assert ids[RECRUITER] not in [h.memory_id for h in words]


def test_it_recalls_most_paraphrases_in_the_top_five(mem0_mode):
    ids = _teach_paraphrase_set()
    items, _ = load_paraphrases()
    found = 0
    for item in items:
        result = selectors.recall(query=item["query"], company=item["company"], limit=5)
        assert not result.fallback
        found += ids[item["fact"]] in [f.id for f in result.results]
    assert found / len(items) >= MIN_RECALL_AT_5, f"recall@5 = {found}/{len(items)}"


def test_it_stores_ledger_id_kind_and_company_and_keeps_the_vector_id(mem0_mode, vector_database):
    fact = services.remember(text="Prefers Rust shops", kind="preference", company="Acme Corp")
    global_fact = services.remember(text="Likes quiet offices")

    row = Memory.objects.get(pk=fact.id)
    assert row.vector_id and row.indexed_at is not None
    assert index_vectors(vector_database, mem0_mode) == {fact.id: 1, global_fact.id: 1}

    import psycopg

    with psycopg.connect(vector_database) as conn:
        payloads = dict(conn.execute(f"SELECT id::text, payload FROM {mem0_mode}").fetchall())
    assert payloads[row.vector_id]["ledger_id"] == fact.id
    assert payloads[row.vector_id]["kind"] == "preference"
    assert payloads[row.vector_id]["company"] == "acme corp"
    global_vid = Memory.objects.get(pk=global_fact.id).vector_id
    assert payloads[global_vid]["company"] == "__GLOBAL__"


def test_it_isolates_companies_in_the_store_query(mem0_mode):
    acme = services.remember(text="Offers a generous relocation package", company="Acme")
    other = services.remember(text="Offers a generous relocation budget", company="Globex")
    shared = services.remember(text="Relocation help is common in Germany")

    scoped = selectors.recall(query="moving assistance", company="Acme", limit=100)
    everyone = selectors.recall(query="moving assistance", limit=100)

    assert not scoped.fallback
    assert {f.id for f in scoped.results} == {acme.id, shared.id}
    assert {f.id for f in everyone.results} == {acme.id, other.id, shared.id}

    from memory.semantic import search as semantic
    from memory.semantic.encoder import embed_query
    from memory.semantic.guard import guarded

    raw = guarded(
        lambda c: semantic.nearest(
            c, embed_query(c, "moving assistance"), company_key="acme", depth=50
        )
    )
    assert other.id not in {h.memory_id for h in raw}, "the filter must run in the store"


def test_one_statement_finds_for_each_query_what_mem0s_search_finds(mem0_mode):
    # A posting's pieces are searched in one statement (search.nearest_many); mem0's own
    # one-vector search, with the same scope, is the reference.
    from memory.semantic import search as semantic
    from memory.semantic.encoder import embed_queries
    from memory.semantic.guard import guarded

    _teach_paraphrase_set()
    for n in range(6):
        services.remember(text=f"Acme sentence {n} about the office and its hours", company="Acme")
        services.remember(text=f"Globex sentence {n} about pay and the pager", company="Globex")
    queries = [item["query"] for item in load_paraphrases()[0][:12]] + ["office hours", "pay"]

    def both(client, company_key):
        vectors = embed_queries(client, queries)
        batch = semantic.nearest_many(client, vectors, company_key=company_key, depth=8)
        one_by_one = []
        for vector in vectors:
            rows = client.store.search(
                query="", vectors=vector, top_k=8, filters=semantic.scope_filters(company_key)
            )
            ranked = sorted(rows, key=lambda r: -float(r.score))
            one_by_one.append([(r.payload["ledger_id"], round(float(r.score), 5)) for r in ranked])
        return batch, one_by_one

    for company_key in (None, "acme", "globex", "nobody"):
        batch, reference = guarded(lambda c, key=company_key: both(c, key))
        assert [[(h.memory_id, round(h.score, 5)) for h in hits] for hits in batch] == reference
        assert all(hits for hits in batch), company_key

    def by_side(client, company_key):
        # The working-context block's search: each side scanned apart, 8 of each.
        vectors = embed_queries(client, queries)
        batch = semantic.nearest_many(
            client, vectors, company_key=company_key, depth=8, per_side=True
        )
        apart = []
        for vector in vectors:
            rows = [
                row
                for side in (company_key, semantic.GLOBAL_SENTINEL)
                for row in client.store.search(
                    query="",
                    vectors=vector,
                    top_k=8,
                    filters={"user_id": semantic.MEM0_USER, "company": side},
                )
            ]
            apart.append(sorted((-round(float(r.score), 5), r.payload["ledger_id"]) for r in rows))
        return [sorted((-round(h.score, 5), h.memory_id) for h in hits) for hits in batch], apart

    for company_key in ("acme", "globex"):
        batch, reference = guarded(lambda c, key=company_key: by_side(c, key))
        assert batch == reference
        # Six of the company's facts and eight unscoped ones, whatever their scores.
        assert all(len(hits) == 14 for hits in batch), [len(hits) for hits in batch]


def test_a_postings_pieces_searched_pass_by_pass_find_what_one_statement_finds(mem0_mode):
    # The seam scans each pass's vectors while the next pass is encoded; the answer is the one
    # statement's over every vector, in the queries' order, kept ones and repeats included.
    from memory import index
    from memory.semantic import encoder
    from memory.semantic import search as semantic
    from memory.semantic.guard import guarded

    _teach_paraphrase_set()
    for n in range(6):
        services.remember(text=f"Acme sentence {n} about the office and its hours", company="Acme")
    queries = [item["query"] for item in load_paraphrases()[0][:20]]
    queries += ["office hours", queries[3], "pay"]
    encoder.embed_queries(guarded(lambda c: c), queries[5:9])  # met in an earlier posting
    assert len(set(queries)) > 2 * encoder.QUERIES_PER_PASS

    passes = index.nearest_many(queries=queries, company_key="acme", limit=8, per_side=True)
    whole = guarded(
        lambda c: semantic.nearest_many(
            c, encoder.embed_queries(c, queries), company_key="acme", depth=8, per_side=True
        )
    )

    assert [[h.memory_id for h in hits] for hits in passes] == [
        [h.memory_id for h in hits] for hits in whole
    ]
    assert all(hits for hits in passes)


def test_it_does_not_reindex_a_dedupe_touch(mem0_mode, vector_database):
    first = services.remember(text="Enjoys pairing sessions")
    before = Memory.objects.get(pk=first.id)

    again = services.remember(text="enjoys  PAIRING sessions")

    after = Memory.objects.get(pk=first.id)
    assert not again.created and again.id == first.id
    assert (after.vector_id, after.indexed_at) == (before.vector_id, before.indexed_at)
    assert index_vectors(vector_database, mem0_mode) == {first.id: 1}


def test_it_removes_forgotten_and_corrected_rows_from_the_index(mem0_mode, vector_database):
    gone = services.remember(text="Wants a standing desk")
    old = services.remember(text="Salary floor is 80k")

    services.forget(id=gone.id, reason="no longer true")
    new = services.correct(id=old.id, text="Salary floor is 95k", reason="raised")

    assert index_vectors(vector_database, mem0_mode) == {new.pk: 1}
    assert Memory.all_objects.get(pk=gone.id).vector_id is None
    recalled = selectors.recall(query="minimum pay expectation", limit=10)
    assert [f.id for f in recalled.results] == [new.pk]


def test_it_never_returns_a_deleted_fact_from_a_stale_index(
    mem0_mode, vector_database, monkeypatch
):
    stale = services.remember(text="Open to relocating to Berlin")
    kept = services.remember(text="Would move to Lisbon for the right team")
    # The index misses the removal (as when the store was down during forget).
    monkeypatch.setattr("memory.index.removed", lambda ids: None)
    services.forget(id=stale.id, reason="changed her mind")
    corrected = services.correct(id=kept.id, text="Would move to Porto", reason="typo")

    assert stale.id in index_vectors(vector_database, mem0_mode)
    result = selectors.recall(query="moving to another city", limit=10)

    assert not result.fallback
    assert [f.id for f in result.results] == [corrected.pk]
