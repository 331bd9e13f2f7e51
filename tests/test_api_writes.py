"""Correct and forget answer from what the service committed, and a retry is answered alike.

A write that committed must never be answered 503: if the database went away just after the
commit, a re-read would fail and the client would retry a write that happened. Each spec
below cuts the database off the moment the service returns.
"""

import re

import pytest
from api_helpers import client_with, error_of, token_for
from django.db import OperationalError, connection

from memory import services
from memory.api import views
from memory.models import Memory

pytestmark = pytest.mark.django_db

ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


@pytest.fixture
def writer():
    return client_with(token_for("writer", writer=True))


@pytest.fixture
def fact_id() -> int:
    return services.remember(text="Prefers async remote teams", kind="preference").id


@pytest.fixture
def database_gone_after(monkeypatch):
    """Make ``services.<name>`` cut the database off once it has committed and returned."""

    def cut(name: str) -> None:
        real = getattr(services, name)

        def then_die(**kwargs):
            row = real(**kwargs)

            def refuse(*args, **kwargs):
                raise OperationalError("injected: server closed the connection unexpectedly")

            monkeypatch.setattr(connection, "cursor", refuse)
            return row

        monkeypatch.setattr(views.services, name, then_die)

    return cut


def test_a_forget_is_answered_from_the_row_it_deleted(writer, fact_id, database_gone_after):
    database_gone_after("forget")
    response = writer.delete(f"/api/memories/{fact_id}?reason=stale")
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["id"], body["status"], body["delete_reason"]) == (fact_id, "deleted", "stale")
    assert body["deleted_by"] == "writer" and body["superseded_by"] is None


def test_a_correction_is_answered_from_the_row_it_created(writer, fact_id, database_gone_after):
    database_gone_after("correct")
    response = writer.post(
        f"/api/memories/{fact_id}/correct",
        {"text": "Prefers async remote teams in Europe", "reason": "she said Europe"},
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["supersedes"] == fact_id and body["superseded_by"] is None
    assert (body["status"], body["source"], body["kind"]) == ("live", "correction", "preference")
    assert body["text"] == "Prefers async remote teams in Europe"


def test_a_repeated_forget_answers_as_the_first_did(writer, fact_id):
    first = writer.delete(f"/api/memories/{fact_id}?reason=stale")
    again = writer.delete(f"/api/memories/{fact_id}", {"reason": "stale"}, format="json")
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert Memory.all_objects.get(pk=fact_id).delete_reason == "stale"


def test_a_forget_with_another_reason_or_by_another_writer_is_a_conflict(writer, fact_id):
    assert writer.delete(f"/api/memories/{fact_id}?reason=stale").status_code == 200
    other = writer.delete(f"/api/memories/{fact_id}?reason=wrong")
    assert other.status_code == 409 and error_of(other)["code"] == "fact_deleted"
    someone = client_with(token_for("other", writer=True))
    assert someone.delete(f"/api/memories/{fact_id}?reason=stale").status_code == 409
    # The second writer's client cleared the throttle cache, not the first answer.
    assert Memory.all_objects.get(pk=fact_id).deleted_by == "writer"


def test_a_repeated_correction_answers_with_the_same_new_row(writer, fact_id):
    body = {"text": "Prefers async remote teams in Europe", "reason": "she said Europe"}
    first = writer.post(f"/api/memories/{fact_id}/correct", body, format="json")
    again = writer.post(f"/api/memories/{fact_id}/correct", body, format="json")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert Memory.all_objects.count() == 2


def test_a_correction_to_the_text_the_fact_holds_answers_200_with_it_unchanged(writer, fact_id):
    # A pipeline re-sending what the fact already says is told so, not refused: same id, 200.
    body = {"text": " Prefers async\r\nremote teams ", "reason": "re-sent"}
    services.correct(id=fact_id, text="Prefers async\nremote teams", reason="lines")
    live = Memory.objects.get()
    same = writer.post(f"/api/memories/{live.pk}/correct", body, format="json")
    assert same.status_code == 200, same.content
    assert (same.json()["id"], same.json()["status"], same.json()["supersedes"]) == (
        live.pk,
        "live",
        fact_id,
    )
    assert Memory.all_objects.count() == 2 and Memory.objects.get().pk == live.pk
    # Another case is another text: a real correction, the old row soft-deleted.
    cased = writer.post(
        f"/api/memories/{live.pk}/correct",
        {"text": "prefers ASYNC\nremote teams", "reason": "case"},
        format="json",
    )
    assert cased.status_code == 201 and cased.json()["supersedes"] == live.pk
    assert Memory.objects.get().text == "prefers ASYNC\nremote teams"


def test_a_retried_correction_shows_what_happened_to_its_row_since(writer, fact_id):
    # The retry returns the row the first call made; it has been forgotten in between, and
    # the answer says so (it is read, not assumed fresh).
    body = {"text": "Prefers async remote teams in Europe", "reason": "she said Europe"}
    new = writer.post(f"/api/memories/{fact_id}/correct", body, format="json").json()["id"]
    services.forget(id=new, reason="moved on", actor="admin")
    again = writer.post(f"/api/memories/{fact_id}/correct", body, format="json")
    assert again.status_code == 201
    assert (again.json()["id"], again.json()["status"]) == (new, "deleted")


def test_every_timestamp_is_iso_8601_utc_ending_in_z(writer, fact_id):
    writer.delete(f"/api/memories/{fact_id}?reason=stale")
    services.remember(text="Likes remote Rust teams")
    recalled = writer.get("/api/memories/recall", {"q": "remote"}).json()["results"]
    listed = writer.get("/api/memories", {"status": "all"}).json()["results"]
    detail = writer.get(f"/api/memories/{fact_id}").json()
    stamps = [r[k] for r in recalled for k in ("created_at", "last_seen_at")]
    stamps += [f[k] for f in [*listed, detail] for k in ("created_at", "last_seen_at")]
    stamps += [detail["deleted_at"]]
    assert len(stamps) == 9
    assert all(ISO_Z.match(stamp) for stamp in stamps), stamps
