"""Migration 0004 on a ledger that already recorded the same stage twice: the repeats are
soft-deleted (the first kept) before the one-live-outcome-per-stage-and-note constraint, so the
migration never fails on existing rows, and the funnel's counts do not change."""

import pytest

BEFORE = [("qualify", "0003_posting_external_id_fact_why")]
AFTER = [("qualify", "0004_outcome_one_live_per_stage_note")]


@pytest.mark.django_db(transaction=True)
def test_it_keeps_the_first_of_each_repeated_outcome(migrator):
    old = migrator.to(BEFORE)
    Company = old.get_model("qualify", "Company")
    Posting = old.get_model("qualify", "Posting")
    Outcome = old.get_model("qualify", "Outcome")
    company = Company._default_manager.create(name="Acme", name_key="acme")
    posting = Posting._default_manager.create(company=company, title="SRE", url="https://x/1")
    made = [
        Outcome._default_manager.create(posting=posting, stage=stage, note=note)
        for stage, note in [
            ("applied", ""),
            ("applied", ""),
            ("interview", "panel"),
            ("interview", "round 2"),
            ("interview", "panel"),
        ]
    ]

    NewOutcome = migrator.to(AFTER).get_model("qualify", "Outcome")

    live = NewOutcome._default_manager.filter(deleted_at__isnull=True)
    assert sorted(live.values_list("pk", flat=True)) == [made[0].pk, made[2].pk, made[3].pk]
    assert NewOutcome._default_manager.count() == 5  # soft-deleted, never removed
