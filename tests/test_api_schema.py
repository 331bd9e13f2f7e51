"""The OpenAPI schema is valid, warning-free, served with an offline docs UI, and true:
schemathesis drives every operation from it and finds no 5xx and no response that
contradicts it."""

import pytest
import schemathesis
from api_helpers import fuzzing, token_for
from django.contrib.staticfiles import finders
from django.core.handlers.wsgi import WSGIHandler
from django.core.management import call_command
from rest_framework.test import APIClient
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from memory import services
from memory.models import Memory


def test_it_generates_a_valid_schema_without_warnings(tmp_path):
    out = tmp_path / "schema.yml"
    # --fail-on-warn turns any drf-spectacular warning (e.g. a component name collision)
    # into an error, so this fails the moment a view's schema becomes ambiguous.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    text = out.read_text()
    for path in ("/api/memories/recall:", "/api/memories:", "/api/memories/{id}/correct:"):
        assert path in text


@pytest.mark.django_db
def test_it_serves_the_docs_ui_without_a_cdn():
    client = APIClient()
    assert client.get("/api/schema/").status_code == 200
    for url in ("/api/docs/", "/api/redoc/"):
        page = client.get(url)
        assert page.status_code == 200
        html = page.content.decode()
        assert "cdn.jsdelivr" not in html and "unpkg.com" not in html
        assert "/static/drf_spectacular_sidecar/" in html
    assert finders.find("drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")
    assert finders.find("drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js")


@pytest.fixture
def fuzz_ledger(through_wsgi) -> str:
    """A writer's token and a small ledger."""
    services.import_facts(
        records=[
            (n, {"text": f"Fact {n}: prefers remote work", "company": company})
            for n, company in enumerate(["Northwind", None, "Acme", None, "Initech"], 1)
        ]
    )
    return token_for("fuzzer", writer=True)


# Loaded at collection from the app itself (no server, no database needed for the schema).
# Not schemathesis.pytest.from_fixture: its lazy loader reads a private pytest attribute
# that pytest 9 removed.
schema = schemathesis.openapi.from_wsgi("/api/schema/", WSGIHandler())
# Examples and fuzzing only: the coverage phase draws its boundary cases at collection, in
# both passes (most of the suite's collection time); test_api_schema_agrees keeps them.
schema.config.phases.update(phases=["examples", "fuzzing"])


@schema.parametrize()
@fuzzing(40)
def test_it_honours_its_own_schema(case, fuzz_ledger):
    # What the API promises: never a 5xx, and every answer (status, content type, headers,
    # body) is one the schema documents. Not the acceptance/rejection checks: meaning-level
    # rules (no secrets, no control characters, a blank optional query parameter counts as
    # absent) are the service's and cannot be written as JSON Schema.
    fact_id = (case.path_parameters or {}).get("id")
    if isinstance(fact_id, int) and fact_id > 0:
        # Random ids almost never exist; steer valid ones onto the ledger's facts so detail,
        # correct and delete are exercised on real rows (and on rows they already deleted).
        ids = sorted(Memory.all_objects.values_list("pk", flat=True))
        case.path_parameters["id"] = ids[fact_id % len(ids)]
    case.call_and_validate(
        headers={"Authorization": f"Token {fuzz_ledger}"},
        checks=[
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_headers_conformance,
            response_schema_conformance,
        ],
    )
