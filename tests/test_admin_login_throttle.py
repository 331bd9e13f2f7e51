"""Issue 14: failed admin logins are throttled per address, in the shared database cache."""

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache, caches
from django.core.cache.backends.db import DatabaseCache

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/"
PASSWORD = "curator-pass-2026"


@pytest.fixture
def curator(settings):
    settings.KARANI_ADMIN_LOGIN_ATTEMPTS = 3
    settings.KARANI_ADMIN_LOGIN_WINDOW = 600
    cache.clear()
    get_user_model().objects.create_superuser("curator", "c@example.org", PASSWORD)
    yield "curator"
    cache.clear()


def _post(client, password: str, address: str = "198.51.100.7"):
    return client.post(LOGIN, {"username": "curator", "password": password}, REMOTE_ADDR=address)


def test_it_blocks_an_address_after_the_allowed_failures_even_with_the_right_password(
    client, curator
):
    for _ in range(3):
        assert _post(client, "wrong").status_code == 200  # the form again, with its error
    blocked = _post(client, PASSWORD)
    assert blocked.status_code == 429
    # The window started at the first failure; each refused login hashes a password first.
    assert 590 <= int(blocked["Retry-After"]) <= 600
    assert blocked.content.decode() == (
        "Too many failed login attempts from this address; try again in 10 minutes."
    )
    assert "_auth_user_id" not in client.session


def test_it_counts_per_address_in_the_shared_cache(client, curator):
    for _ in range(3):
        _post(client, "wrong")
    other = _post(client, PASSWORD, address="203.0.113.9")
    assert other.status_code == 302  # logged in from another address
    # The count lives in the database cache table, which every worker reads.
    assert isinstance(caches["default"], DatabaseCache)
    assert cache.get("karani:admin-login-failures:198.51.100.7") == 3


def test_a_good_login_below_the_limit_goes_through(client, curator):
    _post(client, "wrong")
    assert _post(client, PASSWORD).status_code == 302


def test_the_login_page_itself_is_never_blocked(client, curator):
    for _ in range(5):
        _post(client, "wrong")
    assert client.get(LOGIN, REMOTE_ADDR="198.51.100.7").status_code == 200


def test_the_block_lifts_when_the_window_is_over_and_says_how_long_is_left(client, curator, clock):
    for _ in range(3):
        _post(client, "wrong")
    clock.advance(420)  # seven of the ten minutes

    still = _post(client, PASSWORD)
    clock.advance(180)  # the window is over
    lifted = _post(client, PASSWORD)

    assert still.status_code == 429 and 170 <= int(still["Retry-After"]) <= 180
    assert "try again in 3 minutes" in still.content.decode()
    assert lifted.status_code == 302
    assert cache.get("karani:admin-login-failures:198.51.100.7") is None
