"""Semantic recall prefers the facts written when the question says ("in March 2025", "on 1
February, 2023") and those about whom it names ("Caroline: …"): the dates and subjects a
question names, and the lift they give (issue 13, item 3)."""

from datetime import date

import pytest
from semantic_support import *  # noqa: F403  (fixtures)

from memory import selectors, services
from memory.keyword import Hit
from memory.semantic import cues, dates, search
from memory.semantic.dates import Span


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("What did Gina find for her store on 1 February, 2023?", [Span(2, 2023, 1)]),
        ("What did Acme say on October 13, 2023?", [Span(10, 2023, 13)]),
        ("the call on the 2nd of March", [Span(3, None, 2)]),
        ("offers in March 2025", [Span(3, 2025)]),
        ("offers in march 2025", [Span(3, 2025)]),
        ("When did Melanie go camping in June?", [Span(6)]),
        ("What did Jon do the week before 9 June 2023?", [Span(6, 2023, 9)]),
        ("notes from 2024-05-08", [Span(5, 2024, 8)]),
    ],
)
def test_it_reads_the_dates_a_question_names(query, named):
    assert dates.spans(query) == named


@pytest.mark.parametrize(
    "query",
    [
        "May I ask what Acme offers?",  # a verb opening the question
        "who will march in the parade",
        "Where did Caroline move from 4 years ago?",  # no month: nothing to lift by
        "What did Acme do last year?",
        "what does Acme pay?",
    ],
)
def test_it_reads_no_date_where_there_is_none(query):
    assert dates.spans(query) == []


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("1 February, 2023", Span(2, 2023, 1)),
        ("29 February", Span(2, None, 29)),
        ("Sept 2024", Span(9, 2024)),
        ("2022", None),
        ("last Saturday", None),
        ("31 February 2023", None),
    ],
)
def test_it_reads_a_date_span_into_a_month_or_a_day(text, span):
    assert dates.read(text) == span


def test_it_reads_at_most_a_few_dates_of_a_long_question():
    assert len(dates.spans("on 1 March 2024 and " * 60)) <= dates.MAX_SPANS


def test_a_day_reaches_the_days_either_side_and_a_month_a_week_either_side():
    day, month, any_year = Span(2, 2023, 1), Span(3, 2025), Span(6)

    assert [day.holds(date(2023, 1, d)) for d in (30, 31)] == [False, True]
    assert [day.holds(date(2023, 2, d)) for d in (1, 2, 3)] == [True, True, False]
    assert not day.holds(date(2024, 2, 1)), "a day with a year is in that year only"
    assert [month.holds(date(2025, 2, 21)), month.holds(date(2025, 2, 22))] == [False, True]
    assert [month.holds(date(2025, 4, 7)), month.holds(date(2025, 4, 8))] == [True, False]
    assert any_year.holds(date(2019, 6, 15)) and any_year.holds(date(2031, 6, 30))
    assert not any_year.holds(date(2019, 8, 15))
    assert Span(2, None, 29).holds(date(2024, 2, 29)), "a leap day in any year"
    assert not Span(2, None, 29).holds(date(2023, 3, 5))


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Caroline: I went to a support group yesterday.", {"caroline"}),
        ("Northwind's recruiter said the band is 150k.", {"northwind"}),
        ("Acme recruiter: replies within two days.", {"acme"}),
        ("The recruiter said Acme pays well.", {"recruiter"}),
        ("", set()),
    ],
)
def test_a_fact_is_about_the_word_it_opens_with(text, words):
    assert cues.subject(text) == words


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("What did Caroline's friend say?", {"caroline"}),
        ("What did the Acme recruiter say about Northwind?", {"acme", "northwind"}),
        ("When did Melanie and Caroline meet in Boston?", {"melanie", "caroline", "boston"}),
        ("What did the staff engineer say?", set()),
        ("do staff at big corporations recommend her resume?", set()),
    ],
)
def test_a_name_is_a_named_entity_of_the_question(query, named):
    assert cues.names(query) == named


def _import(*facts: tuple[str, str]) -> list[int]:
    records = [{"text": text, "company": "Acme", "created_at": when} for text, when in facts]
    report = services.import_facts(records=enumerate(records, start=1))
    assert not report.rejected
    found = {f.text: f.id for f in selectors.list_facts(company="Acme")}
    return [found[text] for text, _ in facts]


@pytest.mark.django_db
def test_it_lifts_the_facts_written_in_a_named_span_and_nothing_else():
    march, june, undated = _import(
        ("The recruiter offered a video call.", "2025-03-12T10:00:00Z"),
        ("The recruiter offered an onsite day.", "2025-06-02T10:00:00Z"),
        ("The recruiter offered a take-home test.", "2024-11-20T10:00:00Z"),
    )
    hits = [Hit(june, 2.0), Hit(undated, 1.9), Hit(march, 1.0)]

    lifted = search.with_cues(hits, "what did Acme offer in March 2025?", date_share=1.5)

    assert [(h.memory_id, h.score) for h in lifted] == [(march, 2.5), (june, 2.0), (undated, 1.9)]
    assert search.with_cues(hits, "what did Acme offer?") == hits
    assert search.with_cues(hits, "what did Acme offer in March 2024?") == hits, (
        "another year's March"
    )
    assert search.with_cues(hits, "what did Acme offer in March 2025?", date_share=0) == hits


