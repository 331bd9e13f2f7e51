"""`POST /api/decisions`: an outside pipeline records its verdict; the posting (by external
id), the decision event with the facts it was given, and one verdict fact are written; an exact
repeat writes nothing; a new prompt version is a new decision that the funnel counts."""

import pytest
from api_helpers import client_with, decision_body, error_of, token_for, user_with_perm
from django.db import connection
from ledger_helpers import counts

from memory import services as memory
from memory.models import Memory
from qualify import holdout
from qualify.models import Arm, DecisionFact, Posting, Qualification

URL = "https://jobs.example.com/northwind/sre-7"


pytestmark = pytest.mark.usefixtures("fresh_salt")


@pytest.fixture
def facts(db):
    return [
        memory.remember(text="Northwind SREs carry a weekly pager", company="Northwind").id,
        memory.remember(text="Prefers remote SRE roles", kind="preference").id,
    ]


def decision(**overrides):
    return decision_body(**{"role_category": "sre", "reasons": "weekly pager", **overrides})


def verdict_facts() -> list[Memory]:
    return list(Memory.objects.filter(source="verdict"))


def test_it_records_the_posting_the_decision_and_one_verdict_fact(writer, facts):
    response = writer.post(
        "/api/decisions",
        decision(
            facts=[{"id": facts[0], "why": "company fact; matches 'pager'"}, {"id": facts[1]}]
        ),
        format="json",
    )

    assert response.status_code == 201, response.content
    body = response.json()
    q = Qualification.objects.get()
    assert body == {
        "id": q.pk,
        "created": True,
        "external_id": URL,
        "posting_id": q.posting_id,
        "verdict": "rejected",
        "fit_score": 35,
        "prompt_version": "pipeline-v1",
        "arm": "none",
        "fact_ids": facts,
        "replaced": None,
        "verdict_fact_id": verdict_facts()[0].pk,
        "fact_written": True,
        "fact_error": None,
    }
    posting = Posting.objects.get()
    assert (posting.external_id, posting.company.name, posting.role_category) == (
        URL,
        "Northwind",
        "sre",
    )
    assert (q.reasons, q.fact_count) == ("weekly pager", 2)
    why = dict(DecisionFact.objects.values_list("memory_id", "why"))
    assert why == {facts[0]: "company fact; matches 'pager'", facts[1]: ""}
    (fact,) = verdict_facts()
    assert fact.text == "Rejected Senior SRE at Northwind, fit 35"
    assert (fact.ref, fact.company, fact.fit_score) == (f"qualification:{q.pk}", "Northwind", 35)


@pytest.mark.django_db(transaction=True)  # autocommit, as in a server: no test transaction
def test_a_verdict_fact_the_database_refuses_leaves_the_decision_and_a_repeat_writes_it(
    writer, monkeypatch
):
    # An injected fault: the fact's write fails inside the database, inside the decision's
    # transaction; on PostgreSQL that would abort the transaction but for the savepoint.
    def failing_write(*args, **kwargs):
        with connection.cursor() as cursor:
            cursor.execute("SELECT no_such_column FROM memories")

    with monkeypatch.context() as faults:
        faults.setattr(memory, "write_fact", failing_write)
        response = writer.post("/api/decisions", decision(), format="json")

    assert response.status_code == 201, response.content
    body = response.json()
    assert "no_such_column" in body["fact_error"]
    assert (body["verdict_fact_id"], body["fact_written"]) == (None, False)
    q = Qualification.objects.get()
    assert (q.verdict, q.posting.external_id) == ("rejected", URL)
    assert verdict_facts() == []

    again = writer.post("/api/decisions", decision(), format="json")

    assert again.status_code == 200, again.content
    (fact,) = verdict_facts()
    assert again.json() == {
        **body,
        "created": False,
        "verdict_fact_id": fact.pk,
        "fact_written": True,
        "fact_error": None,
    }
    assert fact.ref == f"qualification:{q.pk}"


def test_an_exact_repeat_is_a_200_that_writes_nothing(writer, facts):
    first = writer.post("/api/decisions", decision(fact_ids=facts), format="json")
    before = counts(), Qualification.all_objects.count(), DecisionFact.objects.count()

    again = writer.post("/api/decisions", decision(fact_ids=facts), format="json")

    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json() == {**first.json(), "created": False, "fact_written": False}
    after = counts(), Qualification.all_objects.count(), DecisionFact.objects.count()
    assert after == before
    assert Memory.objects.get(source="verdict").seen_count == 1  # not even touched


def test_a_new_prompt_version_is_a_new_decision_the_funnel_counts(writer):
    first = writer.post("/api/decisions", decision(), format="json").json()

    second = writer.post(
        "/api/decisions",
        decision(prompt_version="pipeline-v2", verdict="qualified", fit_score=80),
        format="json",
    )

    assert second.status_code == 201
    assert second.json()["replaced"] == first["id"]
    assert Qualification.objects.get().pk == second.json()["id"]  # one live verdict
    assert Qualification.all_objects.get(pk=first["id"]).deleted_at is not None
    (fact,) = verdict_facts()  # the old verdict's fact is forgotten, the new one written
    assert fact.text == "Qualified Senior SRE at Northwind, fit 80"
    funnel = writer.get("/api/funnel").json()
    versions = {v["prompt_version"]: v for v in funnel["versions"]}
    assert set(versions) == {"pipeline-v2"}
    assert versions["pipeline-v2"]["counts"]["qualified"] == 1


def test_another_answer_under_the_same_version_is_a_conflict(writer):
    writer.post("/api/decisions", decision(), format="json")
    before = counts(), Qualification.all_objects.count()

    response = writer.post("/api/decisions", decision(fit_score=36), format="json")

    assert response.status_code == 409
    assert error_of(response)["code"] == "decision_conflict"
    assert (counts(), Qualification.all_objects.count()) == before


