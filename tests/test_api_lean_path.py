"""The API's shortcuts around DRF and Django answer exactly what the stock pieces answer.

memory/api/negotiation.py, memory/api/serializers.FlatInputSerializer and
karani_site/middleware.SiteMessageMiddleware exist only to save CPU per request; each is
checked here against the stock behaviour it replaces.
"""

import copy

import pytest
from api_helpers import client_with, error_of, token_for
from django.contrib.auth import get_user_model
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
