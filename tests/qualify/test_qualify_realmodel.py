"""Optional: a real local model behind an OpenAI-compatible server (llama.cpp, Ollama...).

    KARANI_TEST_LLM_URL=http://127.0.0.1:8080/v1 [KARANI_TEST_LLM_MODEL=...] \\
        .venv/bin/pytest -m realmodel tests/qualify/test_qualify_realmodel.py

Skipped unless KARANI_TEST_LLM_URL is set; never part of CI.
"""

import os

import pytest
from qualify_fakes import make_posting, run_qualify

from qualify.models import Qualification

URL = os.environ.get("KARANI_TEST_LLM_URL", "").strip()

pytestmark = [
    pytest.mark.realmodel,
    pytest.mark.django_db,
    pytest.mark.skipif(
        not URL, reason="set KARANI_TEST_LLM_URL to a local OpenAI-compatible server"
    ),
]


def test_it_gets_schema_valid_verdicts_and_rejects_an_obvious_dealbreaker(settings, profile):
    settings.KARANI_LLM_BASE_URL = URL
    settings.KARANI_LLM_MODEL = os.environ.get("KARANI_TEST_LLM_MODEL", "local-model")
    settings.KARANI_LLM_TIMEOUT = 120.0
    good = make_posting(
        "Fabrikam",
        "Senior Platform Engineer (Python, Kubernetes)",
        "platform",
        remote="remote",
        location="Remote, Europe",
        salary="95-110k EUR",
        description="Fully remote platform team. No on-call; business hours support only.",
    )
    bad = make_posting(
        "Northwind Robotics",
        "Senior SRE",
        "sre",
        remote="onsite",
        location="Austin, Texas",
        description="Relocation to Austin required. 24/7 pager duty one week in two.",
        dealbreakers=["relocation to Austin required"],
    )

    summary = run_qualify()

    assert summary.errors == 0, list(Qualification.objects.values_list("error", flat=True))
    assert Qualification.objects.get(posting=bad).verdict == "rejected"
    assert Qualification.objects.get(posting=good).fit_score is not None
