"""Issue 4, admin: a fact's page shows its whole correction chain, both ways."""

import re

import pytest
from admin_helpers import change_url, correct_url, fact

from memory import services
from memory.models import Memory

pytestmark = pytest.mark.django_db


@pytest.fixture
def chain_of_three(admin_client) -> tuple[Memory, Memory, Memory]:
    """v1 corrected by the admin user into v2, then by the CLI user 'lea' into v3."""
    v1 = fact("Salary floor is 70k", company="Acme", ref="call 2026-11-03")
    admin_client.post(correct_url(v1.pk), {"text": "Salary floor is 75k", "reason": "raised"})
    v2 = Memory.all_objects.get(supersedes=v1)
    v3 = services.correct(id=v2.pk, text="Salary floor is 80k", reason="offer", actor="lea")
    return v1, v2, v3


def _rows(html: str) -> list[str]:
    return re.findall(r'<tr class="memory-chain-row[^"]*" id="chain-(\d+)"', html)


def test_it_shows_the_whole_chain_from_the_middle(admin_client, admin_user, chain_of_three):
    v1, v2, v3 = chain_of_three

    html = admin_client.get(change_url(v2.pk)).content.decode()

    assert _rows(html) == [str(v1.pk), str(v2.pk), str(v3.pk)]
    for text in ("Salary floor is 70k", "Salary floor is 75k", "Salary floor is 80k"):
        assert text in html
    assert "raised" in html and "offer" in html
    assert f"by {admin_user.username}" in html
    assert "by lea" in html
    assert "ref: call 2026-11-03" in html
    assert f"supersedes #{v1.pk}" in html
    assert f'href="{change_url(v3.pk)}"' in html
    assert f'href="{change_url(v1.pk)}"' in html


def test_it_shows_the_same_chain_from_either_end(admin_client, chain_of_three):
    v1, _, v3 = chain_of_three

    first = _rows(admin_client.get(change_url(v1.pk)).content.decode())
    last = _rows(admin_client.get(change_url(v3.pk)).content.decode())

    assert first == last == [str(m.pk) for m in chain_of_three]


def test_it_labels_each_link_with_its_status(admin_client, chain_of_three):
    v1, _, v3 = chain_of_three
    services.forget(id=v3.pk, reason="withdrawn", actor="lea")

    html = admin_client.get(change_url(v1.pk)).content.decode()
    statuses = re.findall(r'<td class="memory-chain-status">(\w+)</td>', html)

    assert statuses == ["superseded", "superseded", "deleted"]
    assert "withdrawn" in html


def test_it_says_when_a_fact_was_never_corrected(admin_client):
    memory = fact("Likes Rust")

    html = admin_client.get(change_url(memory.pk)).content.decode()

    assert "never corrected" in html
    assert _rows(html) == [str(memory.pk)]
