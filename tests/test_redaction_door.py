"""Issue 44: redaction goes through the door (memory.services.redact, memory.selectors'
stored_credentials), and the model's guard knows it: a fact's text changes in place only by
its one named path, and only to redact a credential (ADR 0012)."""

import pytest

from memory import selectors, services
from memory import text as textmod
from memory.errors import MemoryInputError
from memory.models import Memory, Redaction

TOKEN = "ghp_Q7mZ2xW9rT4kP1vN8bL3cF6hJ0dS5gY2aE7u"


def _plant(text: str, company: str | None = None) -> Memory:
    """A fact written with the ORM, past the door's screen (as rules before today let in)."""
    key = textmod.company_key(company) if company else None
    return Memory.all_objects.create(
        text=text,
        company=company,
        company_key=key,
        fact_key=textmod.fact_key(text=text, kind="note", company_key=key),
    )


@pytest.mark.django_db(transaction=True)
def test_the_door_redacts_a_fact_and_its_derived_columns_follow():
    fact = _plant(f"Recruiter pasted {TOKEN} into the chat", company="Initech")
    assert [(f.table, f.id, f.field) for f in selectors.stored_credentials()] == [
        ("memories", fact.pk, "text")
    ]
    record = services.redact(actor="auditor")
    assert isinstance(record, Redaction) and record.actor == "auditor"
    row = Memory.all_objects.get(pk=fact.pk)
    assert row.text == "Recruiter pasted [redacted: github-pat] into the chat"
    assert row.terms == " ".join(textmod.tokens(row.text))
    assert row.fact_key == textmod.fact_key(text=row.text, kind="note", company_key="initech")
    assert selectors.stored_credentials() == []
    assert services.redact(actor="auditor") is None


@pytest.mark.django_db(transaction=True)
def test_the_door_refuses_an_actor_that_is_a_credential_and_redacts_nothing():
    fact = _plant(f"Token {TOKEN}")
    with pytest.raises(MemoryInputError):
        services.redact(actor=TOKEN)
    assert Memory.all_objects.get(pk=fact.pk).text == f"Token {TOKEN}"
    assert not Redaction.objects.exists()


@pytest.mark.django_db
def test_the_guard_lets_a_fact_s_text_change_in_place_only_to_redact_a_credential():
    fact = _plant(f"Token {TOKEN}")
    with pytest.raises(TypeError, match="only to redact a credential"):
        Memory.all_objects.redact(fact.pk, {"text": "Token rewritten"}, actor="x")
    with pytest.raises(TypeError, match="kind are not a fact's free texts"):
        Memory.all_objects.redact(fact.pk, {"kind": "preference"}, actor="x")
    assert Memory.all_objects.get(pk=fact.pk).text == f"Token {TOKEN}"
    # Every other path names the two that may change a fact's text.
    with pytest.raises(TypeError, match=r"services\.correct\(\).*services\.redact\(\)"):
        Memory.all_objects.filter(pk=fact.pk).update(text="Token [redacted: github-pat]")
    row = Memory.all_objects.get(pk=fact.pk)
    row.text = "Token [redacted: github-pat]"
    with pytest.raises(TypeError, match=r"services\.redact\(\)"):
        row.save()