def test_a_held_out_posting_records_its_arm_and_refuses_facts(writer, facts, settings):
    settings.KARANI_MEMORY_HOLDOUT = 0.5
    held = next(f"{URL}?{n}" for n in range(1000) if holdout.arm_for(f"{URL}?{n}") == "holdout")
    before = counts()

    with_facts = writer.post(
        "/api/decisions", decision(external_id=held, fact_ids=facts), format="json"
    )
    without = writer.post("/api/decisions", decision(external_id=held), format="json")

    assert with_facts.status_code == 400
    assert list(error_of(with_facts)["fields"]) == ["fact_ids"]
    assert without.status_code == 201 and without.json()["arm"] == Arm.HOLDOUT
    assert counts()["memories"] == before["memories"] + 1  # only the verdict fact


def test_writing_needs_the_right_and_reading_the_funnel_does_not(db, settings):
    settings.KARANI_MEMORY = "basic"
    reader = client_with(token_for("just-reading"))
    granted = client_with(user_with_perm("granted", "qualify.add_qualification"))

    refused = reader.post("/api/decisions", decision(), format="json")
    allowed = granted.post("/api/decisions", decision(), format="json")

    assert refused.status_code == 403
    assert error_of(refused)["message"] == (
        "recording decisions needs the qualify.add_qualification permission "
        "or membership of the 'karani-writers' group"
    )
    assert allowed.status_code == 201
    assert reader.get("/api/funnel").status_code == 200


def test_a_posting_recorded_once_keeps_its_first_fields(writer):
    writer.post("/api/decisions", decision(), format="json")

    writer.post(
        "/api/decisions",
        decision(title="Renamed", prompt_version="pipeline-v2", verdict="qualified"),
        format="json",
    )

    assert Posting.all_objects.get().title == "Senior SRE"


def test_a_rerun_with_other_reasons_or_facts_is_a_repeat_and_the_first_stands(writer, facts):
    first = writer.post("/api/decisions", decision(fact_ids=facts[:1]), format="json").json()

    rerun = writer.post(
        "/api/decisions", decision(reasons="other words", fact_ids=facts), format="json"
    )

    assert rerun.status_code == 200 and rerun.json() == {
        **first,
        "created": False,
        "fact_written": False,
    }
    assert Qualification.objects.get().reasons == "weekly pager"
    assert DecisionFact.objects.count() == 1


def test_a_remote_policy_as_boards_write_it_keeps_its_detail_in_the_location(writer):
    body = decision(location="New York, NY", remote="Hybrid (2 days)")

    assert writer.post("/api/decisions", body, format="json").status_code == 201
    again = writer.post("/api/decisions", body, format="json")

    posting = Posting.objects.get()
    assert (posting.remote, posting.location) == ("hybrid", "New York, NY (2 days)")
    assert again.status_code == 200 and again.json()["created"] is False


def test_it_records_the_standing_preferences_the_context_showed(writer, facts, settings):
    company, pref = facts
    query = {"company": "Northwind", "title": "Senior SRE"}
    shown = writer.post("/api/context", query, format="json").json()
    standing = [{"id": f["id"], "why": f["why"]} for f in shown["standing"]]

    response = writer.post(
        "/api/decisions",
        decision(fact_ids=[company], prompt_version=shown["prompt_version"], standing=standing),
        format="json",
    )
    too_many = writer.post(
        "/api/decisions",
        decision(external_id=f"{URL}/2", standing=[{"id": pref}] * 1 + [{"id": 10**9}]),
        format="json",
    )

    assert response.status_code == 201, response.content
    assert response.json()["fact_ids"] == [company]  # the block's, as before
    rows = dict(DecisionFact.objects.values_list("memory_id", "part"))
    assert rows == {company: "block", pref: "standing"}
    assert DecisionFact.objects.get(memory_id=pref).why == standing[0]["why"] != ""
    assert too_many.status_code == 404, too_many.content
    assert error_of(too_many)["message"] == "no fact with id 1000000000 (in standing)"
    settings.KARANI_MEMORY_HOLDOUT = 0.5
    held = next(f"{URL}?{n}" for n in range(1000) if holdout.arm_for(f"{URL}?{n}") == "holdout")
    refused = writer.post(
        "/api/decisions", decision(external_id=held, standing=[{"id": pref}]), format="json"
    )
    assert refused.status_code == 400 and "held out" in str(refused.json())


def test_fact_ids_and_facts_together_are_refused_and_nothing_is_written(writer, facts):
    # Two ways to name the facts: one list keeps the cap of 10 a schema can state (maxItems).
    response = writer.post(
        "/api/decisions",
        decision(fact_ids=facts[:1], facts=[{"id": facts[1], "why": "remote"}]),
        format="json",
    )

    error = error_of(response)
    assert response.status_code == 400 and error["code"] == "invalid", response.content
    assert (
        error["message"]
        == "send fact_ids or facts, not both (facts is fact_ids with each fact's why)"
    )
    assert list(error["fields"]) == ["facts"]
    assert (Posting.objects.count(), Qualification.objects.count(), verdict_facts()) == (0, 0, [])


def test_a_text_over_its_limit_as_sent_is_refused_though_normalising_shortens_it(writer):
    # The schema's maxLength counts the title as sent; CRLF collapsing to a space must not fit it.
    title = "S" * 150 + "\r\n" + "S" * 149  # 301 sent, 300 stored

    response = writer.post("/api/decisions", decision(title=title), format="json")

    assert response.status_code == 400, response.content
    assert error_of(response)["message"] == "title is 301 characters; the limit is 300"
    assert (Posting.objects.count(), Qualification.objects.count()) == (0, 0)
