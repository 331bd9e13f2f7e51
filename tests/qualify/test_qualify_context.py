"""The working-context builder: the whole posting as recall, a share of the block for each
side, a reason on every fact, never more than 10 facts, and the fallback invariant."""

from dataclasses import replace

import pytest
from semantic_support import *  # noqa: F403  (fixtures)
from semantic_support import closed_port

from memory import selectors
from memory import services as memory
from memory.errors import MemoryInputError
from qualify import context, pieces, preparation
from qualify.context import Subject

POSTING = Subject(
    company="Northwind Robotics",
    title="Senior Site Reliability Engineer",
    role_category="SRE",
    location="New York, NY",
    remote="Hybrid",
    salary="$150,000 - $160,000",
    description=(
        "About us\nNorthwind Robotics builds warehouse robots.\n\n"
        "The fleet platform group keeps a round-the-clock pager for production incidents. "
        "Our services are written in Go and run on Kubernetes.\n\n"
        "We are unable to support visa petitions or status transfers for this position."
    ),
)


def _teach(company_facts: int, own_facts: int) -> tuple[list[int], list[int]]:
    company = [
        memory.remember(
            text=f"Northwind Robotics pager incidents note {i}", company="Northwind Robotics"
        ).id
        for i in range(company_facts)
    ]
    own = [
        memory.remember(text=f"I dislike pager incidents, note {i}").id for i in range(own_facts)
    ]
    return company, own


def _ids(selection: context.Selection) -> list[int]:
    return [f.id for f in selection.facts]


@pytest.mark.django_db
def test_a_posting_becomes_one_query_per_field_and_sentence_without_the_company_name():
    made = pieces.pieces(POSTING)
    fields = [p.field for p in made]

    assert fields[:4] == ["company", "title", "location", "pay"]
    assert (made[2].query, made[3].query) == ("New York, NY, Hybrid", "$150,000 - $160,000")
    described = [p.query for p in made if p.field == "description"]
    assert "fleet platform group keeps a round-the-clock pager" in described[1]
    # Only the company piece names the company; a heading alone is no piece.
    assert all("Northwind" not in q for q in described)
    assert "About us" not in described
    assert len(made) <= pieces.MAX_PIECES


HTML_DESCRIPTION = (
    "<h3><strong>About us</strong></h3><p>Northwind Robotics builds warehouse robots.</p>"
    "<h3>The role</h3><p>The fleet platform group keeps a round-the-clock pager for production "
    "incidents.<br>Our services are written in Go and run on Kubernetes.</p><ul>"
    "<li>Own the fleet&#39;s deploy pipeline &amp; its alerts</li>"
    "<li>Lead the follow-up reviews after incidents</li></ul>"
    "<p>We are unable to support visa petitions or status transfers for this position.</p>"
)
PLAIN_DESCRIPTION = (
    "About us\nNorthwind Robotics builds warehouse robots.\n\nThe role\n"
    "The fleet platform group keeps a round-the-clock pager for production incidents.\n"
    "Our services are written in Go and run on Kubernetes.\n"
    "- Own the fleet's deploy pipeline & its alerts\n"
    "- Lead the follow-up reviews after incidents\n\n"
    "We are unable to support visa petitions or status transfers for this position."
)


@pytest.mark.parametrize("escaped", [False, True], ids=["html", "entity-escaped html"])
@pytest.mark.django_db
def test_an_html_description_gives_the_pieces_of_its_text(escaped):
    import html

    markup = html.escape(HTML_DESCRIPTION) if escaped else HTML_DESCRIPTION
    from_html = pieces.pieces(replace(POSTING, description=markup))
    from_text = pieces.pieces(replace(POSTING, description=PLAIN_DESCRIPTION))

    assert [p.query for p in from_html] == [p.query for p in from_text]
    described = [p.query for p in from_html if p.field == "description"]
    # Each list item is its own piece, with no tag or entity left in any.
    assert "Own the fleet's deploy pipeline & its alerts" in described
    assert not any(c in q for q in described for c in "<>;")


@pytest.mark.parametrize(
    "text",
    [
        "Pay: <$200k for this band.\nOn call <1 week in 6.",
        "We use <b> and <i> in our templating DSL.\nAT&T alumni welcome.",
    ],
)
def test_a_plain_description_with_angle_brackets_is_read_as_it_is(text):
    assert pieces.plain(text) == text


def test_a_plain_description_has_its_character_references_read():
    text = "Our R&amp;D team&nbsp;pays &#36;150k.\n- Go &amp; Rust"

    assert pieces.plain(text) == "Our R&D team\xa0pays $150k.\n- Go & Rust"


