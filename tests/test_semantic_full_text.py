"""The hybrid's lexical half (memory.lexical): idf-weighted word coverage on the ledger's own
full-text index (FTS5 on SQLite, the GIN index on PostgreSQL), against the same ranking
written in plain Python over every live fact."""

import math
import random

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory import lexical, services
from memory import text as textmod
from memory.models import Memory

pytestmark = pytest.mark.django_db

WORDS = ["remote", "async", "python", "rust", "salary", "visa", "design", "documents", "team"]
RARE = ["quokka", "zeppelin", "marzipan", "obsidian"]
COMPANIES = [None, "Acme", "Globex"]
QUERIES = [
    "remote python team",
    "quokka",
    "zeppelin salary visa",
    "rust",
    "design documents for a remote team with quokka",
    "nothing matches this",
]


def reference(query: str, company_key: str | None, limit: int) -> list[tuple[int, float]]:
    """memory.lexical's docstring, in Python: the share of the query's idf mass a fact holds,
    for the facts holding an uncommon query word (or the rarest, when all are common)."""
    live = list(Memory.objects.values_list("id", "terms", "company_key"))
    words = textmod.tokens(query)[: textmod.MAX_QUERY_TOKENS]
    df = {w: sum(1 for _, t, _ in live if w in t.split()) for w in words}
    idf = {w: math.log(1 + (len(live) - df[w] + 0.5) / (df[w] + 0.5)) for w in words}
    mass = sum(idf.values())
    held = [w for w in words if df[w]]
    if not held:
        return []
    drawing = [w for w in held if df[w] <= lexical.COMMON_POSTINGS]
    drawing = drawing or [min(held, key=lambda w: df[w])]
    scores = []
    for pk, terms, company in live:
        if company_key is not None and company not in (company_key, None):
            continue
        if set(drawing) & set(terms.split()):
            scores.append((pk, sum(idf[w] for w in held if w in terms.split()) / mass))
    scores.sort(key=lambda kv: (-round(kv[1], 9), -kv[0]))
    return scores[:limit]


@pytest.fixture
def ledger(settings):
    settings.KARANI_MEMORY = "basic"
    rng = random.Random(13)
    facts = []
    for i in range(300):
        words = rng.sample(WORDS, rng.randint(1, 6))
        if rng.random() < 0.05:
            words.append(rng.choice(RARE))
        facts.append({"text": f"Fact {i}: {' '.join(words)}", "company": rng.choice(COMPANIES)})
    services.import_facts(records=enumerate(facts, start=1))
    gone = Memory.objects.filter(text__contains="quokka").order_by("id").first()
    services.forget(id=gone.id, reason="test")
    lexical.forget_stats()
    yield gone.id
    lexical.forget_stats()


@pytest.mark.parametrize("company_key", [None, "acme"])
@pytest.mark.parametrize("query", QUERIES)
def test_it_ranks_as_the_python_reference(ledger, query, company_key):
    ours = lexical.search(query=query, company_key=company_key, limit=20)
    theirs = reference(query, company_key, 20)

    assert [h.memory_id for h in ours] == [pk for pk, _ in theirs]
    assert [h.score for h in ours] == pytest.approx([s for _, s in theirs], rel=1e-6)


@pytest.mark.parametrize("query", QUERIES)
def test_it_draws_candidates_from_uncommon_words_only(ledger, query, monkeypatch):
    monkeypatch.setattr(lexical, "COMMON_POSTINGS", 40)  # every word of WORDS is common here

    for tiered_above, target in [(10_000, 1), (0, 1), (0, 0.1)]:
        # Asking for the best tier first (enough facts, or too few: all again) changes nothing.
        monkeypatch.setattr(lexical, "TIERED_ABOVE", tiered_above)
        monkeypatch.setattr(lexical, "TIER_TARGET", target)
        ours = lexical.search(query=query, company_key="globex", limit=20)
        theirs = reference(query, "globex", 20)

        assert [h.memory_id for h in ours] == [pk for pk, _ in theirs]
        assert [h.score for h in ours] == pytest.approx([s for _, s in theirs], rel=1e-6)


