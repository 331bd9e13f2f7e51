"""The API takes a request as written: an unknown field is refused by name on every endpoint
(a typo must not lose a value), a JSON value of the wrong type is refused rather than
converted, and every moment in every answer is written in UTC ending in Z."""

import re

import pytest
from api_helpers import decision_body, error_of, json_client, token_for
from ledger_helpers import counts

from memory import services
from qualify.models import Outcome, Qualification

pytestmark = pytest.mark.django_db

URL = "https://jobs.example.com/acme/sre-7"
DECISION = decision_body(external_id=URL, company="Acme", title="SRE")


@pytest.fixture
def writer(settings):
    settings.KARANI_MEMORY = "basic"
    return json_client(token_for("strict", writer=True))


@pytest.fixture
def fact_id() -> int:
    return services.remember(text="Prefers remote SRE work", company="Acme").id


def _written() -> tuple:
    return counts(), Qualification.all_objects.count(), Outcome.all_objects.count()


def _call(client, method: str, path: str, data: dict):
    if method == "get":
        return client.get(path, data)
    return getattr(client, method)(path, data, format="json")


def _unknown_field_cases(fact: int) -> list[tuple[str, str, dict, str]]:
    return [
        ("get", "/api/memories/recall", {"q": "remote", "compnay": "Acme"}, "compnay"),
        ("get", "/api/memories", {"knd": "note"}, "knd"),
        ("post", "/api/memories", {"text": "Likes Go", "knid": "note"}, "knid"),
        ("post", f"/api/memories/{fact}/correct", {"text": "x", "reasons": "typo"}, "reasons"),
        ("delete", f"/api/memories/{fact}", {"reason": "stale", "by": "me"}, "by"),
        ("get", "/api/context", {"company": "Acme", "title": "SRE", "titel": "x"}, "titel"),
        ("post", "/api/context", {"task": "find SRE roles", "desc": "x"}, "desc"),
        ("post", "/api/decisions", {**DECISION, "reason": "remote, on-call"}, "reason"),
        ("get", "/api/decisions", {"external_id": URL, "all": "1"}, "all"),
        ("post", "/api/outcomes", {"external_id": URL, "stage": "applied", "notes": "x"}, "notes"),
    ]


def test_an_unknown_field_is_refused_by_name_on_every_endpoint(writer, fact_id):
    assert writer.post("/api/decisions", DECISION).status_code == 201
    for method, path, data, unknown in _unknown_field_cases(fact_id):
        before = _written()
        response = _call(writer, method, path, data)
        assert response.status_code == 400, (method, path, response.content)
        error = error_of(response)
        assert error["code"] == "invalid"
        assert list(error["fields"]) == [unknown], (path, error)
        assert error["message"].startswith(f"{unknown}: unknown field"), error
        assert _written() == before, path


def test_the_typo_reason_does_not_lose_the_reasons(writer):
    response = writer.post("/api/decisions", {**DECISION, "reason": "remote, on-call"})

    assert response.status_code == 400
    assert "reasons" in error_of(response)["message"]  # the field it meant is listed
    assert not Qualification.all_objects.exists()


def test_an_unknown_field_inside_a_fact_given_is_named(writer, fact_id):
    body = {**DECISION, "facts": [{"id": fact_id, "whyy": "remote"}]}
    response = writer.post("/api/decisions", body)

    assert response.status_code == 400
    error = error_of(response)
    assert list(error["fields"]) == ["facts"]
    assert "whyy: unknown field" in error["message"]