@pytest.mark.django_db
def test_every_item_of_an_html_list_reaches_recall(settings):
    settings.KARANI_MEMORY = "basic"
    travel = memory.remember(text="I will not travel to customer sites for installs").id
    items = [f"Maintain internal service number {n} of the robot fleet" for n in range(12)]
    items.append("Travel to customer sites in Wyoming for installs")
    listed = "<ul>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>"

    found = context.select(replace(POSTING, description=listed)).facts

    assert travel in [f.id for f in found]
    assert next(f.why for f in found if f.id == travel) == (
        "your fact; matches 'travel', 'customer', 'sites'"
    )


def _long_description(sentences: int, last: str) -> str:
    filler = [
        f"Our team number {n} ships service {n} to customers in region {n}."
        for n in range(sentences)
    ]
    return " ".join([*filler, last])


@pytest.mark.django_db
def test_a_long_description_is_read_to_its_end_in_at_most_the_cap_of_queries():
    last = "This position requires relocation to our Denver headquarters."
    long = replace(POSTING, description=_long_description(90, last))

    made = pieces.pieces(long)

    assert len(made) == pieces.MAX_PIECES
    described = [p for p in made if p.field == "description"]
    assert described[-1].query.endswith(last)
    assert all(len(p.query) <= pieces.MAX_SHARED_CHARS for p in described)
    # Neighbouring sentences share a query; none is lost or repeated.
    assert " ".join(p.query for p in described) == long.description


@pytest.mark.django_db
def test_a_fact_only_the_end_of_a_long_posting_bears_on_is_in_the_block(settings):
    settings.KARANI_MEMORY = "basic"
    relocation = memory.remember(text="I will not accept relocation away from Boston").id
    last = "This position requires relocation to our Denver headquarters."

    found = context.select(replace(POSTING, description=_long_description(90, last))).facts

    assert relocation in [f.id for f in found]


@pytest.mark.django_db
def test_each_side_gets_its_share_of_the_block(settings):
    settings.KARANI_MEMORY = "basic"
    settings.KARANI_CONTEXT_COMPANY_SHARE = 0.4
    company, own = _teach(8, 8)

    facts = context.select(POSTING, limit=5).facts

    assert len(facts) == 5
    assert len([f for f in facts if f.id in company]) == 2
    assert len([f for f in facts if f.id in own]) == 3


def _flood_with_unscoped_facts(count: int) -> list[int]:
    # The company's facts share no word with the posting; these repeat its pieces.
    company = [
        memory.remember(text=text, company="Northwind Robotics").id
        for text in ("Recruiter answered within a day", "Interviews ran three rounds")
    ]
    sentences = [p.query for p in pieces.pieces(POSTING)]
    for n in range(count):
        memory.remember(text=f"{sentences[n % len(sentences)]} (variant {n})")
    return company


@pytest.mark.django_db
def test_many_unscoped_facts_do_not_crowd_the_company_out_of_its_share(settings):
    settings.KARANI_MEMORY = "basic"
    settings.KARANI_CONTEXT_COMPANY_SHARE = 0.4
    company = _flood_with_unscoped_facts(40)

    facts = context.select(POSTING, limit=5).facts

    assert len(facts) == 5
    assert {f.id for f in facts if f.company} == set(company)


@pytest.mark.pgvector
@pytest.mark.django_db(transaction=True)
def test_in_semantic_mode_too_each_side_finds_its_own_candidates(mem0_mode, settings):
    settings.KARANI_CONTEXT_COMPANY_SHARE = 0.4
    company = _flood_with_unscoped_facts(40)

    selection = context.select(POSTING, limit=5)

    assert selection.mode == "mem0" and selection.fallback is False
    assert {f.id for f in selection.facts if f.company} == set(company)


@pytest.mark.django_db
def test_a_share_one_side_leaves_empty_goes_to_the_other(settings):
    settings.KARANI_MEMORY = "basic"
    settings.KARANI_CONTEXT_COMPANY_SHARE = 0.4
    company, own = _teach(8, 1)

    ids = _ids(context.select(POSTING, limit=5))

    assert len(ids) == 5 and set(own) <= set(ids)
    assert len([i for i in ids if i in company]) == 4

    settings.KARANI_CONTEXT_COMPANY_SHARE = 1.0
    assert len(context.select(POSTING, limit=5).facts) == 5  # the company's 8 fill it


@pytest.mark.django_db
def test_it_never_gives_more_than_10_facts_whatever_limit_asks(settings):
    settings.KARANI_MEMORY = "basic"
    _teach(30, 30)

    assert len(context.select(POSTING, limit=50).facts) == 10
    settings.KARANI_MEMORY_TOP_K = 40
    assert len(context.select(POSTING).facts) == 10
    assert len(preparation.build_working_context(POSTING, limit=99).facts) == 10


