"""correct() and forget(): soft deletes with reasons, one transaction, never a SQL DELETE."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from ledger_helpers import counts, indexed_words

from memory import selectors, services
from memory.errors import FactAlreadyDeleted, FactNotFound, MemoryInputError
from memory.models import Memory

pytestmark = pytest.mark.django_db


@pytest.fixture
def fact():
    return Memory.objects.get(
        pk=services.remember(
            text="Prefers fully remote roles",
            kind="preference",
            company="Northwind Robotics",
            fit_score=80,
            ref="qualification:7",
        ).id
    )


def _snapshot():
    rows = list(
        Memory.all_objects.order_by("pk").values(
            "pk", "text", "deleted_at", "delete_reason", "supersedes_id", "seen_count"
        )
    )
    index = {row["pk"]: indexed_words(row["pk"]) for row in rows}
    return rows, index


_DELETE_FROM = re.compile(r'^\s*DELETE\s+FROM\s+"?(\w+)"?', re.IGNORECASE)


def _deleted_tables(queries) -> set[str]:
    return {m.group(1).lower() for q in queries if (m := _DELETE_FROM.match(q["sql"]))}


# --- correct ------------------------------------------------------------------------------


def test_it_soft_deletes_the_old_row_and_supersedes_it(fact):
    new = services.correct(
        id=fact.pk, text="Prefers remote or hybrid roles", reason="changed", actor="me"
    )
    old = Memory.all_objects.get(pk=fact.pk)
    assert old.deleted_at is not None
    assert (old.delete_reason, old.deleted_by) == ("changed", "me")
    assert old.text == "Prefers fully remote roles"
    assert old.status == "superseded"
    new = Memory.objects.get(pk=new.pk)
    assert new.supersedes_id == fact.pk
    assert new.text == "Prefers remote or hybrid roles"
    assert (new.kind, new.company, new.company_key, new.fit_score, new.ref) == (
        "preference",
        "Northwind Robotics",
        "northwind robotics",
        80,
        "qualification:7",
    )
    assert (new.source, new.seen_count, new.created_by) == ("correction", 1, "me")
    assert list(Memory.objects.values_list("pk", flat=True)) == [new.pk]


def test_it_moves_the_keyword_index_to_the_new_row(fact):
    new = services.correct(id=fact.pk, text="Prefers hybrid roles", reason="changed")
    assert indexed_words(fact.pk) == set()
    assert selectors.recall(query="fully").results == []
    assert [r.id for r in selectors.recall(query="hybrid").results] == [new.pk]


def test_it_corrects_a_correction_into_a_chain(fact):
    second = services.correct(id=fact.pk, text="Prefers hybrid roles", reason="r1")
    third = services.correct(id=second.pk, text="Prefers on-site roles", reason="r2")
    chain = [third.pk]
    row = Memory.all_objects.get(pk=third.pk)
    while row.supersedes_id:
        chain.append(row.supersedes_id)
        row = Memory.all_objects.get(pk=row.supersedes_id)
    assert chain == [third.pk, second.pk, fact.pk]


def test_it_rolls_back_the_soft_delete_when_the_new_row_fails(fact, monkeypatch):
    before = _snapshot()

    def broken_write(*args, **kwargs):
        raise RuntimeError("injected fault after the soft delete")

    monkeypatch.setattr(services, "write_fact", broken_write)
    with pytest.raises(RuntimeError, match="injected fault"):
        services.correct(id=fact.pk, text="Prefers hybrid roles", reason="changed")
    assert _snapshot() == before
    assert Memory.objects.get(pk=fact.pk).deleted_at is None


def test_it_rolls_back_everything_when_the_correction_fails_after_the_new_row(fact, monkeypatch):
    # The fault strikes once the new row (and, by the database, its keyword index entry) is
    # written: the soft delete, the new row and the index all roll back together.
    before = _snapshot()
    real = services.write_fact

    def write_then_fail(*args, **kwargs):
        real(*args, **kwargs)
        raise RuntimeError("injected fault after the new row")

    monkeypatch.setattr(services, "write_fact", write_then_fail)
    with pytest.raises(RuntimeError, match="injected fault"):
        services.correct(id=fact.pk, text="Prefers hybrid roles", reason="changed")
    assert _snapshot() == before


def test_it_refuses_to_correct_an_unknown_fact():
    before = counts()
    with pytest.raises(FactNotFound, match="no fact with id 999999"):
        services.correct(id=999999, text="whatever", reason="r")
    assert counts() == before


def test_it_refuses_to_correct_a_deleted_fact_saying_when_and_why(fact):
    services.forget(id=fact.pk, reason="wrong company")
    before = _snapshot()
    with pytest.raises(FactAlreadyDeleted, match=rf"fact {fact.pk} was already deleted on .*wrong"):
        services.correct(id=fact.pk, text="Prefers hybrid roles", reason="changed")
    assert _snapshot() == before


def test_it_refuses_to_correct_a_superseded_fact(fact):
    successor = services.correct(id=fact.pk, text="Prefers hybrid roles", reason="r1")
    before = _snapshot()
    # The refusal names the fact that replaced it: the one the caller meant to change.
    named = rf"^fact {fact.pk} was already corrected by fact {successor.pk} on .* \(r1\)$"
    with pytest.raises(FactAlreadyDeleted, match=named):
        services.correct(id=fact.pk, text="Prefers on-site roles", reason="r2")
    with pytest.raises(FactAlreadyDeleted, match=named):
        services.forget(id=fact.pk, reason="r2")
    assert _snapshot() == before


@pytest.mark.parametrize("reason", [None, "", "   "])
def test_it_requires_a_reason_to_correct(fact, reason):
    before = _snapshot()
    with pytest.raises(MemoryInputError, match="a reason is required"):
        services.correct(id=fact.pk, text="Prefers hybrid roles", reason=reason)
    assert _snapshot() == before


@pytest.mark.parametrize("text", ["", "  ", "x" * 2001, "bad\x00"])
def test_it_validates_the_corrected_text(fact, text):
    before = _snapshot()
    with pytest.raises(MemoryInputError):
        services.correct(id=fact.pk, text=text, reason="r")
    assert _snapshot() == before


def test_a_correction_to_the_text_the_fact_holds_returns_it_unchanged(fact):
    before = _snapshot()
    assert services.correct(id=fact.pk, text=f"  {fact.text}\r\n", reason="r").pk == fact.pk
    assert _snapshot() == before
    # Another case is another text: a real correction.
    new = services.correct(id=fact.pk, text=fact.text.upper(), reason="case")
    assert new.supersedes_id == fact.pk and new.text == fact.text.upper()


def test_it_refuses_a_correction_whose_text_is_already_live(fact):
    twin = services.remember(
        text="Prefers hybrid roles", kind="preference", company="Northwind Robotics"
    )
    before = _snapshot()
    with pytest.raises(MemoryInputError, match=rf"already live as fact {twin.id}"):
        services.correct(id=fact.pk, text="Prefers hybrid roles", reason="r")
    assert _snapshot() == before


@pytest.mark.parametrize("bad_id", [0, -1, True, "1", 1.0, None])
def test_it_refuses_an_id_that_is_not_a_positive_whole_number(fact, bad_id):
    with pytest.raises(MemoryInputError, match="fact id must be a positive whole number"):
        services.correct(id=bad_id, text="Prefers hybrid roles", reason="r")
    with pytest.raises(MemoryInputError, match="fact id must be a positive whole number"):
        services.forget(id=bad_id, reason="r")


# --- forget -------------------------------------------------------------------------------


def test_it_soft_deletes_with_the_reason_and_keeps_the_row(fact):
    forgotten = services.forget(id=fact.pk, reason="no longer true", actor="me")
    assert forgotten.pk == fact.pk
    row = Memory.all_objects.get(pk=fact.pk)
    assert row.deleted_at is not None
    assert (row.delete_reason, row.deleted_by, row.status) == ("no longer true", "me", "deleted")
    assert row.text == fact.text
    assert not Memory.objects.filter(pk=fact.pk).exists()
    assert indexed_words(fact.pk) == set()
    assert selectors.recall(query="remote").results == []


@pytest.mark.parametrize("reason", [None, "", "  \n"])
def test_it_requires_a_reason_to_forget(fact, reason):
    before = _snapshot()
    with pytest.raises(MemoryInputError, match="a reason is required"):
        services.forget(id=fact.pk, reason=reason)
    assert _snapshot() == before


def test_it_refuses_a_reason_over_500_characters(fact):
    with pytest.raises(MemoryInputError, match="reason is 501 characters"):
        services.forget(id=fact.pk, reason="r" * 501)
    assert Memory.objects.filter(pk=fact.pk).exists()


def test_it_refuses_to_forget_twice(fact):
    services.forget(id=fact.pk, reason="first")
    before = _snapshot()
    with pytest.raises(FactAlreadyDeleted, match=rf"fact {fact.pk} was already deleted.*first"):
        services.forget(id=fact.pk, reason="second")
    assert _snapshot() == before
    assert Memory.all_objects.get(pk=fact.pk).delete_reason == "first"


def test_it_refuses_to_forget_an_unknown_fact():
    with pytest.raises(FactNotFound, match="no fact with id 424242"):
        services.forget(id=424242, reason="r")


# --- never a SQL DELETE -------------------------------------------------------------------


def test_it_refuses_model_delete(fact):
    with pytest.raises(TypeError, match="never hard-deleted"):
        fact.delete()
    assert Memory.all_objects.filter(pk=fact.pk).exists()


@pytest.mark.parametrize("manager", ["objects", "all_objects"])
def test_it_refuses_queryset_delete(fact, manager):
    with pytest.raises(TypeError, match="never hard-deleted"):
        getattr(Memory, manager).all().delete()
    with pytest.raises(TypeError, match="never hard-deleted"):
        getattr(Memory, manager).filter(pk=fact.pk).delete()
    assert Memory.all_objects.filter(pk=fact.pk).exists()


def test_it_never_issues_delete_from_memories_when_correcting_or_forgetting(fact):
    other = services.remember(text="Dislikes long interview loops")
    with CaptureQueriesContext(connection) as ctx:
        new = services.correct(id=fact.pk, text="Prefers hybrid roles", reason="changed")
        services.forget(id=new.pk, reason="gone")
        services.forget(id=other.id, reason="gone too")
    # Facts are soft-deleted and the keyword index only clears bits: no DELETE at all.
    assert _deleted_tables(ctx.captured_queries) == set()
    # ...and the check would have seen one.
    assert _deleted_tables([{"sql": 'DELETE FROM "memories" WHERE "id" = 1'}]) == {"memories"}
    # Every row is still there, as history.
    assert Memory.all_objects.count() == 3


def test_it_answers_a_repeated_forget_as_the_first_and_writes_nothing(fact):
    first = services.forget(id=fact.pk, reason="no longer true", actor="me")
    before = _snapshot()
    again = services.forget(id=fact.pk, reason="no longer true", actor="me")
    assert (again.pk, again.deleted_at, again.delete_reason) == (
        first.pk,
        first.deleted_at,
        first.delete_reason,
    )
    assert _snapshot() == before
    with pytest.raises(FactAlreadyDeleted):  # another actor, or another reason: a refusal
        services.forget(id=fact.pk, reason="no longer true", actor="someone else")


def test_it_answers_a_repeated_correction_with_its_new_row(fact):
    new = services.correct(id=fact.pk, text="Prefers hybrid roles", reason="changed", actor="me")
    before = _snapshot()
    again = services.correct(id=fact.pk, text="Prefers hybrid roles", reason="changed", actor="me")
    assert again.pk == new.pk
    assert _snapshot() == before
    with pytest.raises(FactAlreadyDeleted):  # other text: a refusal, not a second successor
        services.correct(id=fact.pk, text="Prefers onsite roles", reason="changed", actor="me")


def test_it_refuses_to_forget_a_corrected_fact_even_with_the_same_reason(fact):
    services.correct(id=fact.pk, text="Prefers hybrid roles", reason="changed", actor="me")
    with pytest.raises(FactAlreadyDeleted):
        services.forget(id=fact.pk, reason="changed", actor="me")
