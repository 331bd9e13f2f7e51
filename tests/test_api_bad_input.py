"""Bad input through the REST API: a 4xx in the one error shape, never a 500, nothing written."""

import base64
import json

import pytest
from api_helpers import client_with, error_of, token_for
from django.conf import settings
from django.core.cache import cache
from django.db import OperationalError
from django.middleware.common import CommonMiddleware
from django.test import Client, override_settings
from ledger_helpers import counts

from memory import keyword, services
from memory.models import Kind, Memory, Source

pytestmark = pytest.mark.django_db

GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@pytest.fixture
def writer():
    return client_with(token_for("writer", writer=True))


@pytest.fixture
def fact_id() -> int:
    return services.remember(text="Prefers async remote teams").id


def _rows() -> dict[str, int]:
    return counts()


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "q"),
        ({"q": "   "}, "q"),
        ({"q": "remote", "limit": "0"}, "limit"),
        ({"q": "remote", "limit": "101"}, "limit"),
        ({"q": "remote", "limit": "ten"}, "limit"),
        ({"q": "remote", "limit": "1e3"}, "limit"),
    ],
)
def test_it_names_the_bad_recall_parameter(writer, params, field):
    response = writer.get("/api/memories/recall", params)
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid"
    assert list(error["fields"]) == [field]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "text"),
        ({"text": ""}, "text"),
        ({"text": ["Likes Rust"]}, "text"),
        ({"text": "Likes Rust", "company": " \t "}, "company"),
        ({"text": "x" * 2001}, "text"),
        ({"text": "bell \x00 char"}, "text"),
        ({"text": "Likes Rust", "kind": "wish"}, "kind"),
        ({"text": "Likes Rust", "company": "c" * 201}, "company"),
        (["Likes Rust"], "non_field_errors"),
    ],
)
def test_it_rejects_a_malformed_fact_with_field_errors(writer, body, field):
    before = _rows()
    response = writer.post("/api/memories", body, format="json")
    assert response.status_code == 400
    error = error_of(response)
    assert field in error["fields"], error
    assert _rows() == before


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"text": "bell \x07 char"}, "text", "text contains a control character U+0007 at"),
        ({"text": "Likes Rust", "company": "Acme\x07"}, "company", "a control character"),
        ({"text": "Likes Rust", "ref": "job:\x1b42"}, "ref", "ref contains a control character"),
    ],
)
def test_it_passes_on_the_services_refusal_under_its_field(writer, body, field, words):
    before = _rows()
    response = writer.post("/api/memories", body, format="json")
    assert response.status_code == 400
    error = error_of(response)
    assert list(error["fields"]) == [field]
    assert words in error["fields"][field][0]
    assert _rows() == before


def test_it_names_recalls_q_for_the_services_query_refusal(writer):
    response = writer.get("/api/memories/recall", {"q": "remote \x07"})
    assert response.status_code == 400
    assert list(error_of(response)["fields"]) == ["q"]


def test_it_refuses_a_secret_naming_what_it_detected(writer):
    response = writer.post(
        "/api/memories", {"text": f"the deploy token is {GITHUB_TOKEN}"}, format="json"
    )
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "secret_refused"
    assert "github-pat" in error["detected"]
    assert "github-pat" in error["message"]
    assert list(error["fields"]) == ["text"]
    assert Memory.all_objects.count() == 0


def test_it_refuses_a_secret_in_a_correction(writer, fact_id):
    response = writer.post(
        f"/api/memories/{fact_id}/correct",
        {"text": f"use {GITHUB_TOKEN}", "reason": "r"},
        format="json",
    )
    assert response.status_code == 400
    assert error_of(response)["code"] == "secret_refused"
    assert Memory.objects.get().pk == fact_id


@pytest.mark.parametrize("raw", ["abc", "0", "-1", "1.5", "99999999999999999999999", "424242"])
@pytest.mark.parametrize("action", ["get", "delete", "correct"])
def test_it_answers_404_for_a_bad_or_unknown_id(writer, fact_id, raw, action):
    if action == "get":
        response = writer.get(f"/api/memories/{raw}")
    elif action == "delete":
        response = writer.delete(f"/api/memories/{raw}?reason=stale")
    else:
        body = {"text": "Prefers sync teams", "reason": "r"}
        response = writer.post(f"/api/memories/{raw}/correct", body, format="json")
    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"
    assert Memory.objects.get().pk == fact_id


def test_it_answers_a_body_that_is_not_json_with_400(writer):
    response = writer.generic("POST", "/api/memories", "{not json", content_type="application/json")
    assert response.status_code == 400
    assert error_of(response)["code"] == "parse_error"


def test_it_answers_a_form_body_with_415(writer):
    response = writer.post("/api/memories", {"text": "Likes Rust"})  # multipart
    assert response.status_code == 415
    assert error_of(response)["code"] == "unsupported_media_type"


def test_it_answers_an_unknown_endpoint_and_method_in_the_same_shape(writer):
    missing = writer.get("/api/nothing/here")
    assert missing.status_code == 404 and error_of(missing)["code"] == "not_found"
    wrong = writer.put("/api/memories/recall", {}, format="json")
    assert wrong.status_code == 405 and error_of(wrong)["code"] == "method_not_allowed"


