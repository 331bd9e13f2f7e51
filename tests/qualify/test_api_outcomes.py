"""`POST /api/outcomes` and `GET /api/funnel`: the stages an outside pipeline's postings reach,
recorded once each with their outcome fact, and the funnel over its prompt versions and arms,
the same JSON `karani funnel --json` prints."""

import io
import json

import pytest
from api_helpers import error_of, json_client, token_for, user_with_perm
from django.core.management import call_command
from ledger_helpers import counts

from memory.models import Memory
from qualify.models import Outcome

URL = "https://jobs.example.com/acme/platform-3"


pytestmark = pytest.mark.usefixtures("fresh_salt")


@pytest.fixture
def writer(writer):
    """The shared pipeline writer, speaking JSON, with one decision on URL already made."""
    writer.default_format = "json"
    body = {
        "external_id": URL,
        "company": "Acme",
        "title": "Platform Engineer",
        "verdict": "qualified",
        "fit_score": 82,
        "prompt_version": "pipeline-v1",
    }
    assert writer.post("/api/decisions", body, format="json").status_code == 201
    return writer


def test_it_records_the_stage_and_its_fact_once(writer):
    first = writer.post(
        "/api/outcomes", {"external_id": URL, "stage": "applied", "note": "via referral"}
    )
    before = counts(), Outcome.all_objects.count()
    again = writer.post(
        "/api/outcomes", {"external_id": URL, "stage": "applied", "note": "via  referral"}
    )
    other_note = writer.post("/api/outcomes", {"external_id": URL, "stage": "applied"})

    assert (first.status_code, again.status_code, other_note.status_code) == (201, 200, 201)
    body = first.json()
    assert again.json() == {**body, "created": False}
    assert body["stage"] == "applied" and body["note"] == "via referral"
    assert body["qualification_id"] is not None  # credited to the live verdict
    assert (counts()["memories"], Outcome.all_objects.count()) == (
        before[0]["memories"] + 1,
        before[1] + 1,
    )
    texts = sorted(Memory.objects.filter(source="outcome").values_list("text", flat=True))
    assert texts == [
        "Applied to Platform Engineer at Acme",
        "Applied to Platform Engineer at Acme: via referral",
    ]


def test_an_unknown_external_id_is_a_404_that_writes_nothing(writer):
    before = counts(), Outcome.all_objects.count()

    response = writer.post("/api/outcomes", {"external_id": "nope", "stage": "applied"})

    assert response.status_code == 404
    error = error_of(response)
    assert error["code"] == "not_found" and "nope" in error["message"]
    assert (counts(), Outcome.all_objects.count()) == before


def test_writing_an_outcome_needs_the_right(writer):
    reader = json_client(token_for("reader"))
    granted = json_client(user_with_perm("granted", "qualify.add_outcome"))

    refused = reader.post("/api/outcomes", {"external_id": URL, "stage": "screen"})
    allowed = granted.post("/api/outcomes", {"external_id": URL, "stage": "screen"})

    assert refused.status_code == 403
    assert error_of(refused)["message"].startswith("recording outcomes needs the ")
    assert "qualify.add_outcome" in error_of(refused)["message"]
    assert allowed.status_code == 201


def test_the_funnel_is_what_karani_funnel_json_prints(writer, settings):
    settings.KARANI_MEMORY_HOLDOUT = 0.5
    for n in range(6):
        body = {
            "external_id": f"{URL}/{n}",
            "company": "Acme",
            "title": f"Engineer {n}",
            "verdict": "qualified" if n % 2 else "rejected",
            "fit_score": 40 + n,
            "prompt_version": "pipeline-v2",
        }
        assert writer.post("/api/decisions", body, format="json").status_code == 201
    for stage in ("applied", "screen"):
        writer.post("/api/outcomes", {"external_id": URL, "stage": stage})
        writer.post("/api/outcomes", {"external_id": f"{URL}/1", "stage": stage})
    out = io.StringIO()
    call_command("funnel", "--json", stdout=out)

    response = writer.get("/api/funnel")

    assert response.status_code == 200
    body = response.json()
    printed = json.loads(out.getvalue())
    # The same moments; the API writes them in Z, the CLI as Python does (docs/api.md).
    for edge, moment in printed["arms"]["period"].items():
        printed["arms"]["period"][edge] = moment.replace("+00:00", "Z")
        assert body["arms"]["period"][edge].endswith("Z")
    assert body == printed
    versions = {v["prompt_version"]: v for v in body["versions"]}
    assert versions["pipeline-v1"]["counts"]["screen"] == 1
    assert versions["pipeline-v2"]["decisions"] == 6
    assert versions["pipeline-v2"]["counts"]["qualified"] == 3
    arms = body["arms"]
    assert arms["memory"]["decisions"] + arms["holdout"]["decisions"] == 6
    assert {s["step"] for s in arms["steps"]} == set(body["steps"])


def test_the_funnel_says_which_outcomes_it_does_not_count_and_why(writer, admin_client):
    rejected = {
        "external_id": f"{URL}/rejected",
        "company": "Acme",
        "title": "Night Shift SRE",
        "verdict": "rejected",
        "fit_score": 20,
        "prompt_version": "pipeline-v1",
    }
    assert writer.post("/api/decisions", rejected, format="json").status_code == 201
    # Applied anyway: recorded, credited to the rejected decision, and left out of the funnel.
    applied = {"external_id": rejected["external_id"], "stage": "applied"}
    assert writer.post("/api/outcomes", applied).status_code == 201

    body = writer.get("/api/funnel").json()

    assert body["versions"][0]["counts"]["applied"] == 0
    left_out = {row["what"].split(":")[0]: row for row in body["not_counted"]}
    on_rejected = left_out["outcome(s) recorded on a rejected decision"]
    assert on_rejected["outcomes"] == 1
    assert "the funnel follows the postings the pipeline qualified" in on_rejected["what"]
    assert (
        left_out[
            "outcome(s) recorded on a verdict later replaced (re-judged under a new prompt version)"
        ]["outcomes"]
        == 0
    )

    out = io.StringIO()
    call_command("funnel", stdout=out)
    assert "not counted: 1 outcome(s) recorded on a rejected decision: the funnel" in out.getvalue()
    page = admin_client.get("/admin/qualify/funnelreport/").content.decode()
    assert "Not counted: 1 outcome(s) recorded on a rejected decision: the funnel" in page