@pytest.mark.django_db
def test_every_fact_says_why_it_is_there(settings):
    settings.KARANI_MEMORY = "basic"
    sponsor = memory.remember(text="I need an employer who can sponsor my visa transfer").id
    go = memory.remember(
        text="Northwind Robotics writes its fleet services in Go", company="Northwind Robotics"
    ).id
    floor = memory.remember(text="My base salary floor is $165,000", kind="preference").id
    dana = memory.remember(text="Dana recruits for them", company="Northwind Robotics").id

    by_id = {f.id: f for f in context.select(POSTING, limit=10).shown}

    assert by_id[sponsor].why == "your fact; matches 'visa'"
    assert by_id[go].why == "company fact; matches 'services', 'go'"
    # Found by the company's name alone: a candidate for the company's share all the same.
    assert by_id[dana].why == "company fact; about Northwind Robotics"
    assert by_id[floor].why == (
        "your standing preference; bears on the pay '$150,000 - $160,000' ('000')"
    )
    assert all(f.why for f in by_id.values())
    assert all(f.to_dict()["why"] == f.why for f in by_id.values())


@pytest.mark.django_db
def test_keyword_mode_is_deterministic(settings):
    settings.KARANI_MEMORY = "basic"
    _teach(12, 12)

    first = context.select(POSTING, limit=7)
    assert [(f.id, f.score, f.why) for f in first.facts] == [
        (f.id, f.score, f.why) for f in context.select(POSTING, limit=7).facts
    ]
    assert first.fallback is False and first.mode == "basic"


@pytest.mark.django_db
def test_recall_many_is_validated_and_ranks_each_query_like_recall(settings):
    settings.KARANI_MEMORY = "basic"
    _teach(3, 3)
    queries = ["pager incidents", "note 2"]

    lists, fallback = selectors.recall_many(queries=queries, company="Northwind Robotics", limit=4)

    assert fallback is False
    for query, found in zip(queries, lists, strict=True):
        one = selectors.recall(query=query, company="Northwind Robotics", limit=4).results
        assert [f.id for f in found] == [f.id for f in one]
    for bad in ([], "pager", ["ok", ""], ["x"] * 65):
        with pytest.raises(MemoryInputError):
            selectors.recall_many(queries=bad, limit=4)
    with pytest.raises(MemoryInputError):
        selectors.recall_many(queries=["pager"], limit=0)


@pytest.mark.pgvector
@pytest.mark.django_db(transaction=True)
def test_semantic_mode_finds_a_fact_the_posting_never_words(mem0_mode):
    sponsor = memory.remember(text="I am on an H-1B visa and need an employer to sponsor it").id
    for text in ("I enjoy hiking at weekends", "I prefer tea to coffee", "My dog is called Rex"):
        memory.remember(text=text)

    selection = context.select(POSTING, limit=3)

    assert selection.fallback is False and selection.mode == "mem0"
    fact = next(f for f in selection.facts if f.id == sponsor)
    assert fact.why.startswith("your fact; ")
    lists, _ = selectors.recall_many(queries=["immigration paperwork"], limit=4)
    assert lists[0][0].id == sponsor and 0 < lists[0][0].score <= 1  # a cosine


@pytest.mark.pgvector
@pytest.mark.django_db(transaction=True)
def test_with_the_index_down_the_block_comes_from_keyword_ranking(mem0_mode, settings):
    _teach(6, 6)
    settings.KARANI_MEMORY = "basic"
    keyword_block = _ids(context.select(POSTING, limit=5))

    settings.KARANI_MEMORY = "mem0"
    settings.KARANI_VECTOR_DSN = f"postgresql://postgres@127.0.0.1:{closed_port()}/karani_x"
    settings.KARANI_VECTOR_TIMEOUT = 0.5
    from memory.semantic import client

    client.discard_all()
    down = context.select(POSTING, limit=5)

    assert down.fallback is True and down.error is None and down.mode == "mem0"
    assert _ids(down) == keyword_block
    assert all(f.why for f in down.facts)
    client.discard_all()


@pytest.mark.parametrize("value", ["1.5", "-0.1", "half", "nan"])
def test_it_refuses_a_bad_company_share_in_one_line(value):
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {**os.environ, "KARANI_CONTEXT_COMPANY_SHARE": value}
    env.pop("DATABASE_URL", None)

    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode != 0
    assert len(result.stderr.strip().splitlines()) == 1
    assert (
        f"KARANI_CONTEXT_COMPANY_SHARE={value!r} is not valid; "
        "use a fraction from 0 to 1 (e.g. 0.4)" in result.stderr
    )
