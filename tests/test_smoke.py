import pytest

from memory import selectors, services


@pytest.mark.django_db
def test_it_remembers_and_recalls_a_fact():
    created = services.remember(text="Prefers async remote teams")
    assert created.created
    result = selectors.recall(query="remote")
    assert [f.id for f in result.results] == [created.id]