@pytest.mark.parametrize(
    ("path", "body", "field", "message"),
    [
        ("/api/decisions", {**DECISION, "fit_score": "50"}, "fit_score", "integer, not a string"),
        ("/api/decisions", {**DECISION, "fit_score": 50.0}, "fit_score", "integer, not a number"),
        ("/api/decisions", {**DECISION, "fit_score": True}, "fit_score", "not a boolean"),
        ("/api/decisions", {**DECISION, "company": 7}, "company", "a string, not an integer"),
        ("/api/decisions", {**DECISION, "verdict": 1}, "verdict", "a string, not an integer"),
        ("/api/decisions", {**DECISION, "reasons": ["a"]}, "reasons", "a string, not an array"),
        ("/api/decisions", {**DECISION, "fact_ids": ["1"]}, "fact_ids", "an array of integers"),
        ("/api/decisions", {**DECISION, "fact_ids": 1}, "fact_ids", "an array, not an integer"),
        ("/api/decisions", {**DECISION, "facts": [{"id": "1"}]}, "facts", "an integer"),
        ("/api/memories", {"text": 12.5}, "text", "a string, not a number"),
        ("/api/memories", {"text": "Likes Go", "ref": 3}, "ref", "a string, not an integer"),
        ("/api/context", {"task": "SRE roles", "limit": "5"}, "limit", "an integer"),
        ("/api/context", {"task": {"text": "SRE"}}, "task", "a string, not an object"),
        ("/api/outcomes", {"external_id": URL, "stage": "applied", "note": 0}, "note", "string"),
    ],
)
def test_a_value_of_the_wrong_json_type_is_refused(writer, path, body, field, message):
    before = _written()
    response = writer.post(path, body)

    assert response.status_code == 400, response.content
    error = error_of(response)
    assert list(error["fields"]) == [field]
    assert message in error["message"], error["message"]
    assert _written() == before


def test_a_query_string_still_spells_numbers_as_text(writer, fact_id):
    # Every query value is text: limit=3 there is a number, as documented.
    response = writer.get("/api/memories/recall", {"q": "remote", "limit": "3"})
    assert response.status_code == 200
    context = writer.get("/api/context", {"company": "Acme", "title": "SRE", "limit": "2"})
    assert context.status_code == 200


STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")


def _stamps(value, path="") -> list[tuple[str, str]]:
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _stamps(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [s for i, v in enumerate(value) for s in _stamps(v, f"{path}[{i}]")]
    return [(path, value)] if isinstance(value, str) and STAMP.match(value) else []


def test_every_moment_in_every_answer_ends_in_z(writer, fact_id, settings):
    settings.KARANI_MEMORY_HOLDOUT = 0.5  # the funnel's arms then have a period
    other = services.remember(text="Avoids on-call rotations", company="Acme").id
    subject = {"company": "Acme", "title": "SRE"}
    url = next(  # a posting in the memory arm, so its decision may carry a fact
        u
        for u in (f"{URL}/{n}" for n in range(50))
        if writer.get("/api/context", {**subject, "external_id": u}).json()["arm"] == "memory"
    )
    answers = [
        writer.post("/api/decisions", {**DECISION, "external_id": url, "fact_ids": [fact_id]}),
        writer.post("/api/outcomes", {"external_id": url, "stage": "applied"}),
        writer.get("/api/decisions", {"external_id": url}),
        writer.get("/api/funnel"),
        writer.get("/api/memories/recall", {"q": "remote SRE"}),
        writer.get("/api/memories", {"status": "all"}),
        writer.get(f"/api/memories/{fact_id}"),  # its attribution's recent decisions
        writer.post("/api/memories", {"text": "Likes Go"}),
        writer.post(f"/api/memories/{other}/correct", {"text": "No night on-call", "reason": "x"}),
        writer.delete(f"/api/memories/{fact_id}", {"reason": "stale"}),
    ]
    found = []
    for response in answers:
        assert response.status_code in (200, 201), response.content
        found += _stamps(response.json(), response.request["PATH_INFO"])
    paths = {path for path, _ in found}
    # Every kind of moment is there to check: the outcome's, the funnel's, attribution's.
    assert any(p.endswith(".occurred_at") and p.startswith("/api/outcomes") for p in paths)
    assert any(".period." in p for p in paths)
    assert any(".recent[0].created_at" in p for p in paths)
    assert [(p, s) for p, s in found if not s.endswith("Z")] == []


def test_a_chunked_body_the_server_cannot_dechunk_is_a_json_411(writer):
    # runserver (like this test client) hands Django the chunks undecoded, with no
    # wsgi.input_terminated: reading the body as empty would be a misleading 400.
    before = _written()
    response = writer.post(
        "/api/memories",
        b'{"text": "Likes Go"}',
        content_type="application/json",
        HTTP_TRANSFER_ENCODING="chunked",
    )

    assert response.status_code == 411
    error = error_of(response)
    assert error["code"] == "length_required"
    assert "Content-Length" in error["message"]
    assert _written() == before


def test_a_url_over_the_limit_is_a_json_414(writer):
    response = writer.get("/api/context", {"company": "Acme", "title": "x" * 40_000})

    assert response.status_code == 414
    assert error_of(response)["code"] == "uri_too_long"
