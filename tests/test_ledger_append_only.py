"""Append-only: what a fact says never changes in place, whoever holds the model."""

import pytest

from memory import services
from memory.models import Memory

pytestmark = pytest.mark.django_db


@pytest.fixture
def fact():
    return Memory.objects.get(
        pk=services.remember(text="Prefers remote", kind="preference", company="Acme").id
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("text", "Prefers onsite"),
        ("kind", "note"),
        ("company", "Globex"),
        ("company_key", "globex"),
        ("fact_key", "0" * 64),
    ],
)
def test_it_refuses_to_save_a_rewritten_fact(fact, field, value):
    setattr(fact, field, value)
    with pytest.raises(TypeError, match=rf"{field} never change in place.*correct"):
        fact.save()
    with pytest.raises(TypeError, match="never change in place"):
        fact.save(update_fields=[field])
    fresh = Memory.objects.get(pk=fact.pk)
    assert (fresh.text, fresh.kind, fresh.company) == ("Prefers remote", "preference", "Acme")


def test_it_refuses_to_repoint_a_correction(fact):
    other = Memory.objects.get(pk=services.remember(text="Something else").id)
    new = Memory.objects.get(pk=services.correct(id=fact.pk, text="Prefers hybrid", reason="r").pk)
    new.supersedes = other
    with pytest.raises(TypeError, match="supersedes"):
        new.save()
    assert Memory.objects.get(pk=new.pk).supersedes_id == fact.pk


@pytest.mark.parametrize("field", ["text", "kind", "company", "company_key", "fact_key"])
def test_it_refuses_a_bulk_update_of_what_facts_say(fact, field):
    with pytest.raises(TypeError, match=rf"{field} never change in place"):
        Memory.all_objects.filter(pk=fact.pk).update(**{field: "x"})
    with pytest.raises(TypeError, match="never change in place"):
        Memory.objects.update(**{field: "x"})
    assert Memory.objects.get(pk=fact.pk).text == "Prefers remote"


def test_it_still_lets_the_ledger_touch_and_soft_delete(fact):
    # The bookkeeping columns are the ones that move.
    assert services.remember(text="prefers REMOTE", kind="preference", company="acme").seen_count
    services.forget(id=fact.pk, reason="changed")
    row = Memory.all_objects.get(pk=fact.pk)
    assert (row.seen_count, row.delete_reason) == (2, "changed")
    Memory.all_objects.filter(pk=fact.pk).update(indexed_at=None, vector_id=None)


def test_it_lets_a_new_unsaved_fact_be_built_freely():
    memory = Memory(text="draft", kind="note", fact_key="f" * 64)
    memory.text = "final"
    memory.save()
    assert Memory.objects.get(pk=memory.pk).text == "final"


def test_it_refuses_to_rewrite_the_row_remember_returned():
    written = services.remember(text="Prefers remote").memory
    written.text = "Prefers the office"
    with pytest.raises(TypeError, match="text never change in place"):
        written.save()
    assert Memory.objects.get(pk=written.pk).text == "Prefers remote"
