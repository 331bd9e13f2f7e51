"""Semantic mode's hybrid recall: dense + ledger idf coverage, fused per query; scope kept by
both halves; a fact is recalled the moment it is written, whatever the index is doing (issue
17, item 2)."""

import importlib.metadata

import pytest
from semantic_support import *  # noqa: F403  (fixtures)
from semantic_support import closed_port

from memory import lexical, selectors, services
from memory.keyword import Hit
from memory.models import Memory
from memory.semantic import search, store, sync
from memory.semantic.encoder import embed_query
from memory.semantic.guard import guarded

pytestmark = [pytest.mark.pgvector, pytest.mark.django_db(transaction=True)]

# The mem0 release whose vector-store API (PGVector.search: its filter syntax, OutputData's
# cosine score and payload) the dense half was written and tested against.
MEM0_VERIFIED = "2.2.1"


@pytest.fixture
def lagging(monkeypatch):
    """The index takes no writes (as while it catches up): every new fact stays pending."""
    monkeypatch.setattr("memory.index.added", lambda ids: None)


def test_it_was_written_against_this_mem0_release():
    version = importlib.metadata.version("mem0ai")
    assert version == MEM0_VERIFIED, (
        f"mem0ai is {version}, the dense half was verified on {MEM0_VERIFIED}: re-run "
        "tests/test_semantic_*.py and bench/recall_eval.py, then update MEM0_VERIFIED"
    )


def test_it_ranks_a_fact_both_halves_find_above_one_only_one_finds():
    both, dense_only, lexical_only = 1, 2, 3
    dense = [Hit(dense_only, 0.9), Hit(both, 0.85), Hit(10, 0.5), Hit(11, 0.45), Hit(12, 0.4)]
    words = [Hit(lexical_only, 0.9), Hit(both, 0.85), Hit(20, 0.3), Hit(21, 0.2)]

    fused = search.fuse(dense, words)

    assert [h.memory_id for h in fused][:3] == [both, lexical_only, dense_only]


def test_it_ranks_by_how_far_a_fact_stands_out_in_each_half_not_by_raw_scores():
    # A terse question's cosines are all low, a long one's all high: only the order and
    # spread within the query's candidates say which fact stands out.
    dense = [Hit(1, 0.62), Hit(2, 0.61), Hit(3, 0.60), Hit(4, 0.30)]
    words = [Hit(3, 0.9), Hit(5, 0.2), Hit(6, 0.1)]
    low = [Hit(h.memory_id, h.score / 3) for h in dense]

    ranked = [h.memory_id for h in search.fuse(dense, words)]

    assert ranked == [h.memory_id for h in search.fuse(low, words)]
    assert ranked[0] == 3
    assert search.fuse(dense, words, dense_share=1.0)[0].memory_id == 1


def test_a_half_with_one_candidate_or_none_still_counts():
    dense = [Hit(1, 0.7), Hit(2, 0.5), Hit(3, 0.3)]

    assert [h.memory_id for h in search.fuse([], [Hit(9, 0.2)])] == [9]
    assert [h.memory_id for h in search.fuse(dense, [])] == [1, 2, 3]
    assert [h.memory_id for h in search.fuse(dense, [Hit(3, 0.8)])] == [1, 3, 2]


def test_the_lexical_half_counts_less_when_its_best_fact_covers_little_of_the_question():
    dense = [Hit(1, 0.7), Hit(2, 0.5), Hit(3, 0.3)]
    # Fact 3 holds most of the question's idf mass, or only a common word of it.
    covering, common = [Hit(3, 0.9), Hit(4, 0.1)], [Hit(3, 0.15), Hit(4, 0.1)]

    assert [h.memory_id for h in search.fuse(dense, covering)] == [3, 1, 2, 4]
    assert [h.memory_id for h in search.fuse(dense, common)] == [1, 2, 3, 4]
    assert [h.memory_id for h in search.fuse(dense, common, covered=0)] == [3, 1, 2, 4]
    assert search.fuse(dense, common, covered=0) == search.fuse(
        dense, [Hit(3, 0.9), Hit(4, 0.6)], covered=0
    ), "without it, only the spread counts"


def test_the_dense_halfs_best_keep_a_place_in_the_top_five_when_the_lexical_half_is_weak():
    ranked = [Hit(pk, 10.0 - pk) for pk in range(1, 9)]
    dense = [Hit(8, 0.9), Hit(3, 0.8), Hit(7, 0.7)]
    weak, strong = [Hit(1, 0.3)], [Hit(1, 0.9)]

    kept = search.keeping_dense(ranked, dense, weak, keep=2)

    assert [h.memory_id for h in kept] == [1, 2, 3, 4, 8, 5, 6, 7], "5 gives way to 8; 3 stays"
    assert search.keeping_dense(ranked, dense, strong, keep=2) == ranked
    assert search.keeping_dense(ranked, dense, weak, keep=0) == ranked
    assert [h.memory_id for h in search.keeping_dense(ranked, dense, [], keep=3)][:5] == [
        1,
        2,
        3,
        8,
        7,
    ], "no lexical candidate at all is as weak as it gets"
    assert [h.memory_id for h in search.keeping_dense(ranked[:2], dense, weak, keep=1)] == [1, 2, 8]