def test_the_best_tier_holds_every_candidate_above_its_floor_and_no_other():
    units = {"a": 5, "b": 4, "c": 3, "d": 1}
    share = {"a": 0.5, "b": 0.3, "c": 0.2, "d": 0.6}
    subsets = [
        {w for i, w in enumerate(units) if mask >> i & 1} for mask in range(1, 1 << len(units))
    ]
    for drawing, wanted in [(["a"], 0.05), (["b", "d"], 0.2), (["c"], 0.01)]:
        tier = lexical._top_tier(units, share, drawing, wanted)
        floor = min(sum(units[w] for w in words) for words in tier)
        for held in (s for s in subsets if s & set(drawing)):
            inside = any(held >= set(words) for words in tier)
            assert inside == (sum(units[w] for w in held) >= floor), (drawing, held)
        # Words taken as independent, the tier is expected to hold at least ``wanted``.
        assert (
            sum(
                math.prod(share[w] if w in held else 1 - share[w] for w in units)
                for held in subsets
                if held & set(drawing) and sum(units[w] for w in held) >= floor
            )
            >= wanted
        )
    assert lexical._top_tier(units, share, ["a"], 0.9) is None  # more than all of them


@pytest.mark.postgres
def test_a_frequent_words_df_comes_from_postgresqls_statistics_on_a_large_ledger(
    ledger, monkeypatch
):
    live = [t.split() for t in Memory.objects.values_list("terms", flat=True)]
    exact = {w: sum(w in terms for terms in live) for w in ("remote", "quokka")}
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories")

    # Below ESTIMATE_ABOVE facts every word is counted, statistics or not.
    assert lexical.document_frequencies(["remote", "quokka"]) == [exact["remote"], exact["quokka"]]
    assert [
        h.memory_id for h in lexical.search(query="remote quokka", company_key=None, limit=20)
    ] == [pk for pk, _ in reference("remote quokka", None, 20)]

    lexical.forget_stats()
    monkeypatch.setattr(lexical, "ESTIMATE_ABOVE", 100)
    monkeypatch.setattr(lexical, "ESTIMATED_POSTINGS", 40)
    assert exact["remote"] > 40 > exact["quokka"]
    with CaptureQueriesContext(connection) as queries:
        remote, quokka = lexical.document_frequencies(["remote", "quokka"])

    # ANALYZE sampled every row here, the deleted one too: its share times the live count.
    assert abs(remote - exact["remote"]) <= 1 and quokka == exact["quokka"]
    counted = [q["sql"] for q in queries if "count(*)" in q["sql"] and "tsquery" in q["sql"]]
    assert len(counted) == 1 and counted[0].count("tsquery") == 1, "only the rare word is counted"


def test_it_never_returns_a_forgotten_fact_or_another_companys(ledger):
    found = lexical.search(query="quokka zeppelin marzipan obsidian", company_key="acme", limit=100)

    rows = Memory.all_objects.in_bulk([h.memory_id for h in found])
    assert ledger not in rows
    assert all(r.deleted_at is None for r in rows.values())
    assert {r.company_key for r in rows.values()} <= {"acme", None}


def test_a_rare_word_outweighs_a_common_one(settings):
    settings.KARANI_MEMORY = "basic"
    for n in range(20):
        services.remember(text=f"Team {n} works remote")
    rare = services.remember(text="Quokka Labs hires")

    top = lexical.search(query="remote quokka", company_key=None, limit=3)

    assert top[0].memory_id == rare.id
    assert top[0].score > 0.5 > min((h.score for h in top[1:]), default=0.0)


def test_a_query_of_stopwords_matches_nothing(ledger):
    assert lexical.search(query="what is the", company_key=None, limit=5) == []
