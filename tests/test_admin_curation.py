"""Issue 4, admin: curation goes through the service — correct, forget, remember."""

import pytest
from admin_helpers import ADD, CHANGELIST, change_url, correct_url, fact, forget_url, reload
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Permission
from django.contrib.messages import get_messages

from memory.models import Memory, Source

pytestmark = pytest.mark.django_db

# Shaped like a real AWS key pair, so the secrets guard refuses it.
SECRET_TEXT = "Deploy with AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


def _messages(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def test_it_corrects_a_fact_through_the_service_recording_the_admin_user(admin_client, admin_user):
    old = fact("Prefers on-site work in Berlin", company="Northwind")

    page = admin_client.get(correct_url(old.pk))
    assert page.status_code == 200
    assert "Prefers on-site work in Berlin" in page.content.decode()

    response = admin_client.post(
        correct_url(old.pk),
        {"text": "Prefers remote work from Berlin", "reason": "she moved to remote-only"},
    )

    new = Memory.objects.get(text="Prefers remote work from Berlin")
    assert response.status_code == 302
    assert response["Location"] == change_url(new.pk)
    old = reload(old)
    assert old.deleted_at is not None
    assert old.delete_reason == "she moved to remote-only"
    assert old.deleted_by == admin_user.username
    assert old.status == "superseded"
    assert new.supersedes_id == old.pk
    assert new.created_by == admin_user.username
    assert new.source == Source.CORRECTION
    assert new.company == "Northwind"
    assert LogEntry.objects.filter(object_id=str(old.pk)).exists()


def test_it_requires_a_reason_to_correct(admin_client):
    old = fact("Likes Rust")

    response = admin_client.post(correct_url(old.pk), {"text": "Likes Go", "reason": "  "})

    assert response.status_code == 200
    assert response.context["form"].errors["reason"]
    assert reload(old).deleted_at is None
    assert not Memory.all_objects.filter(text="Likes Go").exists()


def test_it_shows_a_service_refusal_on_the_correct_form(admin_client):
    old = fact("Likes Rust")

    same = admin_client.post(
        correct_url(old.pk), {"text": " Likes Rust ", "reason": "typo"}, follow=True
    )
    secret = admin_client.post(correct_url(old.pk), {"text": SECRET_TEXT, "reason": "oops"})

    # The text it already holds is no refusal: the fact's page says nothing changed.
    assert "already says that; nothing changed" in same.content.decode()
    assert "credential" in str(secret.context["form"].errors)
    assert reload(old).deleted_at is None
    assert Memory.all_objects.count() == 1


def test_it_will_not_correct_or_forget_a_deleted_fact(admin_client):
    old = fact("Likes Rust")
    admin_client.post(forget_url(old.pk), {"reason": "stale"})

    for url in (correct_url(old.pk), forget_url(old.pk)):
        response = admin_client.post(url, {"text": "Likes Go", "reason": "again"})
        assert response.status_code == 302
        assert "already deleted" in " ".join(_messages(response))

    assert reload(old).delete_reason == "stale"
    assert Memory.all_objects.count() == 1


def test_it_names_the_successor_of_a_corrected_fact(admin_client):
    old = fact("Likes Rust")
    admin_client.post(correct_url(old.pk), {"text": "Likes Go", "reason": "changed"})
    new = Memory.objects.get()

    response = admin_client.post(correct_url(old.pk), {"text": "Likes Zig", "reason": "again"})

    assert response.status_code == 302
    assert f"Fact #{old.pk} is already corrected by #{new.pk} (changed)" in " ".join(
        _messages(response)
    )


def test_it_forgets_one_fact_with_a_required_reason(admin_client, admin_user):
    memory = fact("Avoids agencies")

    refused = admin_client.post(forget_url(memory.pk), {"reason": ""})
    assert refused.status_code == 200
    assert refused.context["form"].errors["reason"]
    assert reload(memory).deleted_at is None

    done = admin_client.post(forget_url(memory.pk), {"reason": "no longer true"})
    assert done.status_code == 302
    memory = reload(memory)
    assert memory.deleted_at is not None
    assert memory.delete_reason == "no longer true"
    assert memory.deleted_by == admin_user.username
    assert memory.status == "deleted"


def test_it_forgets_a_selection_only_after_asking_for_a_reason(admin_client, admin_user):
    first, second, untouched = fact("Fact one"), fact("Fact two"), fact("Fact three")
    selection = {"action": "forget_selected", "_selected_action": [first.pk, second.pk]}

    asked = admin_client.post(CHANGELIST, {**selection, "index": 0})
    assert asked.status_code == 200
    assert "admin/memory/memory/forget_selected.html" in [t.name for t in asked.templates]
    assert Memory.objects.count() == 3

    no_reason = admin_client.post(CHANGELIST, {**selection, "apply": "Forget", "reason": ""})
    assert no_reason.status_code == 200
    assert no_reason.context["form"].errors["reason"]
    assert Memory.objects.count() == 3

    done = admin_client.post(CHANGELIST, {**selection, "apply": "Forget", "reason": "dup import"})
    assert done.status_code == 302
    assert "Forgot 2 facts" in " ".join(_messages(done))
    for memory in (first, second):
        memory = reload(memory)
        assert (memory.delete_reason, memory.deleted_by) == ("dup import", admin_user.username)
    assert reload(untouched).deleted_at is None
    assert Memory.all_objects.count() == 3


def test_it_skips_already_deleted_facts_in_a_selection(admin_client):
    live, gone = fact("Still true"), fact("Old news")
    admin_client.post(forget_url(gone.pk), {"reason": "first reason"})

    admin_client.post(
        CHANGELIST,
        {
            "action": "forget_selected",
            "_selected_action": [live.pk, gone.pk],
            "apply": "Forget",
            "reason": "second reason",
        },
    )

    assert reload(live).delete_reason == "second reason"
    assert reload(gone).delete_reason == "first reason"


def test_it_adds_a_fact_through_remember(admin_client, admin_user):
    response = admin_client.post(
        ADD, {"text": "Wants a 4-day week", "kind": "preference", "company": "", "ref": "call 3"}
    )

    memory = Memory.objects.get()
    assert response.status_code == 302
    assert response["Location"] == change_url(memory.pk)
    assert (memory.kind, memory.company, memory.ref) == ("preference", None, "call 3")
    assert memory.source == Source.TEACH
    assert memory.created_by == admin_user.username
    assert f"Remembered as fact #{memory.pk}" in " ".join(_messages(response))


def test_it_says_already_known_and_touches_a_duplicate(admin_client):
    memory = fact("Wants a 4-day week", kind="preference", company="Acme")

    response = admin_client.post(
        ADD, {"text": "wants a 4-DAY week ", "kind": "preference", "company": " acme", "ref": ""}
    )

    assert response.status_code == 302
    assert response["Location"] == change_url(memory.pk)
    said = " ".join(_messages(response))
    assert f"Already known, touched: fact #{memory.pk}" in said
    assert "seen 2 times" in said
    assert Memory.all_objects.count() == 1
    assert reload(memory).seen_count == 2


def test_it_refuses_a_secret_on_the_add_form_and_writes_nothing(admin_client):
    response = admin_client.post(ADD, {"text": SECRET_TEXT, "kind": "note"})

    assert response.status_code == 200
    errors = response.context["form"].errors
    assert "credential" in str(errors)
    assert "credential" in response.content.decode()
    assert Memory.all_objects.count() == 0


def test_it_shows_any_input_error_on_the_add_form(admin_client):
    # The form lets a bell character through; the service refuses it.
    response = admin_client.post(ADD, {"text": "A fact \x07 with a bell", "kind": "note"})

    assert response.status_code == 200
    assert "text contains a control character U+0007 at position 8; remove it" in str(
        response.context["form"].errors["text"]
    )
    assert Memory.all_objects.count() == 0


def test_it_needs_the_change_permission_to_curate(client, django_user_model):
    memory = fact("Avoids agencies")
    viewer = django_user_model.objects.create_user(
        "viewer", password="pw-viewer-123", is_staff=True
    )
    viewer.user_permissions.add(Permission.objects.get(codename="view_memory"))
    client.force_login(viewer)

    assert client.get(change_url(memory.pk)).status_code == 200
    assert client.post(forget_url(memory.pk), {"reason": "x"}).status_code == 403
    assert client.post(correct_url(memory.pk), {"text": "y", "reason": "x"}).status_code == 403
    assert client.post(ADD, {"text": "New", "kind": "note"}).status_code == 403
    assert "forget_selected" not in client.get(CHANGELIST).content.decode()
    assert reload(memory).deleted_at is None
