"""remember(): create, exact-duplicate touch, company normalisation, soft-deleted twins."""

from datetime import timedelta

import pytest
from django.utils import timezone
from ledger_helpers import counts, indexed_words

from memory import selectors, services
from memory.models import Memory

pytestmark = pytest.mark.django_db


def test_it_creates_a_live_row_with_every_field():
    result = services.remember(
        text="Prefers async remote teams",
        kind="preference",
        company="Northwind Robotics",
        source="verdict",
        fit_score=72,
        ref="qualification:123",
        actor="tester",
    )
    assert result.created is True
    assert result.to_dict() == {"id": result.id, "created": True, "seen_count": 1}
    row = Memory.objects.get(pk=result.id)
    assert (row.text, row.kind, row.company, row.company_key) == (
        "Prefers async remote teams",
        "preference",
        "Northwind Robotics",
        "northwind robotics",
    )
    assert (row.source, row.fit_score, row.ref, row.created_by) == (
        "verdict",
        72,
        "qualification:123",
        "tester",
    )
    assert row.seen_count == 1
    assert row.deleted_at is None and row.supersedes_id is None
    assert row.created_at == row.last_seen_at
    assert indexed_words(row.pk) == {"prefers", "async", "remote", "teams"}


def test_it_defaults_to_a_global_note_taught_by_hand():
    row = Memory.objects.get(pk=services.remember(text="Likes small teams").id)
    assert (row.kind, row.company, row.company_key, row.source) == ("note", None, None, "teach")
    assert row.fit_score is None and row.ref is None


def test_it_touches_an_exact_duplicate_instead_of_adding_a_row():
    first = services.remember(text="Prefers async remote teams", company="Acme")
    Memory.all_objects.filter(pk=first.id).update(last_seen_at=timezone.now() - timedelta(days=3))
    before = Memory.objects.get(pk=first.id)
    rows_before = counts()

    again = services.remember(text="Prefers async remote teams", company="Acme")

    assert again.created is False
    assert again.id == first.id
    assert again.seen_count == 2
    assert counts() == rows_before
    row = Memory.objects.get(pk=first.id)
    assert row.seen_count == 2
    assert row.last_seen_at > before.last_seen_at
    assert row.created_at == before.created_at


def test_it_counts_every_touch():
    for _ in range(4):
        last = services.remember(text="Asked about on-call rotations", kind="question")
    assert last.seen_count == 4
    assert Memory.all_objects.count() == 1


@pytest.mark.parametrize(
    "variant",
    [
        "prefers ASYNC remote teams",
        "  Prefers   async\tremote\n teams  ",
        "PREFERS ASYNC REMOTE TEAMS",
    ],
)
def test_it_dedupes_regardless_of_casing_and_whitespace(variant):
    first = services.remember(text="Prefers async remote teams")
    again = services.remember(text=variant)
    assert (again.id, again.created, again.seen_count) == (first.id, False, 2)
    # The first wording is kept: text never changes in place.
    assert Memory.objects.get(pk=first.id).text == "Prefers async remote teams"


def test_it_treats_nfc_and_nfd_spellings_as_one_fact():
    nfc = "Liked the Z\u00fcrich office"
    nfd = "Liked the Zu\u0308rich office"
    first = services.remember(text=nfc)
    again = services.remember(text=nfd)
    assert (again.id, again.created) == (first.id, False)


@pytest.mark.parametrize(
    "spelling",
    [
        " northwind  ROBOTICS",
        "NORTHWIND ROBOTICS",
        "Northwind\u00a0Robotics",
        "northwind robotics ",
    ],
)
def test_it_normalises_the_company_key(spelling):
    first = services.remember(text="Pays above market", company="Northwind Robotics")
    again = services.remember(text="Pays above market", company=spelling)
    assert (again.id, again.created) == (first.id, False)
    assert Memory.objects.get(pk=first.id).company_key == "northwind robotics"


def test_it_stores_the_company_display_name_collapsed():
    row = Memory.objects.get(
        pk=services.remember(text="Pays above market", company="  Northwind   Robotics ").id
    )
    assert (row.company, row.company_key) == ("Northwind Robotics", "northwind robotics")


def test_it_keeps_the_same_text_apart_across_kind_and_company():
    ids = {
        services.remember(text="Remote first").id,
        services.remember(text="Remote first", kind="preference").id,
        services.remember(text="Remote first", company="Acme").id,
        services.remember(text="Remote first", company="Globex").id,
        services.remember(text="Remote first", kind="preference", company="Acme").id,
    }
    assert len(ids) == 5
    assert Memory.objects.count() == 5


def test_it_writes_a_new_live_row_when_the_only_twin_is_soft_deleted():
    old = services.remember(text="Wants a hybrid role", company="Acme")
    services.forget(id=old.id, reason="changed my mind")

    new = services.remember(text="Wants a hybrid role", company="Acme")

    assert new.created is True and new.id != old.id and new.seen_count == 1
    history = Memory.all_objects.get(pk=old.id)
    assert history.deleted_at is not None and history.delete_reason == "changed my mind"
    assert history.seen_count == 1
    assert list(Memory.objects.values_list("pk", flat=True)) == [new.id]
    # The next duplicate touches the new live row, never the deleted one.
    again = services.remember(text="wants a hybrid role", company="ACME")
    assert (again.id, again.seen_count) == (new.id, 2)
    assert Memory.all_objects.get(pk=old.id).seen_count == 1


def test_it_returns_the_ref_through_recall():
    services.remember(text="Interviewed for the robotics platform role", ref="qualification:123")
    services.remember(text="Robotics startups move fast")
    refs = {r.text: r.ref for r in selectors.recall(query="robotics").results}
    assert refs == {
        "Interviewed for the robotics platform role": "qualification:123",
        "Robotics startups move fast": None,
    }


def test_it_keeps_the_first_ref_when_a_duplicate_brings_another():
    first = services.remember(text="Offer declined", kind="outcome", ref="qualification:1")
    services.remember(text="Offer declined", kind="outcome", ref="qualification:2")
    assert Memory.objects.get(pk=first.id).ref == "qualification:1"


@pytest.mark.parametrize("score", [0, 1, 50, 99, 100])
def test_it_accepts_fit_scores_from_0_to_100(score):
    row = services.remember(text=f"Fit {score} for the platform role", fit_score=score)
    assert Memory.objects.get(pk=row.id).fit_score == score


def test_it_strips_surrounding_whitespace_but_keeps_inner_lines():
    row = services.remember(text="\n  First line\nsecond line\t \n")
    assert Memory.objects.get(pk=row.id).text == "First line\nsecond line"


def test_it_accepts_text_of_exactly_2000_characters():
    text = ("remote " * 400)[:1999] + "x"
    assert len(text) == 2000
    assert services.remember(text=text).created


def test_it_indexes_each_distinct_content_word_once():
    row = services.remember(text="Remote remote REMOTE teams and the teams")
    assert indexed_words(row.id) == {"remote", "teams"}


def test_it_indexes_the_words_but_not_the_stopwords():
    row = services.remember(text="Great robotics team", company="Northwind Robotics")
    # "great" is a stopword: not a term. The company is its own column, not a word.
    assert indexed_words(row.id) == {"robotics", "team"}
