"""Attribution where curators look: a fact's admin page and GET /api/memories/{id} show the
decisions it steered; the facts list sorts by use. Without a registered provider, memory
shows nothing of it."""

import re

import pytest
from api_helpers import client_with, token_for
from django.urls import reverse
from qualify_fakes import criteria, make_posting, run_qualify

from memory import attribution
from memory import services as memory
from qualify import services
from qualify.fact_uses import provider

pytestmark = pytest.mark.django_db


@pytest.fixture
def used(llm_settings, fake_llm, profile):
    llm_settings.KARANI_MEMORY_TOP_K = 10
    steering = memory.remember(
        text="Umbrella recruiters ask for a take-home", kind="note", company="Umbrella"
    ).memory
    idle = memory.remember(text="Initech pays late", kind="note", company="Initech").memory
    postings = [make_posting("Umbrella", f"Backend engineer {i}") for i in range(3)]
    fake_llm.queue(criteria(), criteria(), criteria(remote_ok="no"))
    run_qualify()
    services.record_outcome(posting_id=postings[0].pk, stage="applied")
    services.record_outcome(posting_id=postings[0].pk, stage="interview")
    return steering, idle


@pytest.fixture
def no_provider():
    attribution.unregister(provider)
    yield
    attribution.register(provider)


def test_it_shows_the_decisions_on_the_facts_admin_page(admin_client, used):
    steering, _idle = used

    page = admin_client.get(reverse("admin:memory_memory_change", args=[steering.pk]))

    html = page.content.decode()
    assert "Decisions this fact steered" in html
    assert (
        "in 3 decisions: 2 qualified, 1 rejected; 1 applied, 1 reached screen, 1 reached interview"
    ) in html
    assert "furthest stage interview" in html


def test_it_sorts_the_facts_list_by_use(admin_client, used):
    steering, idle = used
    url = reverse("admin:memory_memory_changelist")
    columns = admin_client.get(url).content.decode()
    assert "column-uses" in columns

    html = admin_client.get(url, {"o": "-9"}).content.decode()

    order = [int(pk) for pk in re.findall(r"/admin/memory/memory/(\d+)/change/", html)]
    assert order.index(steering.pk) < order.index(idle.pk)
    assert order[0] == steering.pk


def test_it_shows_the_decisions_in_the_api(used):
    steering, idle = used
    client = client_with(token_for("reader"))

    body = client.get(f"/api/memories/{steering.pk}").json()
    idle_body = client.get(f"/api/memories/{idle.pk}").json()

    decisions = body["attribution"]["decisions"]
    assert (decisions["decisions"], decisions["qualified"], decisions["rejected"]) == (3, 2, 1)
    assert decisions["reached"]["interview"] == 1
    assert idle_body["attribution"]["decisions"]["text"] == "in no decisions yet"


def test_it_shows_nothing_without_a_provider(admin_client, used, no_provider):
    steering, _idle = used
    client = client_with(token_for("reader"))

    assert client.get(f"/api/memories/{steering.pk}").json()["attribution"] is None
    page = admin_client.get(reverse("admin:memory_memory_change", args=[steering.pk]))
    assert "Decisions this fact steered" not in page.content.decode()
    listing = admin_client.get(reverse("admin:memory_memory_changelist")).content.decode()
    assert "column-uses" not in listing