@pytest.mark.django_db
def test_it_lifts_the_facts_whose_subject_the_question_names():
    tim, john, plain = _import(
        ("Tim: I joined a book club last week.", "2025-03-12T10:00:00Z"),
        ("John: I joined a basketball team last week.", "2025-03-13T10:00:00Z"),
        ("A book club meets on Mondays.", "2025-03-14T10:00:00Z"),
    )
    hits = [Hit(plain, 2.0), Hit(john, 1.8), Hit(tim, 1.5)]

    lifted = search.with_cues(hits, "What did Tim join last week?", subject_share=1.0)

    assert [(h.memory_id, h.score) for h in lifted] == [(tim, 2.5), (plain, 2.0), (john, 1.8)]
    assert search.with_cues(hits, "What did Tim join last week?", subject_share=0) == hits
    assert search.with_cues(hits, "Who joined a club?") == hits
    assert search.with_cues(hits, "What did the book club do last week?") == hits, (
        "a subject is lifted only when the question names it"
    )


@pytest.mark.pgvector
@pytest.mark.django_db(transaction=True)
def test_semantic_recall_puts_the_fact_written_then_first(mem0_mode):
    march, june = _import(
        ("Acme's recruiter said the team ships weekly.", "2025-03-12T10:00:00Z"),
        ("Acme's recruiter said the team ships daily.", "2025-06-02T10:00:00Z"),
    )
    for n in range(10):
        services.remember(text=f"Acme's office {n} has a gym and a canteen.", company="Acme")

    def first(query: str) -> int:
        result = selectors.recall(query=query, company="Acme", limit=3)
        assert not result.fallback
        return result.results[0].id

    assert first("what did Acme's recruiter say about shipping in March?") == march
    assert first("what did Acme's recruiter say about shipping in June 2025?") == june
    assert first("what did Acme's recruiter say about shipping on 2 June, 2025?") == june


@pytest.mark.pgvector
@pytest.mark.django_db(transaction=True)
def test_semantic_recall_puts_the_fact_about_whom_the_question_names_first(mem0_mode):
    tim = services.remember(text="Tim: I adopted a kitten from the shelter last week.")
    # About John, though it names Tim, and holding more of the question's words.
    services.remember(text="John: Tim, I adopted a puppy from the Riverside shelter last week.")
    for n in range(10):
        services.remember(text=f"Ana: the shelter number {n} has dogs and rabbits.")

    result = selectors.recall(query="What did Tim adopt from the Riverside shelter?", limit=3)

    assert not result.fallback
    assert result.results[0].id == tim.id


@pytest.mark.django_db
def test_the_dense_half_is_asked_without_the_subjects_the_question_names():
    caroline, melanie, plain = _import(
        ("Caroline: I researched adoption agencies.", "2025-03-12T10:00:00Z"),
        ("Melanie: I signed up for a pottery class.", "2025-03-13T10:00:00Z"),
        ("Note: pottery classes fill up fast.", "2025-03-14T10:00:00Z"),
    )
    hits = [Hit(caroline, 1.0), Hit(melanie, 0.9), Hit(plain, 0.8)]

    assert cues.about("What did Caroline research?", hits) == "What did research?"
    assert cues.about("What is Caroline's plan with Melanie?", hits) == "What is plan with ?"
    assert cues.about("What did Caroline research?", [Hit(plain, 1.0)]) == (
        "What did Caroline research?"
    ), "no candidate is about Caroline"
    assert cues.about("What about Caroline and Melanie?", hits) == (
        "What about Caroline and Melanie?"
    ), "nothing left"
    assert cues.about("What did the note say?", hits) == "What did the note say?", "not a name"
    assert cues.about("What did Caroline research?", []) == "What did Caroline research?"


@pytest.mark.pgvector
@pytest.mark.django_db(transaction=True)
def test_semantic_recall_finds_what_was_asked_about_the_named_subject(mem0_mode):
    store = services.remember(
        text="Gina: I found a great spot downtown and signed the lease yesterday."
    )
    # Gina's small talk, full of names: what an embedding of "…Gina…" finds closest.
    for line in [
        "Hey Jon! Gina here, how are things going with you?",
        "Jon, you are such a good friend to Gina.",
        "Thanks Jon! Gina really appreciates it.",
        "Ha, Jon, Gina agrees with you completely.",
        "Jon, Gina wishes you luck!",
        "Gina is so happy for you, Jon!",
    ]:
        services.remember(text=f"Gina: {line}")

    result = selectors.recall(query="What did Gina do for her store?", limit=3)

    assert not result.fallback
    assert result.results[0].id == store.id
