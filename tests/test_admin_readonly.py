"""Issue 4, admin: facts are never edited in place and never hard-deleted."""

import pytest
from admin_helpers import CHANGELIST, change_url, fact, reload
from django.contrib import admin
from django.test import RequestFactory
from django.urls import reverse

from memory.models import Memory

pytestmark = pytest.mark.django_db


@pytest.fixture
def memory_admin():
    return admin.site._registry[Memory]


def test_it_gives_nobody_delete_permission(memory_admin, admin_user):
    request = RequestFactory().get("/")
    request.user = admin_user
    memory = fact("Avoids agencies")

    assert admin_user.is_superuser
    assert not memory_admin.has_delete_permission(request)
    assert not memory_admin.has_delete_permission(request, memory)
    assert "delete_selected" not in memory_admin.get_actions(request)


def test_it_refuses_the_delete_page_and_the_delete_action(admin_client):
    memory = fact("Avoids agencies")
    delete_url = reverse("admin:memory_memory_delete", args=[memory.pk])

    assert admin_client.get(delete_url).status_code == 403
    assert admin_client.post(delete_url, {"post": "yes"}).status_code == 403
    listing = admin_client.get(CHANGELIST).content.decode()
    assert "delete_selected" not in listing
    assert "forget_selected" in listing
    admin_client.post(
        CHANGELIST,
        {"action": "delete_selected", "_selected_action": [memory.pk], "post": "yes"},
    )

    assert reload(memory).deleted_at is None
    assert Memory.all_objects.count() == 1


def test_it_has_no_editable_fields_on_a_facts_page(admin_client):
    memory = fact("Prefers small teams", company="Acme", ref="posting 17")

    page = admin_client.get(change_url(memory.pk))

    assert page.status_code == 200
    assert page.context["adminform"].form.fields == {}
    html = page.content.decode()
    assert "<textarea" not in html
    assert 'name="text"' not in html
    assert 'name="_save"' not in html
    assert "Prefers small teams" in html
    assert "posting 17" in html


def test_it_refuses_an_in_place_edit_by_post(admin_client):
    memory = fact("Prefers small teams")

    response = admin_client.post(change_url(memory.pk), {"text": "Prefers big teams"})

    assert response.status_code == 403
    assert reload(memory).text == "Prefers small teams"


def test_it_offers_correct_and_forget_only_on_live_facts(admin_client):
    live, gone = fact("Still true"), fact("Old news")
    admin_client.post(reverse("admin:memory_memory_forget", args=[gone.pk]), {"reason": "stale"})

    live_page = admin_client.get(change_url(live.pk)).content.decode()
    gone_page = admin_client.get(change_url(gone.pk)).content.decode()

    assert reverse("admin:memory_memory_correct", args=[live.pk]) in live_page
    assert reverse("admin:memory_memory_correct", args=[gone.pk]) not in gone_page
    assert "stale" in gone_page
