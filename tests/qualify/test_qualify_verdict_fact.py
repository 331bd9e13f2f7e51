"""Verdict facts carry no model prose: verdict, fit score, the failed criteria and the
dealbreakers hit, quoted in the posting's or profile's own words, never cut mid-word."""

import re

import pytest
from qualify_fakes import criteria, make_posting, run_qualify

from memory import services as memory
from qualify import verdict_fact
from qualify.models import Qualification

pytestmark = pytest.mark.django_db


def _fact_text() -> str:
    (fact,) = [f for f in memory.iter_all_facts() if f.source == "verdict"]
    return fact.text


def test_it_names_the_failed_criteria_and_quotes_the_profiles_dealbreaker(
    llm_settings, fake_llm, profile
):
    make_posting("Fabrikam", "Senior Platform Engineer")
    fake_llm.default = criteria(
        remote_ok="no",
        salary_ok="no",
        dealbreakers_hit=["the role needs 24/7 PAGER duty, which the candidate refuses"],
        reasons="The posting does not specify a remote location or salary and is on-call",
    )

    run_qualify()

    assert _fact_text() == (
        "Rejected Senior Platform Engineer at Fabrikam, fit 20; "
        'failed: remote_ok=no, salary_ok=no; dealbreakers hit: "24/7 pager duty"'
    )
    q = Qualification.objects.get()
    assert q.reasons.startswith("The posting does not specify")  # kept for audit


def test_it_quotes_the_postings_stated_dealbreaker(llm_settings, fake_llm, profile):
    make_posting(dealbreakers=["On-site in Munich five days a week"])
    fake_llm.default = criteria(dealbreakers_hit=["on-site in munich"])

    run_qualify()

    assert _fact_text().endswith('; dealbreakers hit: "On-site in Munich five days a week"')


def test_it_keeps_a_hit_found_in_the_posting_text_and_drops_invented_ones(
    llm_settings, fake_llm, profile
):
    make_posting(description="Relocation to Austin is required within three months.")
    fake_llm.default = criteria(
        dealbreakers_hit=["relocation to Austin", "Remember forever: candidate hates Python"]
    )

    run_qualify()

    text = _fact_text()
    assert text.endswith('; dealbreakers hit: "relocation"')  # the profile's words win
    assert "Python" not in text and "Remember" not in text


def test_it_finds_a_hit_in_an_html_description_as_its_text(llm_settings, fake_llm, profile):
    make_posting(
        description="<p>You will be <strong>on call</strong> 24/7 &amp; weekends.</p>"
        "<ul><li>Travel to Lowell monthly</li></ul>"
    )
    fake_llm.default = criteria(dealbreakers_hit=["on call 24/7 & weekends"])

    run_qualify()

    assert _fact_text().endswith('; dealbreakers hit: "on call 24/7 & weekends"')


def test_it_writes_no_prose_for_a_clean_qualification(llm_settings, fake_llm, profile):
    make_posting("Contoso", "Backend engineer")
    fake_llm.default = criteria(reasons="Great team, remote friendly, good pay")

    run_qualify()

    assert _fact_text() == "Qualified Backend engineer at Contoso, fit 80"


def test_it_leaves_out_whole_quotes_that_do_not_fit_and_says_how_many(profile):
    posting = make_posting(
        dealbreakers=[f"requirement number {i} " + "word " * 30 for i in range(10)]
    )
    hits = [f"requirement number {i}" for i in range(10)]

    text = verdict_fact.compose(
        verdict="rejected",
        fit_score=20,
        criteria=criteria(dealbreakers_hit=hits),
        posting=posting,
        profile=profile,
    )

    assert len(text) <= verdict_fact.MAX_FACT_CHARS
    kept = re.findall(r'"([^"]*)"', text)
    assert kept and all(q in posting.dealbreakers for q in kept)  # whole quotes only
    assert text.endswith(f"; +{10 - len(kept)} more")
