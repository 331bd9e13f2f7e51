"""The REST API's operations do what the service does, in the CLI's JSON shape."""

import pytest
from api_helpers import client_with, error_of, token_for

from memory import selectors, services
from memory.models import Memory

pytestmark = pytest.mark.django_db


@pytest.fixture
def writer():
    return client_with(token_for("writer", writer=True))


@pytest.fixture
def remembered(writer) -> dict[str, int]:
    ids = {}
    for key, body in {
        "remote": {"text": "Prefers async remote teams", "kind": "preference"},
        "northwind": {"text": "Northwind pays remote staff well", "company": "Northwind"},
        "acme": {"text": "Acme asked about remote visas", "kind": "question", "company": "Acme"},
    }.items():
        response = writer.post("/api/memories", body, format="json")
        assert response.status_code == 201, response.content
        ids[key] = response.json()["id"]
    return ids


def test_it_recalls_in_the_cli_json_shape_with_z_timestamps(writer, remembered):
    response = writer.get("/api/memories/recall", {"q": "remote teams", "limit": 2})
    assert response.status_code == 200
    body = response.json()
    expected = selectors.recall(query="remote teams", limit=2).to_dict()
    # The same keys and values as the CLI's JSON; the API writes UTC as Z everywhere.
    for result in expected["results"]:
        for key in ("created_at", "last_seen_at"):
            assert result[key].endswith("+00:00")
            result[key] = result[key].removesuffix("+00:00") + "Z"
    assert body == expected
    assert body["mode"] == "basic" and body["fallback"] is False
    assert body["results"][0]["id"] == remembered["remote"]
    assert set(body["results"][0]) == {
        "id", "text", "kind", "company", "score", "ref", "created_at", "last_seen_at"
    }  # fmt: skip


def test_it_scopes_recall_to_a_company_plus_global_facts(writer, remembered):
    body = writer.get("/api/memories/recall", {"q": "remote", "company": "northwind"}).json()
    assert {r["id"] for r in body["results"]} == {remembered["remote"], remembered["northwind"]}


def test_it_answers_201_for_a_new_fact_and_200_for_a_duplicate(writer):
    first = writer.post("/api/memories", {"text": "Likes Rust"}, format="json")
    again = writer.post("/api/memories", {"text": "  likes   RUST "}, format="json")
    assert first.status_code == 201
    assert first.json() == {"id": first.json()["id"], "created": True, "seen_count": 1}
    assert again.status_code == 200
    assert again.json() == {"id": first.json()["id"], "created": False, "seen_count": 2}
    fact = Memory.objects.get()
    assert fact.created_by == "writer" and fact.source == "teach"


def test_it_lists_live_facts_newest_first_with_filters(writer, remembered):
    listed = writer.get("/api/memories").json()
    assert [f["id"] for f in listed["results"]] == sorted(remembered.values(), reverse=True)
    questions = writer.get("/api/memories", {"kind": "question"}).json()["results"]
    assert [f["id"] for f in questions] == [remembered["acme"]]
    acme = writer.get("/api/memories", {"company": " ACME "}).json()["results"]
    assert [f["id"] for f in acme] == [remembered["acme"]]
    teach = writer.get("/api/memories", {"source": "import"}).json()["results"]
    assert teach == []


def test_it_pages_with_a_cursor_and_no_count(writer):
    services.import_facts(records=[(n, {"text": f"fact number {n}"}) for n in range(1, 8)])
    seen, url, pages = [], "/api/memories?limit=3", 0
    while url:
        page = writer.get(url).json()
        assert "count" not in page
        seen += [f["id"] for f in page["results"]]
        url, pages = page["next"], pages + 1
    assert pages == 3
    assert seen == sorted(Memory.objects.values_list("pk", flat=True), reverse=True)


def test_it_lists_deleted_and_all_facts_on_request(writer, remembered):
    services.forget(id=remembered["acme"], reason="visa question answered")
    live = {f["id"] for f in writer.get("/api/memories").json()["results"]}
    deleted = writer.get("/api/memories", {"status": "deleted"}).json()["results"]
    every = {f["id"] for f in writer.get("/api/memories", {"status": "all"}).json()["results"]}
    assert remembered["acme"] not in live
    assert [(f["id"], f["status"], f["delete_reason"]) for f in deleted] == [
        (remembered["acme"], "deleted", "visa question answered")
    ]
    assert every == set(remembered.values())


def test_it_corrects_a_fact_and_shows_the_chain_both_ways(writer, remembered):
    old = remembered["remote"]
    response = writer.post(
        f"/api/memories/{old}/correct",
        {"text": "Prefers async remote teams in Europe", "reason": "she said Europe"},
        format="json",
    )
    assert response.status_code == 201
    new = response.json()
    assert new["supersedes"] == old and new["status"] == "live" and new["source"] == "correction"
    assert new["kind"] == "preference"
    before = writer.get(f"/api/memories/{old}").json()
    assert before["status"] == "superseded"
    assert before["superseded_by"] == new["id"]
    assert before["delete_reason"] == "she said Europe" and before["deleted_by"] == "writer"


def test_it_forgets_with_a_reason_in_the_body_or_the_query(writer, remembered):
    by_body = writer.delete(
        f"/api/memories/{remembered['acme']}", {"reason": "answered"}, format="json"
    )
    by_query = writer.delete(f"/api/memories/{remembered['northwind']}?reason=stale")
    assert by_body.status_code == 200 and by_query.status_code == 200
    assert by_body.json()["status"] == "deleted" and by_body.json()["delete_reason"] == "answered"
    assert by_query.json()["delete_reason"] == "stale"
    assert Memory.objects.count() == 1 and Memory.all_objects.count() == 3


def test_it_requires_a_reason_to_forget(writer, remembered):
    response = writer.delete(f"/api/memories/{remembered['acme']}")
    assert response.status_code == 400
    assert "reason" in error_of(response)["fields"]
    assert Memory.objects.filter(pk=remembered["acme"]).exists()


@pytest.mark.parametrize("action", ["correct", "forget"])
def test_it_answers_409_for_a_fact_that_is_already_deleted(writer, remembered, action):
    services.forget(id=remembered["acme"], reason="gone")
    if action == "correct":
        response = writer.post(
            f"/api/memories/{remembered['acme']}/correct",
            {"text": "Acme asked about visas", "reason": "r"},
            format="json",
        )
    else:
        response = writer.delete(f"/api/memories/{remembered['acme']}?reason=again")
    assert response.status_code == 409
    error = error_of(response)
    assert error["code"] == "fact_deleted" and "already deleted" in error["message"]
    assert Memory.all_objects.count() == 3