def test_a_fact_gains_a_share_of_its_best_neighbours_score():
    fused = [Hit(1, 2.0), Hit(5, 1.0), Hit(7, 0.9), Hit(9, 0.0)]
    beside = {1: [2], 2: [1, 3], 3: [2], 7: [8], 8: [7], 9: [5], 5: [9]}

    lifted = {h.memory_id: h.score for h in search.with_context(fused, beside, share=0.4)}

    assert lifted == pytest.approx({1: 2.0, 2: 0.8, 5: 1.0, 7: 0.9, 8: 0.36, 9: 0.4})
    assert 3 not in lifted, "a neighbour of a fact no half found gains nothing and stays out"
    assert search.with_context(fused, beside, share=0.0) == fused


def test_every_fused_candidate_scores_from_zero_where_neither_half_found_it():
    dense = [Hit(1, 0.7), Hit(2, 0.5), Hit(3, 0.3)]
    words = [Hit(3, 0.9), Hit(4, 0.1)]

    fused = {h.memory_id: h.score for h in search.fuse(dense, words)}

    assert min(fused.values()) == 0.0 and all(s >= 0 for s in fused.values())
    assert fused[3] > fused[1] > fused[2] > fused[4] == 0.0


def test_a_facts_neighbours_are_the_live_facts_written_beside_it_in_its_company():
    a1 = services.remember(text="Acme first", company="Acme").id
    g1 = services.remember(text="Global first").id
    b1 = services.remember(text="Globex first", company="Globex").id
    a2 = services.remember(text="Acme second", company="Acme").id
    gone = services.remember(text="Acme deleted", company="Acme").id
    a3 = services.remember(text="Acme third", company="Acme").id
    g2 = services.remember(text="Global second").id
    services.forget(id=gone, reason="test")

    near = search.neighbours([a2, g1, b1, gone], company_key="acme")
    everywhere = search.neighbours([a2, b1], company_key=None)

    assert {k: sorted(v) for k, v in near.items()} == {
        a2: [a1, a3],
        a1: [a2],
        a3: [a2],
        g1: [g2],
        g2: [g1],
    }, "Globex's fact is out of the scope and the deleted one is nobody's neighbour"
    assert {k: sorted(v) for k, v in everywhere.items()} == {a2: [a1, a3], a1: [a2], a3: [a2]}
    assert search.neighbours([], company_key=None) == {}


def test_it_recalls_the_fact_written_right_after_the_one_naming_the_subject(mem0_mode):
    named = services.remember(
        text="Acme's recruiter asked about the Zorbleck migration.", company="Acme"
    )
    answer = services.remember(text="I said we moved forty services in a weekend.", company="Acme")
    other = services.remember(text="Globex: nothing moved in a weekend.", company="Globex")
    for month in ("March", "April", "May", "June", "July", "August"):
        services.remember(text=f"Acme plans a database migration in {month}.", company="Acme")

    result = selectors.recall(query="the zorbleck migration", company="Acme", limit=2)
    words = lexical.search(query="the zorbleck migration", company_key="acme", limit=50)

    assert not result.fallback
    assert [f.id for f in result.results] == [named.id, answer.id]
    assert answer.id not in {h.memory_id for h in words}, "no word of the query is in it"
    assert other.id not in {
        f.id
        for f in selectors.recall(query="the zorbleck migration", company="Acme", limit=50).results
    }


def test_it_finds_a_rare_name_the_embedding_misses(mem0_mode):
    target = services.remember(text="Zorbleck Analytics pays for a yearly conference trip.")
    for n in range(30):
        services.remember(text=f"Conference travel budgets are common at company number {n}.")

    result = selectors.recall(query="what does zorbleck pay for?", limit=5)

    assert not result.fallback
    assert result.results[0].id == target.id


def test_it_finds_a_paraphrase_no_word_of_which_is_in_the_fact(mem0_mode):
    fact = services.remember(
        text="Recruiters at documentation-driven remote employers respond fast."
    )
    services.remember(text="Bike storage at the office is a nice bonus.")
    services.remember(text="She prefers morning interviews before ten.")

    result = selectors.recall(query="how quickly do handbook-first companies reply?", limit=3)

    assert not result.fallback
    assert fact.id in [f.id for f in result.results]


