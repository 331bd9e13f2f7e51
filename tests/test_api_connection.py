"""A database connection that dies is replaced, and never turns into a 500.

Requests go through the WSGI application, outside any transaction, as a gunicorn worker runs
them, so Django's per-request connection bookkeeping (``CONN_MAX_AGE`` and
``CONN_HEALTH_CHECKS`` in settings) is the real one.
"""

import pytest
from api_helpers import terminate_backend, token_for, wsgi_get
from django.core.signals import request_started
from django.db import close_old_connections, connection

from memory import services

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

RECALL = "/api/memories/recall?q=remote"


@pytest.fixture
def killed_connection() -> tuple[str, int]:
    """(token, backend pid): one API request kept its connection, then the server ended
    that session between requests (a database restart)."""
    token = token_for("reader")
    services.remember(text="Prefers async remote teams")
    assert wsgi_get(RECALL, token) == 200
    assert connection.connection is not None, "the connection should be kept (CONN_MAX_AGE)"
    old = connection.connection.info.backend_pid
    terminate_backend(old)
    return token, old


def test_a_connection_killed_between_requests_is_replaced_not_answered_503(killed_connection):
    # Django's health check, before the request's first query, finds it dead and reconnects.
    token, old = killed_connection
    assert wsgi_get(RECALL, token) == 200
    assert connection.connection.info.backend_pid != old


def test_a_connection_that_dies_after_its_check_is_a_503_then_replaced(killed_connection):
    token, old = killed_connection
    # As if it died just after this request's health check had passed: the check is
    # marked done, and the request_started handler that would reset the mark is held back.
    connection.health_check_done = True
    request_started.disconnect(close_old_connections)
    try:
        assert wsgi_get(RECALL, token) == 503
    finally:
        request_started.connect(close_old_connections)
    # The broken connection is not kept for the next request.
    assert wsgi_get(RECALL, token) == 200
    assert connection.connection.info.backend_pid != old
