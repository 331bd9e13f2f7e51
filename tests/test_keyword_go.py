""" "Go", the language, is a content word: keyword recall finds it, and migration 0015 gives
facts written before it the word (both directions, on each database's own index)."""

import pytest

from memory import selectors
from memory import services as memory
from memory.models import Memory

BEFORE = [("memory", "0014_redaction")]
AFTER = [("memory", "0015_keep_go")]


def _found(query: str) -> list[int]:
    return [f.id for f in selectors.recall(query=query, limit=5).results]


@pytest.mark.django_db
def test_a_fact_about_go_is_recalled_by_the_word(settings):
    settings.KARANI_MEMORY = "basic"
    go = memory.remember(text="Northwind writes its fleet services in Go").id
    memory.remember(text="Northwind writes its billing in Java")

    assert _found("Go") == [go]
    assert _found("which companies use Go?") == [go]


@pytest.mark.django_db(transaction=True)
def test_migration_0015_adds_go_to_old_facts_and_takes_it_back(settings, migrator):
    settings.KARANI_MEMORY = "basic"
    go = memory.remember(text="I want to keep writing Go or Rust").id
    gone = memory.remember(text="Go services at Initech")
    memory.forget(id=gone.id, reason="test")
    other = memory.remember(text="Good pay and a short commute").id
    migrator.to(BEFORE)
    before = dict(Memory.all_objects.values_list("id", "terms"))
    found_before = _found("Go rust")
    migrator.to(AFTER)

    assert before[go] == "writing rust" and before[gone.id] == "services initech"
    assert found_before == [go]  # found by "rust" alone
    terms = dict(Memory.all_objects.values_list("id", "terms"))
    assert terms[go] == "writing go rust"
    assert terms[gone.id] == "go services initech" and terms[other] == before[other]
    assert _found("Go") == [go]  # the live fact only, through the database's own index
