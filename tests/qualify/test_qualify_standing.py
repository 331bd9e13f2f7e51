"""The candidate's standing preferences: every live unscoped preference in every decision that
uses memory, as a part of its own within a character budget, never repeated in the ranked
block; the ranked block keeps its cap, and the pipeline's own verdict facts never crowd out
what people taught about the company."""

import pytest
from semantic_support import *  # noqa: F403  (fixtures)

from memory import services as memory
from memory.errors import MemoryInputError
from qualify import constraint, context, preparation, prompts, standing
from qualify.context import Subject

POSTING = Subject(
    company="Northwind Robotics",
    title="Senior Platform Engineer",
    role_category="SRE",
    location="Boston, MA",
    remote="Hybrid",
    salary="$150,000 - $160,000",
    description=(
        "Northwind Robotics builds warehouse robots.\n\n"
        "The platform group keeps a round-the-clock pager for production incidents.\n\n"
        "We are unable to support visa petitions or status transfers for this position."
    ),
)
FILLERS = [
    "I like {} teams that write design documents before coding",
    "A {} hobby budget for books and courses would be welcome",
    "Quiet {} open-plan floors are fine by me",
]


def _fill(n: int) -> list[int]:
    """``n`` standing preferences that bear on nothing in POSTING."""
    return [
        memory.remember(text=FILLERS[i % 3].format(f"kind{i}"), kind="preference").id
        for i in range(n)
    ]


def _shown_text(selection: context.Selection) -> str:
    return prompts.render_context(prompts.VERSIONS[prompts.MEMORY_AWARE], selection)


@pytest.mark.django_db
def test_every_standing_preference_is_shown_when_they_fit(settings):
    settings.KARANI_MEMORY = "basic"
    remote = memory.remember(text="Two office days a week is my limit", kind="preference").id
    hiking = memory.remember(text="I enjoy hiking at weekends", kind="preference").id
    note = memory.remember(text="I need an employer to sponsor my visa transfer").id

    selection = context.select(POSTING)

    assert {f.id for f in selection.standing} == {remote, hiking}
    assert selection.standing_omitted == 0
    # The note is no preference: it is ranked in the block, as before.
    assert note in {f.id for f in selection.facts}
    block = _shown_text(selection)
    assert standing.INSTRUCTION in block and prompts.MEMORY_INSTRUCTION in block
    assert "left out" not in block
    hike = next(f for f in selection.standing if f.id == hiking)
    assert hike.why == "your standing preference; applies to every posting"


@pytest.mark.django_db
@pytest.mark.parametrize("budget", [None, 700])
def test_over_budget_it_shows_what_bears_most_and_says_how_many_it_left_out(settings, budget):
    settings.KARANI_MEMORY = "basic"
    if budget is not None:
        settings.KARANI_STANDING_BUDGET = budget
    visa = memory.remember(text="Any employer must sponsor my visa transfer", kind="preference")
    _fill(100)
    pager = memory.remember(text="A round-the-clock pager is a dealbreaker", kind="preference")

    selection = context.select(POSTING)

    part = standing.render(
        standing.StandingPart(selection.standing, selection.standing_omitted, budget=0)
    )
    assert len(part) <= (budget or 2000)
    shown = {f.id for f in selection.standing}
    assert {visa.id, pager.id} <= shown
    assert selection.standing_omitted == 102 - len(shown) > 0
    block = _shown_text(selection)
    assert f"- ({selection.standing_omitted} more left out, bearing least on this posting" in block
    assert standing.LIST_COMMAND in block


@pytest.mark.django_db
def test_a_standing_preference_is_never_repeated_in_the_ranked_block(settings):
    settings.KARANI_MEMORY = "basic"
    settings.KARANI_STANDING_BUDGET = 600  # most are left out, and still not ranked
    ids = [
        memory.remember(text=f"I want the platform pager quiet, rule {i}", kind="preference").id
        for i in range(12)
    ]
    scoped = memory.remember(
        text="I would take the Northwind Robotics platform pager",
        company="Northwind Robotics",
        kind="preference",
    ).id

    selection = context.select(POSTING, limit=10)

    ranked = {f.id for f in selection.facts}
    assert not ranked & set(ids)
    assert scoped in ranked  # a preference scoped to the company is ranked, as before
    assert selection.standing_omitted > 0


@pytest.mark.django_db
def test_the_ranked_block_keeps_its_cap_whatever_limit_asks(settings):
    settings.KARANI_MEMORY = "basic"
    for i in range(14):
        memory.remember(
            text=f"Northwind Robotics platform pager note {i}", company="Northwind Robotics"
        )
        memory.remember(text=f"My platform pager note {i}")
    _fill(5)

    assert len(context.select(POSTING, limit=50).facts) == 10
    assert len(context.select(POSTING).facts) == 5  # KARANI_MEMORY_TOP_K
    assert len(context.select(POSTING).standing) == 5


