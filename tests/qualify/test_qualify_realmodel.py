"""Qualify on a real small model (marker ``realmodel``): schema-valid verdicts on 20 postings,
and verdict facts that carry no model prose into memory.

    scripts/local-llm start
    .venv/bin/python -m pytest -m realmodel tests/qualify/test_qualify_realmodel.py

Any OpenAI-compatible server works too: KARANI_TEST_LLM_URL=http://127.0.0.1:8080/v1
[KARANI_TEST_LLM_MODEL=...]. Skipped unless a model answers (tests/realmodel_support.py).
"""

import io
import json
import re

import pytest
from django.core.management import call_command
from qualify_fakes import make_posting, run_qualify
from realmodel_support import real_llm  # noqa: F401  (fixture)

from memory.models import Memory, Source
from qualify.llm import ChatClient
from qualify.models import Posting, Profile, Qualification

pytestmark = [pytest.mark.realmodel, pytest.mark.django_db]

# The composer's own words around the structured fields (qualify/verdict_fact.py).
TEMPLATE_WORDS = {"qualified", "rejected", "at", "fit", "failed", "dealbreakers", "hit", "more"}
CRITERIA = {"remote_ok", "salary_ok", "on_call_ok"}

# (company, title, category, remote, location, salary, description, posting dealbreakers)
POSTINGS = [
    ("Fabrikam", "Senior Platform Engineer", "platform", "remote", "Remote, Europe",
     "95-110k EUR", "Fully remote platform team on Python and Kubernetes. No on-call.", []),
    ("Fabrikam", "Staff Data Engineer", "data", "remote", "Remote, EU time zones",
     "120k EUR", "Own the Airflow and Postgres pipelines. Four-day week available.", []),
    ("Contoso", "Backend Engineer (Django)", "backend", "hybrid", "Lisbon",
     "70k EUR", "Two office days a week in Lisbon. Django and Celery.", []),
    ("Contoso", "Platform Engineer", "platform", "remote", "Remote, Europe",
     "100k EUR", "Terraform, Kubernetes and Python. Business-hours support rota.", []),
    ("Globex", "Site Reliability Engineer", "sre", "onsite", "Austin, Texas",
     "150k USD", "Relocation to Austin required. 24/7 pager duty one week in two.",
     ["relocation to Austin required"]),
    ("Globex", "Senior Python Developer", "backend", "remote", "Remote, worldwide",
     "", "Python services for billing. Salary not disclosed.", []),
    ("Initech", "DevOps Engineer", "devops", "onsite", "Dallas, Texas",
     "85k USD", "On-site only. Weekend on-call rotation.", ["on-site only"]),
    ("Initech", "Platform Engineer", "platform", "remote", "Remote, Europe",
     "92k EUR", "Remote-first team, light on-call once a month, Python and Go.", []),
    ("Northwind Robotics", "Senior SRE", "sre", "onsite", "Austin, Texas",
     "", "Relocation to Austin required. 24/7 pager duty one week in two.",
     ["relocation to Austin required"]),
    ("Northwind Robotics", "Embedded Engineer", "embedded", "onsite", "Munich",
     "80k EUR", "Embedded C on robot controllers. Munich office five days a week.", []),
    ("Umbrella Labs", "Senior Backend Engineer", "backend", "remote", "Remote, Europe",
     "110k EUR", "Python and Postgres, async-first team across time zones.", []),
    ("Umbrella Labs", "Infrastructure Engineer", "platform", "hybrid", "Berlin",
     "95k EUR", "Kubernetes on bare metal. Three office days in Berlin.", []),
    ("Wingtip", "Cloud Engineer", "platform", "remote", "Remote, EU",
     "105k EUR", "AWS and Terraform. Visa sponsorship offered.", []),
    ("Wingtip", "Java Platform Engineer", "platform", "remote", "Remote, EU",
     "100k EUR", "JVM services in Java and Kotlin on Kubernetes.", []),
    ("Litware", "Site Reliability Engineer", "sre", "remote", "Remote, Europe",
     "98k EUR", "24/7 pager duty shared by four engineers.", []),
    ("Litware", "Python Engineer", "backend", "remote", "Remote, Europe",
     "60k EUR", "Python APIs for a retail client. Junior-friendly team.", []),
    ("Adventure Works", "Platform Engineer", "platform", "remote", "Remote, Europe",
     "115k EUR", "Kubernetes, Terraform and AWS; no on-call.", []),
    ("Adventure Works", "Data Platform Engineer", "data", "hybrid", "Amsterdam",
     "100k EUR", "Spark and Python. One office day a week in Amsterdam.", []),
    ("Tailspin Toys", "Senior DevOps Engineer", "devops", "onsite", "Seattle",
     "160k USD", "Relocation to Seattle required; on-site five days.",
     ["relocation to Seattle required"]),
    ("Tailspin Toys", "Platform Engineer", "platform", "remote", "Remote, Europe",
     "97k EUR", "Python and Kubernetes, light on-call during business hours.", []),
]  # fmt: skip


