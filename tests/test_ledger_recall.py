"""recall() in basic mode: word-anchored tokens, distinct-token score, company boost,
recency tie-break, scope, limit, deleted facts, and KARANI_MEMORY=off."""

import dataclasses
from datetime import timedelta

import pytest
from django.utils import timezone

from memory import selectors, services
from memory.errors import MemoryInputError
from memory.models import Memory

pytestmark = pytest.mark.django_db


def _remember(text: str, **kwargs) -> int:
    return services.remember(text=text, **kwargs).id


def _ids(query: str, **kwargs) -> list[int]:
    return [r.id for r in selectors.recall(query=query, **kwargs).results]


def _scores(query: str, **kwargs) -> dict[int, float]:
    return {r.id: r.score for r in selectors.recall(query=query, **kwargs).results}


def _seen(memory_id: int, minutes_ago: int) -> None:
    Memory.all_objects.filter(pk=memory_id).update(
        last_seen_at=timezone.now() - timedelta(minutes=minutes_ago)
    )


# --- tokens -------------------------------------------------------------------------------


def test_it_matches_whole_words_only():
    leads = _remember("She leads the robotics roadmap")
    lead = _remember("Wants to lead a product area")
    leadership = _remember("Values leadership culture")
    assert _ids("lead") == [lead]
    assert _ids("leadership") == [leadership]
    assert _ids("leads") == [leads]
    assert _ids("lea") == []
    assert _ids("robot") == []


def test_it_never_matches_own_against_ownership():
    ownership = _remember("Values ownership culture")
    own = _remember("Wants to own the roadmap")
    assert _ids("own") == [own]
    assert _ids("ownership") == [ownership]


def test_it_keeps_job_search_words_that_generic_stopword_lists_drop():
    on_call = _remember("Northwind runs a weekly on-call rotation")
    ai = _remember("Prefers AI product teams in the UK")
    remote_work = _remember("Remote work from home is a must")
    assert _ids("on-call") == [on_call]
    assert _ids("ai") == [ai]
    assert _ids("uk") == [ai]
    assert _ids("work from home") == [remote_work]


def test_it_matches_words_split_by_punctuation_and_hyphens():
    fact = _remember("Pager-duty rotation: weekly, (shared) with SRE.")
    assert _ids("pager") == [fact]
    assert _ids("duty") == [fact]
    assert _ids("shared") == [fact]
    assert _ids("sre") == [fact]


def test_it_ignores_stopwords_in_the_query():
    fact = _remember("The team is remote")
    other = _remember("Of all the offers, this one is the best")
    assert _ids("the of and is") == []
    assert _scores("the remote team") == {fact: 2.0}
    assert other not in _ids("the is this")


def test_it_ignores_case():
    fact = _remember("Kubernetes platform team")
    assert _ids("KUBERNETES") == [fact]
    assert _ids("kubernetes") == [fact]


def test_it_matches_unicode_words():
    zurich = _remember("Liked the Zürich office")
    cafe = _remember("Interview at the café downtown")
    tokyo = _remember("東京 office is new")
    strasse = _remember("Office on the Hauptstraße")
    assert _ids("zürich") == [zurich]
    assert _ids("ZÜRICH") == [zurich]
    assert _ids("zurich") == []  # accents matter: "zurich" is another word
    assert _ids("café") == [cafe]
    assert _ids("東京") == [tokyo]
    assert _ids("HAUPTSTRASSE") == [strasse]  # casefolded, not just lowercased


def test_it_matches_nfd_queries_against_nfc_facts_and_back():
    nfc_fact = _remember("Liked the Z\u00fcrich office")
    nfd_fact = _remember("Moved to Gen\u0065\u0300ve")  # "Genève" written decomposed
    assert _ids("Zu\u0308rich") == [nfc_fact]
    assert _ids("Gen\u00e8ve") == [nfd_fact]


# --- score --------------------------------------------------------------------------------


def test_it_scores_distinct_query_words_found():
    both = _remember("Remote platform team")
    one = _remember("Remote sales role")
    assert _scores("remote platform") == {both: 2.0, one: 1.0}
    # Repeating a word in the query or the fact counts it once.
    assert _scores("remote remote REMOTE platform") == {both: 2.0, one: 1.0}
    assert _ids("remote platform") == [both, one]


def test_it_boosts_facts_of_the_company_the_query_names():
    northwind = _remember("Remote platform team", company="Northwind Robotics")
    globex = _remember("Remote platform team", company="Globex")
    glob = _remember("Remote platform team")
    _seen(northwind, 30)  # oldest, still first: the boost beats recency
    scores = _scores("northwind robotics remote platform")
    assert scores == {northwind: 3.0, globex: 2.0, glob: 2.0}
    assert _ids("northwind robotics remote platform")[0] == northwind