def test_it_answers_503_when_the_database_fails(writer, fact_id, monkeypatch):
    # Injected fault: the token index query fails the way a dropped connection does.
    def broken(**kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(keyword, "search", broken)
    response = writer.get("/api/memories/recall", {"q": "remote"})
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    error = error_of(response)
    assert error["code"] == "database_unavailable"
    assert "connection" not in error["message"]  # no driver details leak to clients


@override_settings(KARANI_API_RECALL_RATE="2/min", KARANI_API_WRITE_RATE="1/min")
def test_it_throttles_recall_and_writes_per_scope(writer, clock):
    cache.clear()
    try:
        codes = [writer.get("/api/memories/recall", {"q": "x"}).status_code for _ in range(3)]
        assert codes == [200, 200, 429]
        first = writer.post("/api/memories", {"text": "Likes Rust"}, format="json")
        second = writer.post("/api/memories", {"text": "Likes Go"}, format="json")
        assert first.status_code == 201
        assert second.status_code == 429
        assert int(second["Retry-After"]) > 0
        assert error_of(second)["code"] == "throttled"
        # Listing is a read outside both scopes.
        assert writer.get("/api/memories").status_code == 200
        clock.advance(61)  # past the window: both scopes answer again
        assert writer.get("/api/memories/recall", {"q": "x"}).status_code == 200
        assert writer.post("/api/memories", {"text": "Likes Go"}, format="json").status_code == 201
    finally:
        cache.clear()
    assert Memory.objects.count() == 2


NESTED = "[" * 2000 + "]" * 2000


@pytest.mark.parametrize(
    "body", [NESTED, '{"text": ' + NESTED + "}", '{"text": "x", "kind": ' + NESTED + "}"]
)
def test_it_answers_json_nested_too_deep_with_400(writer, body):
    before = _rows()
    response = writer.generic("POST", "/api/memories", body, content_type="application/json")
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "parse_error"
    assert "nested too deeply" in error["message"]
    assert _rows() == before


@pytest.mark.parametrize("raw", ["p=abc", "p=", "p=1.5", "p=99999999999999999999999", "o=x"])
def test_it_answers_a_forged_cursor_with_404(writer, fact_id, raw):
    cursor = base64.b64encode(raw.encode()).decode()
    response = writer.get("/api/memories", {"cursor": cursor})
    assert response.status_code == 404
    assert error_of(response) == {"code": "not_found", "message": "Invalid cursor", "fields": {}}


@pytest.mark.parametrize(
    "size", [settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1, 3 * settings.DATA_UPLOAD_MAX_MEMORY_SIZE]
)
def test_it_answers_a_body_over_the_upload_limit_with_413(writer, size):
    body = json.dumps({"text": "x" * size})
    before = _rows()
    response = writer.generic("POST", "/api/memories", body, content_type="application/json")
    assert response.status_code == 413
    assert error_of(response)["code"] == "request_too_large"
    assert _rows() == before


def test_it_accepts_a_body_just_under_the_upload_limit(writer):
    # Same path, one byte less: the limit is Django's, not a smaller one of the API's own.
    body = json.dumps({"text": "Likes Rust", "ref": ""})
    body = body[:-1] + " " * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE - len(body)) + "}"
    assert len(body) == settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    response = writer.generic("POST", "/api/memories", body, content_type="application/json")
    assert response.status_code == 201, response.content[:300]


@pytest.mark.parametrize(
    ("method", "url", "field", "valid"),
    [
        ("post", "/api/memories", "kind", Kind.values),
        ("get", "/api/memories?kind=gossip", "kind", Kind.values),
        ("get", "/api/memories?source=gossip", "source", Source.values),
        ("get", "/api/memories?status=gossip", "status", ["live", "deleted", "all"]),
    ],
)
def test_it_lists_the_valid_values_of_a_choice(writer, method, url, field, valid):
    if method == "post":
        response = writer.post(url, {"text": "Likes Rust", "kind": "gossip"}, format="json")
    else:
        response = writer.get(url)
    assert response.status_code == 400
    error = error_of(response)
    assert list(error["fields"]) == [field]
    assert error["fields"][field] == [error["message"].removeprefix(f"{field}: ")]
    assert error["message"] == f'{field}: unknown {field} "gossip"; use one of: {", ".join(valid)}'


def test_it_answers_an_accept_header_without_json_with_406(writer):
    recall = "/api/memories/recall?q=remote"
    assert writer.get(recall, HTTP_ACCEPT="application/*").status_code == 200
    refused = writer.get(recall, HTTP_ACCEPT="text/html")
    assert refused.status_code == 406
    assert error_of(refused)["code"] == "not_acceptable"


@pytest.mark.parametrize("path", ["/api/memories", "/api/schema/", "/api/no/such/endpoint"])
def test_it_answers_a_request_refused_before_the_api_in_the_same_shape(writer, path):
    # An unknown Host is refused by Django's middleware, before DRF runs.
    refused = writer.get(path, HTTP_HOST="evil.example")
    assert refused.status_code == 400
    assert error_of(refused)["code"] == "bad_request"
    page = writer.get("/admin/login/", HTTP_HOST="evil.example")
    assert page.status_code == 400 and not page["Content-Type"].startswith("application/json")


def test_it_answers_a_middleware_failure_in_the_same_shape(monkeypatch):
    # Injected fault: a middleware that fails before the API's view is reached.
    def broken(self, request):
        raise RuntimeError("injected fault")

    monkeypatch.setattr(CommonMiddleware, "process_request", broken)
    client = Client(raise_request_exception=False)
    response = client.get("/api/memories")
    assert response.status_code == 500
    assert error_of(response)["code"] == "server_error"
    assert client.get("/admin/").status_code == 500
