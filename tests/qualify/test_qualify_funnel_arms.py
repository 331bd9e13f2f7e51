"""The holdout comparison in the funnel: per arm counts, each rate with its Wilson interval,
each step's difference with Newcombe's interval, and "not enough data yet" below the
minimum sample, in the JSON, the table, the chart and the admin page."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse
from qualify_fakes import make_posting

from qualify import funnel, funnel_chart, services, stats
from qualify.models import Qualification

pytestmark = pytest.mark.django_db

V1, V2 = "qualify-v1", "qualify-v2-memory"


def _decide(arm: str, version: str, verdict: str, *stages: str) -> Qualification:
    posting = make_posting(title=f"{arm} {Qualification.all_objects.count()}")
    q = Qualification.objects.create(
        posting=posting,
        verdict=verdict,
        fit_score=80 if verdict == "qualified" else 30,
        prompt_version=version,
        arm=arm,
    )
    for stage in stages:
        services.record_outcome(posting_id=posting.pk, stage=stage)
    return q


@pytest.fixture
def randomised(db):
    # Memory arm: 40 decisions, 30 qualified, 12 applied, 6 screened.
    for i in range(40):
        verdict = "qualified" if i < 30 else "rejected"
        stages = ("applied", "screen") if i < 6 else ("applied",) if i < 12 else ()
        _decide("memory", V2, verdict, *stages)
    # Holdout arm: 35 decisions, 10 qualified, 5 applied, 1 screened.
    for i in range(35):
        verdict = "qualified" if i < 10 else "rejected"
        stages = ("applied", "screen") if i < 1 else ("applied",) if i < 5 else ()
        _decide("holdout", V1, verdict, *stages)
    # Not randomised (before the holdout, or memory off): in the versions, not the arms.
    for _ in range(5):
        _decide("none", V1, "qualified", "applied")


def test_it_counts_each_arm_apart_from_unrandomised_decisions(randomised):
    arms = funnel.compute().arms

    assert (arms.memory.decisions, arms.holdout.decisions) == (40, 35)
    assert arms.memory.counts == {
        "qualified": 30,
        "applied": 12,
        "screen": 6,
        "interview": 0,
        "offer": 0,
    }
    assert arms.holdout.counts["qualified"] == 10 and arms.holdout.counts["applied"] == 5
    versions = {v.prompt_version: v for v in funnel.compute().versions}
    assert versions[V1].decisions == 40  # 35 held out + 5 not randomised


def test_it_gives_each_rate_its_wilson_interval_and_each_step_its_difference(randomised):
    steps = {s.step: s for s in funnel.compute().arms.steps}

    qualified = steps["qualified"]
    assert qualified.memory == stats.wilson(30, 40)
    assert qualified.holdout == stats.wilson(10, 35)
    assert qualified.difference == stats.newcombe(30, 40, 10, 35)
    assert qualified.difference.low > 0
    assert qualified.conclusion == "higher with memory"


def test_it_draws_no_conclusion_below_the_minimum_sample(randomised):
    steps = {s.step: s for s in funnel.compute().arms.steps}

    # applied over qualified: 30 and 10; the holdout's 10 is below the minimum of 30.
    assert (steps["applied"].memory_n, steps["applied"].holdout_n) == (30, 10)
    assert steps["applied"].conclusion == "not enough data yet (need 30 per arm; have 30 and 10)"
    assert steps["offer"].difference is None  # nothing reached interview in either arm
    assert steps["offer"].conclusion.startswith("not enough data yet")


def test_it_says_not_enough_data_when_an_arm_is_small(db):
    for _ in range(5):
        _decide("memory", V2, "qualified")
    _decide("holdout", V1, "rejected")

    arms = funnel.compute().arms

    assert arms.status == "not enough data yet"
    assert all(s.conclusion.startswith("not enough data yet") for s in arms.steps)


def test_it_reports_the_comparison_off_without_randomised_decisions(db):
    _decide("none", V2, "qualified")

    payload = funnel.to_dict(funnel.compute())

    assert payload["arms"]["status"] == "off"
    assert payload["arms"]["period"] == {"from": None, "to": None}


def test_it_prints_the_arms_as_json(randomised):
    out = StringIO()

    call_command("funnel", "--json", stdout=out)

    arms = json.loads(out.getvalue())["arms"]
    assert arms["status"] == "ok" and arms["min_sample_per_arm"] == 30
    assert arms["memory"]["decisions"] == 40 and arms["holdout"]["decisions"] == 35
    qualified = arms["steps"][0]
    assert qualified["step"] == "qualified" and qualified["over"] == "decisions"
    assert qualified["memory"] == {"n": 40, **stats.wilson(30, 40).to_dict()}
    assert qualified["difference"] == stats.newcombe(30, 40, 10, 35).to_dict()
    assert arms["period"]["from"] <= arms["period"]["to"]


def test_it_prints_the_arms_table_with_intervals(randomised):
    out = StringIO()

    call_command("funnel", stdout=out)

    text = out.getvalue()
    assert "memory arm vs holdout arm" in text
    assert "75% [60%, 86%] n=40" in text  # 30/40 with its Wilson interval
    assert "higher with memory" in text and "not enough data yet" in text


def test_it_draws_both_arms_on_the_chart(randomised):
    svg = funnel_chart.render(funnel.compute(), fmt="svg").decode()

    assert "memory arm (40 decisions)" in svg and "holdout arm (35 decisions)" in svg


def test_it_shows_the_arms_on_the_admin_funnel_page(admin_client, randomised):
    page = admin_client.get(reverse("admin:qualify_funnelreport_changelist")).content.decode()

    assert '<table id="arms-table">' in page
    assert "40 with memory, 35 held out" in page
    assert "higher with memory" in page
    assert "not enough data yet" in page