def test_it_matches_the_company_name_case_and_space_insensitively_in_the_query():
    fact = _remember("Pays above market", company="Northwind Robotics")
    assert _scores("  NORTHWIND   robotics pay") == {fact: 1.0}
    assert _scores("what about Northwind Robotics?") == {fact: 1.0}


def test_it_returns_a_named_companys_facts_even_without_shared_words():
    fact = _remember("Four day week", company="Acme")
    _remember("Four day week")
    assert _scores("acme") == {fact: 1.0}


def test_it_does_not_boost_on_part_of_a_company_name():
    fact = _remember("Remote platform team", company="Northwind Robotics")
    assert _scores("northwind remote") == {fact: 1.0}


# --- order --------------------------------------------------------------------------------


def test_it_breaks_ties_by_last_seen_then_by_id():
    a = _remember("remote role one")
    b = _remember("remote role two")
    c = _remember("remote role three")
    d = _remember("remote role four")
    same = timezone.now() - timedelta(hours=1)
    Memory.all_objects.filter(pk__in=[a, b, c, d]).update(last_seen_at=same)
    _seen(a, 1)  # the most recently seen
    assert _ids("remote") == [a, d, c, b]


def test_it_breaks_ties_for_company_only_hits_the_same_way():
    a = _remember("Fact one", company="Acme")
    b = _remember("Fact two", company="Acme")
    c = _remember("Fact three", company="Acme")
    same = timezone.now() - timedelta(hours=1)
    Memory.all_objects.filter(pk__in=[a, b, c]).update(last_seen_at=same)
    _seen(b, 1)
    assert _ids("acme") == [b, c, a]


def test_it_orders_word_hits_and_company_only_hits_of_equal_score_by_recency():
    word_hit = _remember("remote role", company="Globex")
    company_only = _remember("Four day week", company="Acme")
    _seen(word_hit, 10)
    _seen(company_only, 20)
    assert _scores("acme remote") == {word_hit: 1.0, company_only: 1.0}
    assert _ids("acme remote") == [word_hit, company_only]
    _seen(company_only, 5)
    assert _ids("acme remote") == [company_only, word_hit]


def test_it_moves_a_touched_fact_up_among_equals():
    a = _remember("remote role one")
    b = _remember("remote role two")
    _seen(a, 10)
    _seen(b, 5)
    assert _ids("remote") == [b, a]
    services.remember(text="remote role one")
    assert _ids("remote") == [a, b]


def test_it_gives_the_same_order_every_time():
    for i in range(30):
        _remember(f"remote role {i % 3} platform {i}", company=["Acme", "Globex", None][i % 3])
    same = timezone.now() - timedelta(hours=1)
    Memory.all_objects.update(last_seen_at=same)
    first = selectors.recall(query="acme remote platform 1", limit=20).to_dict()
    for _ in range(5):
        assert selectors.recall(query="acme remote platform 1", limit=20).to_dict() == first
    scores = [r["score"] for r in first["results"]]
    assert scores == sorted(scores, reverse=True)


# --- scope --------------------------------------------------------------------------------


@pytest.fixture
def scoped_ledger():
    return {
        "global": _remember("Remote teams work best"),
        "acme": _remember("Remote teams chat on Slack", company="Acme"),
        "globex": _remember("Remote teams meet in person", company="Globex"),
    }


def test_it_scopes_to_a_company_plus_global_facts(scoped_ledger):
    assert set(_ids("remote", company="Acme")) == {scoped_ledger["acme"], scoped_ledger["global"]}
    assert set(_ids("remote", company="  ACME ")) == {
        scoped_ledger["acme"],
        scoped_ledger["global"],
    }


def test_it_never_returns_another_companys_facts_even_when_the_query_names_it(scoped_ledger):
    ids = _ids("globex remote teams", company="Acme", limit=100)
    assert scoped_ledger["globex"] not in ids
    assert set(ids) == {scoped_ledger["acme"], scoped_ledger["global"]}
    assert _ids("globex", company="Acme") == []


def test_it_searches_everything_without_a_company(scoped_ledger):
    assert set(_ids("remote")) == set(scoped_ledger.values())


def test_it_returns_only_global_facts_for_a_company_it_does_not_know(scoped_ledger):
    assert _ids("remote", company="Initech") == [scoped_ledger["global"]]


def test_it_boosts_the_scoped_company_when_the_query_names_it(scoped_ledger):
    assert _scores("acme remote", company="Acme") == {
        scoped_ledger["acme"]: 2.0,
        scoped_ledger["global"]: 1.0,
    }


# --- limit --------------------------------------------------------------------------------


def test_it_returns_five_by_default():
    for i in range(7):
        _remember(f"remote role {i}")
    assert len(_ids("remote")) == 5


@pytest.mark.parametrize("limit", [1, 3, 100])
def test_it_accepts_limits_from_1_to_100(limit):
    for i in range(7):
        _remember(f"remote role {i}")
    assert len(_ids("remote", limit=limit)) == min(limit, 7)