def test_it_never_returns_another_companys_fact_from_either_half(mem0_mode, lagging):
    # Globex's fact matches every query word and is pending (only the lexical half could
    # find it); Initech's is indexed (the dense half could).
    initech = services.remember(text="Recruiters answer within an hour", company="Initech")
    sync.added([initech.id])
    globex = services.remember(text="Recruiters answer applications fast", company="Globex")
    acme = services.remember(text="Acme recruiters take a week to reply", company="Acme")
    shared = services.remember(text="Recruiters rarely answer on Fridays")

    scoped = selectors.recall(query="how fast do recruiters answer applications", company="Acme")
    words = lexical.search(query="recruiters answer applications", company_key="acme", limit=50)
    dense = guarded(
        lambda c: search.nearest(
            c, embed_query(c, "recruiters answer"), company_key="acme", depth=50
        )
    )

    assert not scoped.fallback
    assert {f.id for f in scoped.results} <= {acme.id, shared.id}
    assert acme.id in {f.id for f in scoped.results}
    assert {h.memory_id for h in words} <= {acme.id, shared.id}
    assert {h.memory_id for h in dense} <= {acme.id, shared.id}
    assert globex.id in {
        h.memory_id
        for h in lexical.search(query="recruiters answer applications", company_key=None, limit=50)
    }


def test_it_recalls_a_pending_fact_at_once_while_the_index_lags(mem0_mode, lagging):
    fact = services.remember(
        text="Globex recruiters answer within two working days", company="Globex"
    )
    assert Memory.objects.get(pk=fact.id).indexed_at is None

    result = selectors.recall(query="how quickly do Globex recruiters answer", company="Globex")

    assert (result.mode, result.fallback) == ("mem0", False)
    assert [f.id for f in result.results][:1] == [fact.id]


def test_it_misses_none_of_a_hundred_facts_written_while_the_index_lags(mem0_mode, lagging):
    services.remember(text="Remote roles with async teams are preferred")  # some company
    misses = []
    for n in range(100):
        company = ["Acme", "Globex", None][n % 3]
        text = f"Interview round {n} feedback: strong on system design, codeword q{n}x"
        fact = services.remember(text=text, company=company)
        result = selectors.recall(query=f"feedback codeword q{n}x", company=company, limit=5)
        if result.fallback or fact.id not in [f.id for f in result.results]:
            misses.append(n)

    assert Memory.objects.filter(indexed_at__isnull=True).count() == 101
    assert misses == []


def test_it_recalls_a_fact_written_while_the_store_is_down(mem0_mode, settings):
    services.remember(text="Prefers product companies over agencies")
    settings.KARANI_VECTOR_DSN = f"postgresql://postgres@127.0.0.1:{closed_port()}/nothing"

    fact = services.remember(text="Wingtip sponsors work visas", company="Wingtip")
    result = selectors.recall(query="does Wingtip sponsor visas", company="Wingtip")

    assert Memory.objects.get(pk=fact.id).indexed_at is None, "the write lands, pending"
    assert (result.mode, result.fallback) == ("mem0", True)
    assert [f.id for f in result.results][:1] == [fact.id]


def test_it_recalls_a_fact_written_with_the_store_up_at_once_a_vector_per_sentence(mem0_mode):
    text = "Fabrikam: the loop has a take-home exercise. The offer came in March! Is it fine?"
    fact = services.remember(text=text, company="Fabrikam")
    vector = guarded(lambda c: embed_query(c, "Fabrikam: The offer came in March!"))

    result = selectors.recall(query="take-home exercise", company="Fabrikam")
    rows = guarded(lambda c: store.counts(c))
    dense = guarded(lambda c: search.nearest(c, vector, company_key="fabrikam", depth=10))

    assert Memory.objects.get(pk=fact.id).indexed_at is not None
    assert (result.mode, result.fallback) == ("mem0", False)
    assert [f.id for f in result.results][:1] == [fact.id]
    assert store.sentences(text)[1:] == [
        "Fabrikam: The offer came in March!",
        "Fabrikam: Is it fine?",
    ]
    assert store.sentences("One sentence, however long it is.") == []
    assert len(store.sentences(" ".join(f"Word {n}." for n in range(100)))) == store.MAX_SENTENCES
    assert store.sentences("Acme pays well. Acme pays well. Leeds office.") == [
        "Acme pays well.",
        "Leeds office.",
    ]
    assert store.sentences("Word. " * 100) == [], "one sentence, however often it is said"
    assert rows == (4, 1, 0), "the whole text and each of its three sentences, none twice"
    assert dense[0].memory_id == fact.id and dense[0].score > 0.99
    assert [h.memory_id for h in dense] == [fact.id], "a fact counts once, at its best row"
