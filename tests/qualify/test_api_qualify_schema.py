"""schemathesis over qualify's endpoints alone, harder than the whole-API pass: more examples,
and generated external ids steered onto a recorded posting half the time, so outcomes and
repeated decisions run on real rows. No 5xx; every answer matches the schema."""

import pytest
import schemathesis
from api_helpers import fuzzing, token_for
from django.core.handlers.wsgi import WSGIHandler
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from memory import services
from qualify import decisions

KNOWN = "https://jobs.example.com/fuzz/known"


@pytest.fixture
def pipeline_ledger(through_wsgi, settings) -> str:
    settings.KARANI_MEMORY = "basic"
    for n, company in enumerate(["Northwind", None, "Acme"], 1):
        services.remember(text=f"Fact {n}: prefers remote SRE work", company=company)
    decisions.record_decision(
        external_id=KNOWN,
        company="Northwind",
        title="SRE",
        verdict="qualified",
        fit_score=70,
        prompt_version="fuzz-v1",
    )
    return token_for("qualify-fuzzer", writer=True)


schema = schemathesis.openapi.from_wsgi("/api/schema/", WSGIHandler()).include(
    path_regex=r"^/api/(context|decisions|outcomes|funnel)$"
)
# Examples and fuzzing only: the coverage phase draws its boundary cases at collection, in
# both passes; tests/test_api_schema_agrees.py keeps them for every operation.
schema.config.phases.update(phases=["examples", "fuzzing"])


@schema.parametrize()
@fuzzing(80)
def test_qualify_endpoints_honour_their_schema(case, pipeline_ledger):
    body = case.body if isinstance(case.body, dict) else None
    if body is not None and isinstance(body.get("external_id"), str) and len(body) % 2:
        body["external_id"] = KNOWN
    case.call_and_validate(
        headers={"Authorization": f"Token {pipeline_ledger}"},
        checks=[
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_schema_conformance,
        ],
    )
