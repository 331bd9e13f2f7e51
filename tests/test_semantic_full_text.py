"""The hybrid's lexical half (memory.lexical): BM25 on the ledger's own full-text index, on
SQLite (FTS5's bm25) and PostgreSQL (one statement over the GIN index), against the same
ranking written in plain Python over every live fact."""

import math
import random

import pytest

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
    """memory.lexical's docstring, in Python: BM25 with FTS5's idf and k1/b, term frequency 1."""
    live = list(Memory.objects.values_list("id", "terms", "company_key"))
    n = len(live)
    average = sum(len(t.split()) for _, t, _ in live) / n
    words = textmod.tokens(query)[: textmod.MAX_QUERY_TOKENS]
    df = {w: sum(1 for _, t, _ in live if w in t.split()) for w in words}
    scores = []
    for pk, terms, company in live:
        if company_key is not None and company not in (company_key, None):
            continue
        held = [w for w in words if w in terms.split()]
        if not held:
            continue
        idf = sum(max(math.log((n - df[w] + 0.5) / (df[w] + 0.5)), 1e-6) for w in held)
        norm = 1 - lexical.B + lexical.B * len(terms.split()) / average
        scores.append((pk, idf * (lexical.K1 + 1) / (1 + lexical.K1 * norm)))
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
def test_it_normalises_by_the_query_idf_mass(ledger, query):
    live = list(Memory.objects.values_list("terms", flat=True))
    words = textmod.tokens(query)
    mass = sum(lexical.idf(len(live), sum(w in t.split() for t in live)) for w in words)

    ours = lexical.normalised_search(query=query, company_key=None, limit=20)

    assert [h.score for h in ours] == pytest.approx(
        [s / mass for _, s in reference(query, None, 20)]
    )


def test_it_never_returns_a_forgotten_fact_or_another_companys(ledger):
    found = lexical.search(query="quokka zeppelin marzipan obsidian", company_key="acme", limit=100)

    rows = Memory.all_objects.in_bulk([h.memory_id for h in found])
    assert ledger not in rows
    assert all(r.deleted_at is None for r in rows.values())
    assert {r.company_key for r in rows.values()} <= {"acme", None}


def test_a_rare_word_outweighs_a_common_one_and_a_short_fact_a_long_one(settings):
    settings.KARANI_MEMORY = "basic"
    for n in range(20):
        services.remember(text=f"Team {n} works remote")
    rare = services.remember(text="Quokka Labs hires")
    short = services.remember(text="Salary visa")
    long = services.remember(text="Salary visa plus several other perks listed here at length")

    assert lexical.search(query="remote quokka", company_key=None, limit=1)[0].memory_id == rare.id
    top = [h.memory_id for h in lexical.search(query="salary visa", company_key=None, limit=2)]
    assert top == [short.id, long.id]


def test_a_query_of_stopwords_matches_nothing(ledger):
    assert lexical.search(query="what is the", company_key=None, limit=5) == []
