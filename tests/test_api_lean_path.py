"""The API's shortcuts around DRF and Django answer exactly what the stock pieces answer.

memory/api/negotiation.py, memory/api/serializers.FlatInputSerializer and
karani_site/middleware.SiteMessageMiddleware exist only to save CPU per request; each is
checked here against the stock behaviour it replaces.
"""

import copy

import pytest
from api_helpers import client_with, error_of, terminate_backend, token_for, wsgi_get
from django.contrib.auth import get_user_model
from django.core.signals import request_started
from django.db import close_old_connections, connection
from rest_framework import exceptions, serializers
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from memory import services
from memory.api.negotiation import ContentNegotiation
from memory.api.views import MemoryListApi, RecallApi

pytestmark = pytest.mark.django_db

ACCEPTS = [
    None,
    "*/*",
    "application/json",
    "",
    "text/html",
    "application/json; indent=4",
    "application/*",
    "text/html, application/json;q=0.9",
    "*/* ",
]


def _negotiate(negotiator, accept: str | None, query: str = "") -> tuple:
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    request = Request(APIRequestFactory().get(f"/api/memories/recall{query}", **headers))
    try:
        renderer, media_type = negotiator.select_renderer(request, [JSONRenderer()])
    except exceptions.NotAcceptable:
        return ("406",)
    return (type(renderer), media_type)


@pytest.mark.parametrize("accept", ACCEPTS)
@pytest.mark.parametrize("query", ["", "?format=json", "?q=x"])
def test_negotiation_picks_what_drf_picks(accept, query):
    assert _negotiate(ContentNegotiation(), accept, query) == _negotiate(
        DefaultContentNegotiation(), accept, query
    )


def test_an_unacceptable_accept_header_is_still_a_406_in_the_error_shape():
    client = client_with(token_for("reader"))
    services.remember(text="Prefers async remote teams")
    assert client.get("/api/memories/recall?q=remote").status_code == 200
    refused = client.get("/api/memories/recall?q=remote", HTTP_ACCEPT="text/html")
    assert refused.status_code == 406
    assert error_of(refused)["code"] == "not_acceptable"


def _plain_twin(flat: type[serializers.Serializer]) -> type[serializers.Serializer]:
    """The same declared fields on DRF's own Serializer (fields built per instance)."""
    return type("Plain", (serializers.Serializer,), copy.deepcopy(flat._declared_fields))


@pytest.mark.parametrize(
    ("flat", "inputs"),
    [
        (
            RecallApi.InputSerializer,
            [
                {"q": "remote"},
                {},
                {"q": "   "},
                {"q": "remote", "limit": "0"},
                {"q": "remote", "limit": "ten", "company": "Acme"},
                {"q": "x" * 20_000},
                {"q": "remote", "company": "", "limit": "7"},
            ],
        ),
        (
            MemoryListApi.FilterSerializer,
            [{}, {"kind": "nope"}, {"status": "deleted", "limit": "3"}, {"limit": "999"}],
        ),
    ],
)
def test_shared_input_fields_validate_like_drfs_own(flat, inputs):
    plain = _plain_twin(flat)
    # Interleaved instances: one shared set of fields must not carry one input into another.
    ours = [flat(data=data) for data in inputs]
    for serializer, data in zip(ours, inputs, strict=True):
        twin = plain(data=data)
        assert serializer.is_valid() is twin.is_valid(), data
        if twin.errors:
            assert serializer.errors == twin.errors, data
        else:
            assert serializer.validated_data == twin.validated_data, data
    assert ours[0].fields is ours[-1].fields  # built once for the class, not per request


def test_api_requests_skip_flash_messages_and_admin_pages_keep_them():
    client = client_with(token_for("reader"))
    api = client.get("/api/memories/recall?q=remote")
    assert api.status_code == 200
    assert not hasattr(api.wsgi_request, "_messages")

    get_user_model().objects.create_superuser("root", password="s3cret-pass-word")
    client.login(username="root", password="s3cret-pass-word")
    page = client.get("/admin/")
    assert page.status_code == 200
    assert hasattr(page.wsgi_request, "_messages")


@pytest.fixture
def killed_connection() -> tuple[str, int]:
    """(token, backend pid): one API request kept its connection, then the server ended
    that session between requests (a database restart)."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite opens a new connection for every request")
    token = token_for("reader")
    services.remember(text="Prefers async remote teams")
    assert wsgi_get("/api/memories/recall?q=remote", token) == 200
    assert connection.connection is not None, "the connection should be kept (CONN_MAX_AGE)"
    old = connection.connection.info.backend_pid
    terminate_backend(old)
    return token, old


@pytest.mark.django_db(transaction=True)
def test_a_connection_killed_between_requests_is_replaced_not_answered_503(killed_connection):
    # The token query stands in for Django's SELECT 1 health check (authentication.py):
    # a kept connection that died (a database restart) must still be replaced.
    token, old = killed_connection
    assert wsgi_get("/api/memories/recall?q=remote", token) == 200
    assert connection.connection.info.backend_pid != old


@pytest.mark.django_db(transaction=True)
def test_a_connection_that_dies_after_its_check_is_a_503_then_replaced(killed_connection):
    # Recall reads the term bitmaps on a plain psycopg cursor (memory/bitmaps.py); a driver
    # error there must reach the API as Django's DatabaseError (503), not escape as a 500,
    # and the broken connection must not be kept for the next request.
    token, old = killed_connection
    # As if it died just after this request's health check had passed: the check is
    # marked done, and the request_started handler that would reset the mark is held back.
    connection.health_check_done = True
    request_started.disconnect(close_old_connections)
    try:
        assert wsgi_get("/api/memories/recall?q=remote", token) == 503
    finally:
        request_started.connect(close_old_connections)
    assert wsgi_get("/api/memories/recall?q=remote", token) == 200
    assert connection.connection.info.backend_pid != old