@pytest.mark.django_db
def test_the_pipelines_verdicts_never_crowd_out_what_people_taught(settings):
    settings.KARANI_MEMORY = "basic"
    taught = memory.remember(
        text="Northwind Robotics runs an on-call heavy SRE org", company="Northwind Robotics"
    ).id
    for n in range(4):
        memory.remember(
            text=f"Rejected Senior Platform Engineer at Northwind Robotics, fit {20 + n}",
            kind="preference",
            company="Northwind Robotics",
            source="verdict",
            ref=f"qualification:{n + 1}",
        )

    selection = context.select(POSTING, limit=5)

    company = [f.id for f in selection.facts if f.company]
    assert taught in company


@pytest.mark.django_db
def test_working_context_renders_both_parts_and_every_fact_stands_in_it(settings):
    settings.KARANI_MEMORY = "basic"
    memory.remember(text="Two office days a week is my limit", kind="preference")
    memory.remember(text="Northwind Robotics pager is heavy", company="Northwind Robotics")
    _fill(60)

    built = preparation.build_working_context(POSTING)
    body = built.to_dict()

    assert body["prompt_version"] == prompts.MEMORY_AWARE
    assert body["standing"] and body["facts"] and body["standing_omitted"] > 0
    for fact in body["standing"] + body["facts"]:
        assert fact["why"] and fact["text"] in body["block"]
        assert set(fact) == {"id", "text", "kind", "company", "score", "why"}
    assert body["block"].index(standing.HEADER) < body["block"].index(prompts.MEMORY_HEADER)


@pytest.mark.django_db
def test_the_old_versions_still_resolve_and_show_no_standing_part(settings):
    settings.KARANI_MEMORY = "basic"
    pref = memory.remember(text="A round-the-clock pager is my dealbreaker", kind="preference").id

    old = context.select(POSTING, with_standing=False)
    text = prompts.render_context(prompts.VERSIONS[prompts.MEMORY_CONTEXT_BLOCK], old)

    assert prompts.VERSIONS["qualify-v3-context"].standing is False
    assert prompts.VERSIONS["qualify-v2-memory-agent"].agent is True
    assert prompts.VERSIONS[prompts.MEMORY_AGENT].standing is True
    assert pref in {f.id for f in old.facts} and not old.standing
    assert standing.HEADER not in text


@pytest.mark.pgvector
@pytest.mark.django_db(transaction=True)
def test_in_semantic_mode_the_preference_closest_to_the_posting_is_shown(mem0_mode, settings):
    sponsor = memory.remember(
        text="I am on an H-1B and any new employer has to sponsor a transfer", kind="preference"
    ).id
    _fill(80)

    selection = context.select(POSTING)

    assert selection.mode == "mem0" and selection.fallback is False
    assert sponsor in {f.id for f in selection.standing}
    assert selection.standing_omitted > 0
    assert not {f.id for f in selection.standing} & {f.id for f in selection.facts}


@pytest.mark.pgvector
@pytest.mark.django_db(transaction=True)
def test_in_semantic_mode_a_preference_close_to_one_sentence_beats_one_close_to_all(
    mem0_mode, settings
):
    settings.KARANI_STANDING_BUDGET = 400  # room for about three
    # Close to every sentence of a posting about robots and pagers, and to none in particular.
    broad = memory.remember(
        text="I enjoy platform engineering at robotics companies with a calm on-call pager",
        kind="preference",
    ).id
    visa = memory.remember(
        text="Any employer has to sponsor my visa status transfer", kind="preference"
    ).id
    _fill(12)

    selection = context.select(POSTING)
    cosines = context.selectors.similarities(
        queries=[p.query for p in context.pieces(POSTING)],
        ids=[f.id for f in selection.standing],
    )

    shown = [f.id for f in selection.standing]
    assert shown.index(visa) < (shown.index(broad) if broad in shown else len(shown))
    assert cosines.shape == (len(context.pieces(POSTING)), len(shown))
    why = next(f.why for f in selection.standing if f.id == visa)
    assert why.startswith("your standing preference; ") and "every posting" not in why


@pytest.mark.pgvector
@pytest.mark.django_db(transaction=True)
def test_similarities_read_the_stored_vectors_and_give_0_to_a_fact_without_one(mem0_mode):
    visa = memory.remember(text="Any employer has to sponsor my visa transfer", kind="preference")
    hike = memory.remember(text="I enjoy hiking at weekends", kind="preference")

    found = context.selectors.similarities(
        queries=["Any employer has to sponsor my visa transfer", "weekend hiking trips"],
        ids=[visa.id, hike.id, hike.id + 1000],
    )

    assert found.shape == (2, 3)
    assert found[0, 0] > 0.99 and found[0, 0] > found[0, 1]
    assert found[1, 1] > found[1, 0]
    assert found[0, 2] == found[1, 2] == 0.0