def test_it_returns_up_to_100_results():
    services.import_facts(records=[(i, {"text": f"remote role {i}"}) for i in range(120)])
    assert len(_ids("remote", limit=100)) == 100


@pytest.mark.parametrize(
    ("limit", "message"),
    [
        (0, "limit 0 is outside 1-100"),
        (101, "limit 101 is outside 1-100"),
        (-5, "limit -5 is outside 1-100"),
        (True, "limit must be a whole number from 1 to 100"),
        ("5", "limit must be a whole number from 1 to 100"),
        (5.0, "limit must be a whole number from 1 to 100"),
        (None, "limit must be a whole number from 1 to 100"),
    ],
)
def test_it_refuses_any_other_limit(limit, message):
    _remember("remote role")
    with pytest.raises(MemoryInputError) as caught:
        selectors.recall(query="remote", limit=limit)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("query", "company", "message"),
    [
        ("", None, "query is empty"),
        ("   ", None, "query is empty"),
        ("x" * 2001, None, "query is 2001 characters"),
        ("bad\x00query", None, r"query contains a control character U\+0000 at position 4"),
        (None, None, "query must be a string"),
        ("remote", "  ", "company name is empty after normalisation"),
        ("remote", 7, "company must be a string"),
    ],
)
def test_it_refuses_a_bad_query_or_company(query, company, message):
    with pytest.raises(MemoryInputError, match=message):
        selectors.recall(query=query, company=company)


# --- deleted facts ------------------------------------------------------------------------


def test_it_never_returns_deleted_or_superseded_facts():
    forgotten = _remember("remote role forgotten")
    corrected = _remember("remote role corrected", company="Acme")
    kept = _remember("remote role kept")
    services.forget(id=forgotten, reason="wrong")
    new = services.correct(id=corrected, text="remote role fixed", reason="typo").pk
    assert set(_ids("remote role forgotten corrected", limit=100)) == {kept, new}
    assert set(_ids("acme", limit=100)) == {new}
    assert forgotten not in _ids("forgotten")


def test_it_drops_a_fact_deleted_between_ranking_and_fetch(monkeypatch):
    keep = _remember("remote role kept")
    gone = _remember("remote role gone")
    from memory import keyword

    real_search = keyword.search

    def search_then_forget(**kwargs):
        # Hits without their rows, as the semantic index gives them (and keyword ranking on
        # SQLite): the fetch after ranking is where a deletion in between must show.
        hits = [dataclasses.replace(h, row=None) for h in real_search(**kwargs)]
        services.forget(id=gone, reason="raced")
        return hits

    monkeypatch.setattr(keyword, "search", search_then_forget)
    assert _ids("remote") == [keep]


def test_its_keyword_hits_carry_the_rows_the_orm_reads():
    # The ranking query reads the winners' rows itself (one snapshot, one round trip less);
    # they must be exactly what the ORM reads, converted the same way on both databases.
    from memory import keyword

    for i in range(3):
        _remember(f"remote role number {i}", company="Acme" if i else None)
    hits = keyword.search(query="remote acme", company_key=None, limit=5)
    assert len(hits) == 3
    for hit in hits:
        expected = Memory.objects.filter(pk=hit.memory_id).values_list(*keyword.ROW_FIELDS)
        assert hit.row == expected.get()


# --- result shape and modes ---------------------------------------------------------------


def test_it_returns_every_field_of_a_result():
    fact = services.remember(
        text="Remote platform team", kind="outcome", company="Acme", ref="qualification:9"
    )
    result = selectors.recall(query="remote platform").to_dict()
    row = Memory.objects.get(pk=fact.id)
    assert result == {
        "mode": "basic",
        "fallback": False,
        "results": [
            {
                "id": fact.id,
                "text": "Remote platform team",
                "kind": "outcome",
                "company": "Acme",
                "score": 2.0,
                "ref": "qualification:9",
                "created_at": row.created_at.isoformat(),
                "last_seen_at": row.last_seen_at.isoformat(),
            }
        ],
    }


def test_it_returns_nothing_when_memory_is_off_but_still_writes(settings):
    settings.KARANI_MEMORY = "off"
    written = services.remember(text="Remote platform team")
    assert written.created
    assert Memory.objects.filter(pk=written.id).exists()
    result = selectors.recall(query="remote platform")
    assert (result.mode, result.fallback, result.results) == ("off", False, [])
    # Turning memory back on loses nothing.
    settings.KARANI_MEMORY = "basic"
    assert _ids("remote platform") == [written.id]


def test_it_still_validates_when_memory_is_off(settings):
    settings.KARANI_MEMORY = "off"
    with pytest.raises(MemoryInputError):
        selectors.recall(query="remote", limit=0)
