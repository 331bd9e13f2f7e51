"""The funnel on a hand-built event history: exact counts and rates per prompt version,
memory-fact counts, and the chart written as PNG and SVG."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from qualify_fakes import make_posting

from qualify import funnel, funnel_chart, services
from qualify.models import Outcome, Qualification

pytestmark = pytest.mark.django_db


def _verdict(version: str, verdict: str | None, facts: int = 0) -> Qualification:
    posting = make_posting(title=f"{version} {verdict} {Qualification.all_objects.count()}")
    return Qualification.objects.create(
        posting=posting,
        verdict=verdict,
        fit_score=None if verdict is None else (80 if verdict == "qualified" else 30),
        error="" if verdict else "LLM endpoint timed out after 30s",
        prompt_version=version,
        fact_ids=list(range(1, facts + 1)),
        fact_count=facts,
    )


def _stages(q: Qualification, *stages: str) -> None:
    for stage in stages:
        services.record_outcome(posting_id=q.posting_id, stage=stage)


@pytest.fixture
def history(db):
    v1, v2 = "qualify-v1", "qualify-v2-memory"
    q1, q2, q3, _q4 = (_verdict(v1, "qualified") for _ in range(4))
    r1 = _verdict(v1, "rejected")
    _verdict(v1, "rejected")
    _verdict(v1, None)  # an error: not a decision
    _stages(q1, "applied", "screen")
    _stages(q2, "applied", "rejected")
    _stages(q3, "interview")  # recorded late: still counts as applied and screen
    _stages(r1, "applied")  # applied against a rejected verdict: not in the qualified funnel

    q5 = _verdict(v2, "qualified", facts=3)
    q6 = _verdict(v2, "qualified", facts=0)
    _verdict(v2, "rejected", facts=2)
    _stages(q5, "applied", "applied", "screen", "interview", "offer")  # duplicate counts once
    _stages(q6, "applied", "withdrawn", "screen")
    Outcome.objects.filter(qualification=q6, stage="screen").soft_delete()  # recorded by mistake
    gone = _verdict(v2, "qualified", facts=1)
    _stages(gone, "applied", "screen", "interview", "offer")
    gone.soft_delete()  # a deleted verdict and its outcomes drop out of the funnel
    return v1, v2


def test_it_counts_each_step_per_prompt_version(history):
    v1, v2 = history

    rows = {r.prompt_version: r for r in funnel.compute().versions}

    assert rows[v1].counts == {
        "qualified": 4,
        "applied": 3,
        "screen": 2,
        "interview": 1,
        "offer": 0,
    }
    assert (rows[v1].decisions, rows[v1].with_memory_facts, rows[v1].errors) == (6, 0, 1)
    assert rows[v1].rates == {"applied": 0.75, "screen": 0.6667, "interview": 0.5, "offer": 0.0}
    assert rows[v2].counts == {
        "qualified": 2,
        "applied": 2,
        "screen": 1,
        "interview": 1,
        "offer": 1,
    }
    assert (rows[v2].decisions, rows[v2].with_memory_facts, rows[v2].errors) == (3, 2, 0)
    assert rows[v2].rates == {"applied": 1.0, "screen": 0.5, "interview": 1.0, "offer": 1.0}


def test_it_reports_no_rate_after_an_empty_step(db):
    _verdict("qualify-v1", "rejected")

    (row,) = funnel.compute().versions

    assert row.counts["qualified"] == 0
    assert row.rates == {"applied": None, "screen": None, "interview": None, "offer": None}


def test_it_prints_the_same_numbers_as_json(history):
    out = StringIO()

    call_command("funnel", "--json", stdout=out)

    payload = json.loads(out.getvalue())
    assert payload["steps"] == ["qualified", "applied", "screen", "interview", "offer"]
    by_version = {v["prompt_version"]: v for v in payload["versions"]}
    assert by_version["qualify-v2-memory"]["counts"]["offer"] == 1
    assert by_version["qualify-v2-memory"]["with_memory_facts"] == 2
    assert by_version["qualify-v1"]["rates"]["screen"] == 0.6667


@pytest.mark.parametrize(("suffix", "magic"), [(".png", b"\x89PNG\r\n"), (".svg", b"<svg")])
def test_it_writes_the_chart(history, tmp_path, suffix, magic):
    path = tmp_path / f"funnel{suffix}"
    out = StringIO()

    call_command("funnel", "--chart", str(path), stdout=out)

    data = path.read_bytes()
    assert magic in data[:400]
    assert f"chart written to {path}" in out.getvalue()
    assert "qualify-v2-memory" in out.getvalue()  # the table


def test_it_svg_chart_names_each_prompt_version(history):
    svg = funnel_chart.render(funnel.compute(), fmt="svg").decode()

    # Text is drawn as paths by default; matplotlib keeps each label as a comment/id.
    assert "qualify-v1" in svg and "qualify-v2-memory" in svg


def test_it_refuses_a_chart_file_of_another_type(history, tmp_path):
    with pytest.raises(CommandError, match=r"--chart must end in \.png or \.svg"):
        call_command("funnel", "--chart", str(tmp_path / "f.pdf"), stdout=StringIO())