@pytest.fixture
def real_settings(settings, real_llm):  # noqa: F811
    url, model = real_llm
    settings.KARANI_LLM_BASE_URL = url
    settings.KARANI_LLM_MODEL = model
    settings.KARANI_LLM_TIMEOUT = 120.0
    settings.KARANI_MEMORY = "basic"
    return settings


def _words(text: str) -> list[str]:
    return re.findall(r"[\w'=+-]+", text.casefold())


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def unsourced_words(fact: str, posting: Posting, profile: Profile) -> list[str]:
    """Words of a verdict fact that neither the structured decision, the posting nor the
    profile supplies. Quoted passages must be the posting's or the profile's words."""
    sources = [
        posting.title,
        posting.company.name,
        posting.location,
        posting.salary,
        posting.description,
        posting.remote,
        *posting.dealbreakers,
        profile.summary,
        profile.preferences,
        *profile.dealbreakers,
    ]
    corpus = _norm(" ".join(sources))
    stray = []
    for quote in re.findall(r'"([^"]*)"', fact):
        if _norm(quote) not in corpus:
            stray.append(f'"{quote}"')
    allowed = set(_words(corpus)) | TEMPLATE_WORDS | {f"{c}=no" for c in CRITERIA}
    for word in _words(re.sub(r'"[^"]*"', " ", fact)):
        if word not in allowed and not word.isdigit():
            stray.append(word)
    return stray


def test_it_gets_schema_valid_verdicts_and_rejects_an_obvious_dealbreaker(real_settings, profile):
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


def test_karani_qualify_judges_twenty_postings_with_no_schema_failure(
    real_settings, profile, monkeypatch
):
    requests = []
    complete = ChatClient.complete
    monkeypatch.setattr(
        ChatClient, "complete", lambda self, *a, **k: requests.append(1) or complete(self, *a, **k)
    )
    for company, title, category, remote, location, salary, description, stated in POSTINGS:
        make_posting(
            company,
            title,
            category,
            remote=remote,
            location=location,
            salary=salary,
            description=description,
            dealbreakers=stated,
        )
    out = io.StringIO()

    call_command("qualify", "--json", stdout=out, stderr=io.StringIO())

    summary = json.loads(out.getvalue())
    errors = list(Qualification.objects.exclude(error="").values_list("error", flat=True))
    assert (summary["total"], summary["errors"]) == (20, 0), errors
    assert summary["qualified"] + summary["rejected"] == 20
    assert summary["facts_not_written"] == 0
    # One request per posting, plus one per schema retry (shown with -s).
    print(f"\nqualify, real model: 20 postings, {len(requests)} requests, 0 errors")
    assert len(requests) >= 20

    # Every verdict fact is the decision's structured fields in the posting's or profile's
    # words: the model's free-text reason stays on the qualification, for audit.
    facts = {
        int(m.ref.split(":")[1]): m.text
        for m in Memory.objects.filter(source=Source.VERDICT, ref__startswith="qualification:")
    }
    assert len(facts) == 20
    for q in Qualification.objects.select_related("posting__company"):
        fact = facts[q.pk]
        assert unsourced_words(fact, q.posting, profile) == [], (fact, q.reasons)
        if len(_words(q.reasons)) >= 4:
            assert _norm(q.reasons) not in _norm(fact), fact
