"""The standing part reads every preference's id and words alone and only the shown ones whole:
over budget it shows the same facts, in the same order, with the same reasons, as ranking
every preference read whole did."""

import pytest

from memory import selectors
from memory import services as memory
from memory.models import Kind, Memory
from qualify import context, standing
from qualify.context import Candidate, Subject
from qualify.pieces import Piece, pieces

POSTING = Subject(
    company="Northwind Robotics",
    title="Senior Platform Engineer",
    role_category="SRE",
    salary="$150,000 - $160,000",
    description=(
        "The platform group keeps a round-the-clock pager for production incidents.\n\n"
        "We are unable to support visa petitions or status transfers for this position."
    ),
)
WORDS = [
    "I will never work a round-the-clock pager rota {}",
    "Platform teams with written incident reviews suit me {}",
    "A visa transfer must be supported, rule {}",
    "Quiet {} open-plan floors are fine by me",
    "My floor for base pay is $165k, clause {}",
    "A {} hobby budget for books would be welcome",
]


def _ledger() -> list[Memory]:
    """Sixty standing preferences, some bearing on POSTING, some hard, one forgotten and one
    corrected, beside a scoped preference and a note that are no standing ones."""
    made = [
        memory.remember(text=WORDS[i % len(WORDS)].format(f"n{i}"), kind="preference")
        for i in range(60)
    ]
    memory.forget(id=made[7].id, reason="no longer true")
    memory.correct(id=made[8].id, text="A visa transfer would be nice to have", reason="eased")
    memory.remember(text="I take its pager", company="Northwind Robotics", kind="preference")
    memory.remember(text="I need a visa transfer for any platform role")
    rows = Memory.all_objects.in_bulk([r.id for r in made])
    return [rows[r.id] for r in made]


def _read_whole(selection_before) -> list[context.ContextFact]:
    """The part as it was built: every live unscoped preference read whole, newest first,
    filtered by ``before`` here, ranked by recall's score and fitted."""
    rows = sorted(
        selectors.list_facts(kind=Kind.PREFERENCE, unscoped=True),
        key=lambda m: (m.created_at, m.id),
        reverse=True,
    )
    found = [
        selectors.RecalledFact(
            m.id, m.text, m.kind, m.company, m.ref, m.created_at, m.last_seen_at, 0.0
        )
        for m in rows
        if selection_before is None or m.created_at < selection_before
    ]
    candidates, _ = context.gather(POSTING, pieces(POSTING), before=selection_before)
    ranked = standing.rank(found, lambda f: c.score if (c := candidates.get(f.id)) else 0.0)
    everywhere = Piece("", "standing", "")
    return [
        context._shown(
            Candidate(
                fact=f,
                score=candidates[f.id].score if f.id in candidates else 0.0,
                piece=candidates[f.id].piece if f.id in candidates else everywhere,
            ),
            standing=True,
        )
        for f in standing.fit(ranked).facts
    ]


@pytest.mark.django_db
@pytest.mark.parametrize("as_of", [False, True])
def test_over_budget_it_shows_what_reading_every_preference_whole_showed(settings, as_of):
    settings.KARANI_MEMORY = "basic"
    settings.KARANI_STANDING_BUDGET = 700
    made = _ledger()
    before = made[40].created_at if as_of else None

    selection = context.select(POSTING, before=before)

    expected = _read_whole(before)
    assert selection.standing == expected
    assert selection.standing_omitted > 0
    assert len(selection.standing) + selection.standing_omitted == len(
        selectors.standing_preferences(before=before)
    )
    # Some reasons come from the posting's words, so the test sees scores and pieces carried.
    assert any("matches" in f.why or "bears on" in f.why for f in selection.standing)
    assert made[7].id not in {f.id for f in selection.standing}


@pytest.mark.django_db
def test_standing_preferences_are_newest_first_and_facts_reads_the_live_ones_in_order(settings):
    settings.KARANI_MEMORY = "basic"
    made = _ledger()

    found = selectors.standing_preferences()
    live = Memory.objects.filter(kind=Kind.PREFERENCE, company_key__isnull=True)
    assert [p.id for p in found] == [
        m.id for m in sorted(live, key=lambda m: (m.created_at, m.id), reverse=True)
    ]
    assert found[0].text == "A visa transfer would be nice to have"
    assert [p.id for p in selectors.standing_preferences(before=made[3].created_at)] == [
        m.id for m in reversed(made[:3])
    ]

    ids = [made[5].id, made[7].id, made[2].id]
    whole = selectors.facts(ids)
    assert [f.id for f in whole] == [made[5].id, made[2].id]  # the forgotten one is left out
    assert whole[0].created_at == made[5].created_at and whole[0].kind == Kind.PREFERENCE

    settings.KARANI_MEMORY = "off"
    assert selectors.standing_preferences() == []
