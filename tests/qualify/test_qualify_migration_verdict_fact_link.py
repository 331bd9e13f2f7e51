"""Migration 0005 on a ledger with verdicts recorded before it: each live verdict is linked to
the live verdict fact whose ref names it; a replaced verdict, and a twin whose fact memory
deduplicated into another's, stay unlinked (a repeat links the twin later)."""

import pytest

from memory import services as memory

BEFORE = [("qualify", "0004_outcome_one_live_per_stage_note")]
AFTER = [("qualify", "0005_verdict_fact_id")]


def _verdict_fact(text: str, ref: str) -> int:
    return memory.remember(
        text=text, kind="preference", company="Acme", source="verdict", fit_score=40, ref=ref
    ).id


@pytest.mark.django_db(transaction=True)
def test_it_links_each_live_verdict_to_the_fact_its_ref_names(migrator):
    companies, postings, qualifications = migrator.managers(
        BEFORE, "qualify.Company", "qualify.Posting", "qualify.Qualification"
    )
    company = companies.create(name="Acme", name_key="acme")

    def verdict(title: str, **extra):
        posting = postings.create(company=company, title=title)
        return qualifications.create(
            posting=posting, verdict="rejected", fit_score=40, prompt_version="v1", **extra
        )

    linked, twin, replaced = (
        verdict("SRE"),
        verdict("SRE"),
        verdict("DBA", deleted_at="2026-01-01T00:00Z"),
    )
    fact = _verdict_fact("Rejected SRE at Acme, fit 40", f"qualification:{linked.pk}")
    assert _verdict_fact("Rejected SRE at Acme, fit 40", f"qualification:{twin.pk}") == fact
    _verdict_fact("Rejected DBA at Acme, fit 40", f"qualification:{replaced.pk}")

    (qualifications,) = migrator.managers(AFTER, "qualify.Qualification")

    links = dict(qualifications.values_list("pk", "verdict_fact_id"))
    assert links == {linked.pk: fact, twin.pk: None, replaced.pk: None}