@pytest.mark.django_db
def test_similarities_are_none_outside_semantic_mode_and_refuse_bad_input(settings):
    settings.KARANI_MEMORY = "basic"
    assert context.selectors.similarities(queries=["pager"], ids=[1]) is None
    with pytest.raises(MemoryInputError):
        context.selectors.similarities(queries=[], ids=[1])
    with pytest.raises(MemoryInputError):
        context.selectors.similarities(queries=["pager"], ids="1")
    with pytest.raises(MemoryInputError):
        context.selectors.similarities(queries=["pager"], ids=[0])


@pytest.mark.django_db
def test_a_standing_line_is_the_candidates_words_alone(settings):
    settings.KARANI_MEMORY = "basic"
    pref = memory.remember(text="Two office days a week is my limit", kind="preference").id

    selection = context.select(POSTING)
    part = standing.render(standing.StandingPart(selection.standing, 0, budget=0))

    # No fact id in the model's view of it: the response and the record carry the id.
    assert part.splitlines() == [standing.HEADER, "- Two office days a week is my limit"]
    assert [f.id for f in selection.standing] == [pref]


@pytest.mark.django_db
@pytest.mark.parametrize("parser", ["spacy", "word list"])
def test_over_budget_a_hard_constraint_comes_before_a_soft_preference(settings, parser):
    settings.KARANI_MEMORY = "basic"
    settings.KARANI_STANDING_BUDGET = 600
    if parser == "word list":  # the memory extra absent: no spaCy to parse with
        saved = (constraint._tried, constraint._nlp)
        constraint._tried, constraint._nlp = True, None
        constraint.is_hard.cache_clear()
    # The posting's words match the soft one (warehouse robots, pager) and not the hard ones.
    soft = memory.remember(
        text="Warehouse robots and a round-the-clock pager culture would be a welcome change",
        kind="preference",
    ).id
    never = memory.remember(text="I will never take contract work", kind="preference").id
    travel = memory.remember(text="Travel has to stay under ten percent", kind="preference").id
    _fill(20)
    try:
        selection = context.select(POSTING)
    finally:
        if parser == "word list":
            constraint._tried, constraint._nlp = saved
            constraint.is_hard.cache_clear()

    shown = [f.id for f in selection.standing]
    assert shown[:2] == [never, travel] or shown[:2] == [travel, never]
    assert soft not in shown[:2] and selection.standing_omitted > 0


@pytest.mark.parametrize(
    ("text", "hard"),
    [
        ("I will not move away from Boston", True),
        ("No adtech, gambling or crypto companies, whatever the role", True),
        ("Travel has to stay under ten percent of my time", True),
        ("My floor for base pay is $165k", True),
        ("A wellness or gym stipend is a nice extra", False),
        ("Climate and healthcare missions motivate me most", False),
    ],
)
def test_a_negation_or_a_number_makes_a_hard_constraint(text, hard):
    assert constraint.is_hard(text) is hard
    assert bool(constraint.FALLBACK.search(text)) is hard


def test_a_preference_calling_itself_a_dealbreaker_is_a_hard_constraint():
    assert constraint.is_hard("A heavy SRE pager is my dealbreaker")
    assert not constraint.is_hard("A heavy SRE pager is my favourite")


@pytest.mark.django_db
def test_when_every_preference_fits_none_is_parsed(settings):
    settings.KARANI_MEMORY = "basic"
    memory.remember(text="I will never take contract work", kind="preference")
    constraint.is_hard.cache_clear()

    selection = context.select(POSTING)

    # The order cannot change what is shown, so a small ledger never loads spaCy for it.
    assert len(selection.standing) == 1 and selection.standing_omitted == 0
    assert constraint.is_hard.cache_info().misses == 0


def test_the_first_standing_wording_keeps_its_name_and_new_decisions_get_v5():
    # The part's wording changed (one-line opening, short left-out line): a new name, so the
    # funnel tells the two apart, and v4's recorded rows still resolve.
    v4, v4_agent = (
        prompts.VERSIONS["qualify-v4-standing"],
        prompts.VERSIONS["qualify-v4-standing-agent"],
    )
    assert (v4.standing, v4.agent, v4_agent.standing, v4_agent.agent) == (True, False, True, True)
    assert (prompts.MEMORY_AWARE, prompts.MEMORY_AGENT) == (
        "qualify-v5-standing",
        "qualify-v5-standing-agent",
    )
