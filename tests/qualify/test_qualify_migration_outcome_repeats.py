"""Migration 0004 on a ledger that already recorded the same stage twice: the repeats are
soft-deleted (the first kept) before the one-live-outcome-per-stage-and-note constraint, so the
migration never fails on existing rows, and the funnel's counts do not change."""

import pytest

BEFORE = [("qualify", "0003_posting_external_id_fact_why")]
AFTER = [("qualify", "0004_outcome_one_live_per_stage_note")]


@pytest.mark.django_db(transaction=True)
def test_it_keeps_the_first_of_each_repeated_outcome(migrator):
    companies, postings, outcomes = migrator.managers(
        BEFORE, "qualify.Company", "qualify.Posting", "qualify.Outcome"
    )
    company = companies.create(name="Acme", name_key="acme")
    posting = postings.create(company=company, title="SRE", url="https://x/1")
    made = [
        outcomes.create(posting=posting, stage=stage, note=note)
        for stage, note in [
            ("applied", ""),
            ("applied", ""),
            ("interview", "panel"),
            ("interview", "round 2"),
            ("interview", "panel"),
        ]
    ]

    (outcomes,) = migrator.managers(AFTER, "qualify.Outcome")

    live = outcomes.filter(deleted_at__isnull=True)
    assert sorted(live.values_list("pk", flat=True)) == [made[0].pk, made[2].pk, made[3].pk]
    assert outcomes.count() == 5  # soft-deleted, never removed
