"""Migration 0002 on a ledger that already has decisions: each recorded ``fact_ids`` becomes
decision-fact rows, older rows are "not randomised", and company keys become NFC."""

import pytest

BEFORE = [("qualify", "0001_initial")]
AFTER = [("qualify", "0002_holdout_attribution_replay")]


@pytest.mark.django_db(transaction=True)
def test_it_backfills_decision_facts_from_recorded_fact_ids(migrator):
    old = migrator.to(BEFORE)
    Company = old.get_model("qualify", "Company")
    Posting = old.get_model("qualify", "Posting")
    Qualification = old.get_model("qualify", "Qualification")
    # "Zürich" spelled with a combining diaeresis: the old key was not NFC.
    decomposed = "Zu\u0308rich Labs"
    company = Company._default_manager.create(name=decomposed, name_key=decomposed.casefold())
    rows = []
    for i, fact_ids in enumerate([[7, 9, 7], [], [9], [3, True, "x"]]):
        posting = Posting._default_manager.create(
            company=company, title=f"Role {i}", url=f"https://x/{i}"
        )
        rows.append(
            Qualification._default_manager.create(
                posting=posting,
                verdict="qualified",
                fit_score=80,
                prompt_version="qualify-v2-memory",
                fact_ids=fact_ids,
                fact_count=len(fact_ids),
            )
        )

    new = migrator.to(AFTER)
    DecisionFact = new.get_model("qualify", "DecisionFact")
    NewQualification = new.get_model("qualify", "Qualification")
    NewCompany = new.get_model("qualify", "Company")

    pairs = sorted(DecisionFact._default_manager.values_list("qualification_id", "memory_id"))
    assert pairs == [(rows[0].pk, 7), (rows[0].pk, 9), (rows[2].pk, 9), (rows[3].pk, 3)]
    assert set(NewQualification._default_manager.values_list("arm", flat=True)) == {"none"}
    assert NewCompany._default_manager.get().name_key == "z\u00fcrich labs"
