"""Migration 0002 on a ledger that already has decisions: each recorded ``fact_ids`` becomes
decision-fact rows, older rows are "not randomised", and company keys become NFC."""

import pytest

BEFORE = [("qualify", "0001_initial")]
AFTER = [("qualify", "0002_holdout_attribution_replay")]


@pytest.mark.django_db(transaction=True)
def test_it_backfills_decision_facts_from_recorded_fact_ids(migrator):
    companies, postings, qualifications = migrator.managers(
        BEFORE, "qualify.Company", "qualify.Posting", "qualify.Qualification"
    )
    # "Zürich" spelled with a combining diaeresis: the old key was not NFC.
    decomposed = "Zu\u0308rich Labs"
    company = companies.create(name=decomposed, name_key=decomposed.casefold())
    rows = []
    for i, fact_ids in enumerate([[7, 9, 7], [], [9], [3, True, "x"]]):
        posting = postings.create(company=company, title=f"Role {i}", url=f"https://x/{i}")
        rows.append(
            qualifications.create(
                posting=posting,
                verdict="qualified",
                fit_score=80,
                prompt_version="qualify-v2-memory",
                fact_ids=fact_ids,
                fact_count=len(fact_ids),
            )
        )

    decision_facts, qualifications, companies = migrator.managers(
        AFTER, "qualify.DecisionFact", "qualify.Qualification", "qualify.Company"
    )

    pairs = sorted(decision_facts.values_list("qualification_id", "memory_id"))
    assert pairs == [(rows[0].pk, 7), (rows[0].pk, 9), (rows[2].pk, 9), (rows[3].pk, 3)]
    assert set(qualifications.values_list("arm", flat=True)) == {"none"}
    assert companies.get().name_key == "z\u00fcrich labs"
