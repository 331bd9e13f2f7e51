"""Who may do what through the REST API: 401 for strangers, reads for users, writes by right."""

from io import StringIO

import pytest
from api_helpers import client_with, error_of, token_for, user_with_perm
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.authtoken.models import Token

from memory import services
from memory.models import Memory

pytestmark = pytest.mark.django_db


@pytest.fixture
def fact_id() -> int:
    return services.remember(text="Prefers async remote teams").id


@pytest.fixture
def reader():
    return client_with(token_for("reader"))


@pytest.fixture
def writer():
    return client_with(token_for("writer", writer=True))


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", "/api/memories/recall?q=remote"),
        ("get", "/api/memories"),
        ("get", "/api/memories/1"),
        ("post", "/api/memories"),
        ("post", "/api/memories/1/correct"),
        ("delete", "/api/memories/1?reason=x"),
    ],
)
def test_it_answers_anonymous_requests_with_401_and_a_challenge(method, url):
    response = getattr(client_with(None), method)(url, {}, format="json")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert error_of(response)["code"] == "not_authenticated"


def test_it_rejects_a_wrong_token_with_401():
    response = client_with("0" * 40).get("/api/memories/recall?q=remote")
    assert response.status_code == 401
    assert error_of(response)["code"] == "authentication_failed"


def test_it_lets_any_user_read(reader, fact_id):
    assert reader.get("/api/memories/recall?q=remote").status_code == 200
    assert reader.get("/api/memories").status_code == 200
    assert reader.get(f"/api/memories/{fact_id}").status_code == 200


def test_it_forbids_writes_to_a_user_without_the_right(reader, fact_id):
    attempts = [
        reader.post("/api/memories", {"text": "Likes Rust"}, format="json"),
        reader.post(
            f"/api/memories/{fact_id}/correct", {"text": "x y", "reason": "r"}, format="json"
        ),
        reader.delete(f"/api/memories/{fact_id}?reason=obsolete"),
    ]
    for response in attempts:
        assert response.status_code == 403
        error = error_of(response)
        assert error["code"] == "permission_denied"
        assert "karani-writers" in error["message"]
        assert error["message"].startswith("writing memories needs the memory.")
    assert Memory.all_objects.count() == 1
    assert Memory.objects.get().pk == fact_id


def test_it_lets_the_writers_group_write(writer, fact_id):
    assert writer.post("/api/memories", {"text": "Likes Rust"}, format="json").status_code == 201
    assert writer.delete(f"/api/memories/{fact_id}?reason=obsolete").status_code == 200


def test_it_lets_a_model_permission_grant_exactly_its_write():
    adder = client_with(user_with_perm("adder", "memory.add_memory"))
    created = adder.post("/api/memories", {"text": "Likes Rust"}, format="json")
    assert created.status_code == 201
    # add_memory is not change_memory: forgetting and correcting stay forbidden.
    fact = created.json()["id"]
    response = adder.delete(f"/api/memories/{fact}?reason=obsolete")
    assert response.status_code == 403
    assert "memory.change_memory" in error_of(response)["message"]
    body = {"text": "Likes Rust a lot", "reason": "r"}
    assert adder.post(f"/api/memories/{fact}/correct", body, format="json").status_code == 403


def test_it_lets_the_change_permission_correct_and_forget_but_not_teach(fact_id):
    curator = client_with(user_with_perm("curator", "memory.change_memory"))
    body = {"text": "Prefers async remote teams in Europe", "reason": "she said Europe"}
    corrected = curator.post(f"/api/memories/{fact_id}/correct", body, format="json")
    assert corrected.status_code == 201
    assert curator.delete(f"/api/memories/{corrected.json()['id']}?reason=x").status_code == 200
    assert curator.post("/api/memories", {"text": "Likes Go"}, format="json").status_code == 403


def test_it_accepts_a_logged_in_session(fact_id):
    user = get_user_model().objects.create_user("alice", password="s3cret-pass-word")
    client = client_with(None)
    assert client.login(username="alice", password="s3cret-pass-word")
    assert client.get(f"/api/memories/{fact_id}").status_code == 200
    assert user.is_authenticated


def test_it_prints_the_same_token_again_and_a_new_one_on_rotate():
    first = token_for("bob")
    assert token_for("bob") == first
    out = StringIO()
    call_command("api-token", "bob", "--rotate", stdout=out)
    assert out.getvalue().strip() not in ("", first)
    assert Token.objects.filter(user__username="bob").count() == 1


def test_it_refuses_a_token_for_an_unknown_user_without_create_user():
    with pytest.raises(CommandError, match="no user 'ghost'; add --create-user"):
        call_command("api-token", "ghost", stdout=StringIO())
    assert not get_user_model().objects.filter(username="ghost").exists()


def test_it_stops_accepting_a_token_once_it_is_rotated():
    old = token_for("carol")
    client = client_with(old)
    assert client.get("/api/memories/recall?q=remote").status_code == 200
    call_command("api-token", "carol", "--rotate", stdout=StringIO())
    response = client.get("/api/memories/recall?q=remote")
    assert response.status_code == 401
    assert error_of(response)["message"] == "Invalid token."


def test_it_refuses_the_token_of_an_inactive_user():
    token = token_for("dave")
    get_user_model().objects.filter(username="dave").update(is_active=False)
    response = client_with(token).get("/api/memories/recall?q=remote")
    assert response.status_code == 401
    assert error_of(response) == {
        "code": "authentication_failed",
        "message": "User inactive or deleted.",
        "fields": {},
    }
