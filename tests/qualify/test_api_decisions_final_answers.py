"""`POST /api/decisions` answers finally where a retry cannot help: a url another external id
holds is a 409 naming it, a decision naming another company than the posting's is a 409 that
says which it is; and twin postings (same company, title, verdict and score) share one verdict
fact that re-judging one of them does not take from the other."""

import pytest
from api_helpers import decision_body, error_of
from ledger_helpers import counts

from memory.models import Memory
from qualify.models import Posting, Qualification
from qualify.services import import_postings

URL = "https://jobs.example.com/northwind/sre-7"


pytestmark = pytest.mark.usefixtures("fresh_salt")


def decision(**overrides):
    return decision_body(**{"external_id": "ats-1", **overrides})


def _written():
    return counts(), Qualification.all_objects.count(), Posting.all_objects.count()


def test_a_url_another_external_id_holds_is_a_final_409_naming_it(writer):
    assert writer.post("/api/decisions", decision(url=URL), format="json").status_code == 201
    before = _written()

    answers = [
        writer.post("/api/decisions", decision(external_id="ats-2", url=URL), format="json")
        for _ in range(2)
    ]

    assert [a.status_code for a in answers] == [409, 409]
    error = error_of(answers[1])
    assert error["code"] == "url_taken"
    assert "'ats-1'" in error["message"] and "retry" not in error["message"]
    assert _written() == before
    without_url = writer.post("/api/decisions", decision(external_id="ats-2"), format="json")
    assert without_url.status_code == 201


def test_a_url_of_an_imported_posting_names_that_posting(writer):
    import_postings(records=[(1, {"company": "Northwind", "title": "Senior SRE", "url": URL})])
    imported = Posting.objects.get()

    answer = writer.post("/api/decisions", decision(url=URL), format="json")

    assert answer.status_code == 409
    error = error_of(answer)
    assert error["code"] == "url_taken"
    assert f"posting {imported.pk}'s" in error["message"]


def test_a_rejudge_naming_another_company_is_refused_and_says_which_it_is(writer):
    writer.post("/api/decisions", decision(), format="json")
    before = _written()

    other = writer.post(
        "/api/decisions", decision(company="Globex", prompt_version="pipeline-v2"), format="json"
    )
    respelled = writer.post(
        "/api/decisions",
        decision(company="  NORTHWIND ", prompt_version="pipeline-v2"),
        format="json",
    )

    assert other.status_code == 409
    error = error_of(other)
    assert error["code"] == "company_mismatch"
    assert "'Northwind', not 'Globex'" in error["message"]
    assert respelled.status_code == 201  # the same company, spelled otherwise
    assert before[2] == Posting.all_objects.count()


def test_twin_postings_share_one_verdict_fact_that_rejudging_one_leaves_to_the_other(writer):
    a = writer.post("/api/decisions", decision(external_id="twin-a"), format="json").json()
    b = writer.post("/api/decisions", decision(external_id="twin-b"), format="json").json()
    (shared,) = Memory.objects.filter(source="verdict")
    assert a["verdict_fact_id"] == b["verdict_fact_id"] == shared.pk
    assert shared.seen_count == 2

    writer.post(
        "/api/decisions",
        decision(external_id="twin-a", prompt_version="pipeline-v2", fit_score=60),
        format="json",
    )

    live = {m.pk: m.text for m in Memory.objects.filter(source="verdict")}
    assert shared.pk in live  # twin-b's verdict still stands on it
    assert sorted(live.values()) == [
        "Rejected Senior SRE at Northwind, fit 35",
        "Rejected Senior SRE at Northwind, fit 60",
    ]

    writer.post(
        "/api/decisions",
        decision(external_id="twin-b", prompt_version="pipeline-v2", fit_score=61),
        format="json",
    )

    assert shared.pk not in set(
        Memory.objects.filter(source="verdict").values_list("pk", flat=True)
    )
    for q in Qualification.objects.all():
        assert Memory.objects.filter(pk=q.verdict_fact_id).exists()
