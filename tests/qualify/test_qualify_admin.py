"""Admin: verdicts and outcomes are read-only events; postings, companies and the profile are
editable and delete means soft delete; the funnel chart has its own page on the index."""

import pytest
from django.contrib import admin
from django.test import RequestFactory
from django.urls import reverse
from qualify_fakes import make_posting

from qualify import services
from qualify.models import Outcome, Posting, Qualification

pytestmark = pytest.mark.django_db


@pytest.fixture
def events(db):
    posting = make_posting()
    q = Qualification.objects.create(
        posting=posting, verdict="qualified", fit_score=77, prompt_version="qualify-v2-memory"
    )
    outcome = services.record_outcome(posting_id=posting.pk, stage="applied").outcome
    return q, outcome


@pytest.mark.parametrize("model", [Qualification, Outcome])
def test_it_gives_nobody_add_change_or_delete_on_events(model, admin_user, events):
    model_admin = admin.site._registry[model]
    request = RequestFactory().get("/")
    request.user = admin_user
    obj = model.objects.first()

    assert admin_user.is_superuser
    assert model_admin.has_view_permission(request, obj)
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request, obj)
    assert not model_admin.has_delete_permission(request, obj)
    assert "delete_selected" not in model_admin.get_actions(request)


@pytest.mark.parametrize("name", ["qualification", "outcome"])
def test_it_refuses_add_and_delete_pages_and_shows_no_form(name, admin_client, events):
    obj = events[0] if name == "qualification" else events[1]
    add = reverse(f"admin:qualify_{name}_add")
    delete = reverse(f"admin:qualify_{name}_delete", args=[obj.pk])
    change = reverse(f"admin:qualify_{name}_change", args=[obj.pk])

    assert admin_client.get(add).status_code == 403
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    page = admin_client.get(change)
    assert page.status_code == 200
    assert b'name="_save"' not in page.content
    admin_client.post(change, {"verdict": "rejected", "fit_score": 1})

    obj.refresh_from_db()
    assert getattr(obj, "verdict", "applied") in {"qualified", "applied"}
    assert Qualification.all_objects.count() == 1 and Outcome.all_objects.count() == 1


def test_it_soft_deletes_a_posting_from_the_admin(admin_client, events):
    posting = Posting.objects.get()
    url = reverse("admin:qualify_posting_delete", args=[posting.pk])

    admin_client.post(url, {"post": "yes"})

    assert Posting.objects.count() == 0
    assert Posting.all_objects.get().deleted_at is not None


def test_it_edits_the_profile_in_the_admin(admin_client, profile):
    url = reverse("admin:qualify_profile_change", args=[profile.pk])

    admin_client.post(
        url,
        {"summary": "Staff engineer", "preferences": "remote", "dealbreakers": '["relocation"]'},
    )

    profile.refresh_from_db()
    assert (profile.summary, profile.dealbreakers) == ("Staff engineer", ["relocation"])


def test_it_shows_the_funnel_chart_linked_from_the_admin_index(admin_client, events):
    funnel_url = reverse("admin:qualify_funnelreport_changelist")

    index = admin_client.get(reverse("admin:index")).content.decode()
    page = admin_client.get(funnel_url).content.decode()

    assert funnel_url in index and "Funnel chart" in index
    assert '<div id="funnel-chart"><svg' in page
    assert "<td>qualify-v2-memory</td>" in page
    assert "<td>1 (100%)</td>" in page  # applied: 1 of 1 qualified


def test_it_keeps_the_funnel_from_users_who_cannot_view_verdicts(client, django_user_model):
    staff = django_user_model.objects.create_user("staff", password="pw", is_staff=True)
    client.force_login(staff)

    response = client.get(reverse("admin:qualify_funnelreport_changelist"))

    assert response.status_code == 403


def test_a_decisions_page_shows_its_block_with_each_facts_reason(
    admin_client, llm_settings, fake_llm, profile
):
    from qualify_fakes import run_qualify

    from memory import services as memory

    fact = memory.remember(
        text="Northwind Robotics pages its SREs <every> other week", company="Northwind Robotics"
    )
    make_posting()
    run_qualify()
    q = Qualification.objects.get()

    page = admin_client.get(reverse("admin:qualify_qualification_change", args=[q.pk]))

    html = page.content.decode()
    assert page.status_code == 200
    assert "Memory block (the facts the model saw, and why)" in html
    # The fact's text is escaped; its reason is the one the decision recorded.
    link = f'<a href="/admin/memory/memory/{fact.id}/change/">fact {fact.id}</a>'
    assert f"[{link}] Northwind Robotics pages its SREs &lt;every&gt; other week" in html
    # A model call was measured: its latency shows.
    assert f"{q.latency_ms:,} ms" in html and q.latency_ms > 0
    why = q.decision_facts.get().why
    assert why.startswith("company fact; ") and f"(why: {why})" in html.replace("&#x27;", "'")
