"""`GET /api/decisions?external_id=`: what was decided on a posting and what followed, so a
pipeline that restarts can tell which postings it already judged and under which prompt."""

from urllib.parse import urlencode

import pytest
from api_helpers import client_with, decision_body, error_of, token_for
from ledger_helpers import counts

from memory import services as memory
from qualify.models import Qualification

URL = "https://jobs.example.com/northwind/sre-7"


def decide(client, **overrides):
    body = decision_body(**{"reasons": "weekly pager", **overrides})
    response = client.post("/api/decisions", body, format="json")
    assert response.status_code in (200, 201), response.content
    return response.json()


def history(client, external_id=URL):
    return client.get("/api/decisions?" + urlencode({"external_id": external_id}))


def test_it_lists_the_verdicts_newest_first_with_their_facts_and_the_outcomes(writer):
    pager = memory.remember(text="Northwind SREs carry a weekly pager", company="Northwind").id
    first = decide(writer, facts=[{"id": pager, "why": "company fact; matches 'pager'"}])
    second = decide(
        writer, prompt_version="pipeline-v2", verdict="qualified", fit_score=80, model="qwen"
    )
    applied = writer.post(
        "/api/outcomes", {"external_id": URL, "stage": "applied"}, format="json"
    ).json()

    response = history(writer)

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["external_id"], body["company"], body["title"]) == (
        URL,
        "Northwind",
        "Senior SRE",
    )
    assert body["posting_id"] == first["posting_id"]
    newest, oldest = body["decisions"]
    assert (newest["id"], newest["live"], newest["verdict"], newest["fit_score"]) == (
        second["id"],
        True,
        "qualified",
        80,
    )
    assert (newest["prompt_version"], newest["model"], newest["facts"]) == (
        "pipeline-v2",
        "qwen",
        [],
    )
    assert (oldest["id"], oldest["live"], oldest["reasons"]) == (first["id"], False, "weekly pager")
    assert oldest["facts"] == [{"id": pager, "why": "company fact; matches 'pager'"}]
    assert [(o["id"], o["stage"], o["qualification_id"]) for o in body["outcomes"]] == [
        (applied["id"], "applied", second["id"])
    ]


def test_a_reader_may_ask_and_nothing_is_written(writer):
    decide(writer)
    reader = client_with(token_for("just-reading"))
    before = counts(), Qualification.all_objects.count()

    response = history(reader)

    assert response.status_code == 200
    assert [d["verdict"] for d in response.json()["decisions"]] == ["rejected"]
    assert (counts(), Qualification.all_objects.count()) == before


def test_an_unknown_posting_is_a_404_in_the_one_error_shape(writer):
    response = history(writer, "https://jobs.example.com/never-seen")

    assert response.status_code == 404
    assert "never-seen" in error_of(response)["message"]


@pytest.mark.parametrize(
    "query, field",
    [
        ("", "external_id"),
        ("external_id=", "external_id"),
        ("external_id=" + "x" * 501, "external_id"),
    ],
)
def test_a_missing_or_bad_external_id_is_a_400_naming_it(writer, query, field):
    response = writer.get("/api/decisions?" + query)

    assert response.status_code == 400
    assert field in error_of(response)["fields"]


def test_anonymous_callers_are_refused(db):
    response = client_with(None).get("/api/decisions?" + urlencode({"external_id": URL}))

    assert response.status_code == 401
    error_of(response)


def test_reading_counts_against_the_recall_rate_and_recording_against_the_write_rate(
    writer, settings
):
    from django.core.cache import cache

    decide(writer)
    settings.KARANI_API_RECALL_RATE, settings.KARANI_API_WRITE_RATE = "2/min", "1/min"
    cache.clear()

    reads = [history(writer).status_code for _ in range(3)]
    writes = [decide_status(writer, fit_score=50) for _ in range(2)]

    assert reads == [200, 200, 429]
    assert writes == [409, 429]  # the first is judged (a conflict), the second throttled


def decide_status(client, **overrides) -> int:
    return client.post("/api/decisions", decision_body(**overrides), format="json").status_code
