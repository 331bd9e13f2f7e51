"""Token rows kept in the worker between requests, dropped the moment PostgreSQL says so.

Every API request authenticates with a token, and the token lookup was the request's one
query outside recall: ~0.2 ms of worker CPU, a round trip and a wake-up of the database
process each time (bench/api_profile.py). At 8 concurrent clients on two cores that cost is
paid again for every request queued ahead, so it decided whether the API stayed within its
3 ms budget over recall (README, REST API).

A plain in-process cache with a time-to-live would keep a deleted or rotated token working
until it expired. This one is told instead: migration 0010 puts statement-level triggers on
the token and user tables that ``NOTIFY karani_auth`` on any UPDATE, DELETE or TRUNCATE, and
each worker process keeps one connection that LISTENs on that channel. Before a cached row
is used, the worker reads whatever has arrived on that connection's socket (a non-blocking
read, no round trip); any notification empties the whole cache. A revocation committed by
any process (the admin, ``karani api-token --rotate``, a shell) therefore reaches every
worker as soon as PostgreSQL delivers the notification, well under a millisecond on one
host; without the cache the window is the same, a request that read the token just before
the commit is answered too.

The cache is used only when it can be trusted:
- PostgreSQL only (SQLite has no NOTIFY, and its lookup is a local read anyway);
- outside a transaction: inside one the request may see its own uncommitted changes, which
  no notification announces (tests run inside one, so they always query);
- while the listening connection is healthy: if it cannot be opened or has died (a database
  restart), the cache is emptied and every request queries, as without a cache, until it is
  open again (retried at most once a second);
- a row is stored only if no notification arrived between the check before its query and
  the store, so a change committed during the query is never cached over;
- only where migration 0010's triggers are in place (checked each time the listening
  connection opens; without them nothing announces a change, so nothing is cached);
- rows expire after ``MAX_AGE`` seconds regardless, a backstop for a notification lost in a
  way the connection's health does not show (triggers dropped by hand, a network partition
  that TCP keepalives have not noticed yet).

Only token rows are cached, never the objects built from them: each request still gets a
fresh User, so permission caches (``has_perm``) never outlive a request. Unknown keys are
not cached, so a wrong token is always looked up. ``KARANI_API_TOKEN_CACHE=off`` turns the
cache off, for a transaction-mode pooler (PgBouncer) that cannot hold a LISTEN.

The listening connection is one more connection to PostgreSQL per worker process.
"""

import contextlib
import logging
import os
import threading
import time
from typing import Any

import psycopg
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.backends.base.base import BaseDatabaseWrapper
from psycopg import pq
from rest_framework.authtoken.models import Token

log = logging.getLogger("karani.api")

CHANNEL = "karani_auth"
APPLICATION_NAME = "karani-token-cache"
MAX_AGE = 30.0  # seconds: the backstop above, not the means of invalidation
MAX_ENTRIES = 4096  # tokens per worker; past this the cache starts again empty
RETRY_AFTER = 1.0  # seconds between attempts to open the listening connection
TRIGGERS_RETRY_AFTER = 60.0  # seconds, when the triggers were missing
# Notice a silently dead listening connection (no FIN, no RST) in ~20 s, within MAX_AGE.
KEEPALIVES = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 2,
}


class TokenRowCache:
    """Rows of the token lookup by key, for one database alias in one process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: dict[str, tuple[float, tuple]] = {}
        self._generation = 0
        self._listener: psycopg.Connection | None = None
        self._fatal = False  # the server said FATAL on the listening connection
        self._pid = os.getpid()
        self._retry_at = 0.0
        # Connections inherited across a fork belong to the parent: finalizing one in the
        # child would send PostgreSQL a Terminate for the parent's session, so they are kept.
        self._inherited: list[psycopg.Connection] = []

    def get(self, key: str, connection: BaseDatabaseWrapper) -> tuple[tuple | None, int | None]:
        """(cached row or None, ticket for ``put``); the ticket is None when the cache
        cannot be trusted right now, and then nothing may be stored either."""
        with self._lock:
            if not self._listening(connection):
                return None, None
            hit = self._rows.get(key)
            if hit is not None and time.monotonic() - hit[0] > MAX_AGE:
                del self._rows[key]
                hit = None
            return (hit[1] if hit else None), self._generation

    def put(self, key: str, row: tuple, ticket: int) -> None:
        """Store a row read after ``get`` gave ``ticket``, unless a notification came since."""
        with self._lock:
            if ticket != self._generation or self._listener is None:
                return
            if len(self._rows) >= MAX_ENTRIES:
                self._rows.clear()
            self._rows[key] = (time.monotonic(), row)

    def close(self) -> None:
        """Close the listening connection (tests; a worker simply exits)."""
        with self._lock:
            if self._listener is not None:
                self._listener.close()
                self._listener = None
            self._retry_at = 0.0
            self._forget()

    def listener_pid(self) -> int | None:
        """The listening connection's server process id, if it is open (tests)."""
        return self._listener.info.backend_pid if self._listener is not None else None

    def _forget(self) -> None:
        self._rows.clear()
        self._generation += 1

    def _listening(self, connection: BaseDatabaseWrapper) -> bool:
        """Apply every notification that has arrived; False if the cache can't be trusted."""
        if self._pid != os.getpid():
            if self._listener is not None:
                self._inherited.append(self._listener)
            self._listener, self._pid, self._retry_at = None, os.getpid(), 0.0
            self._forget()
        if self._listener is None and not self._open(connection):
            return False
        pgconn = self._listener.pgconn
        try:
            # Reads what the socket holds without waiting (libpq's sockets are non-blocking);
            # a closed connection shows here as an error or a bad status.
            pgconn.consume_input()
            # PQnotifies parses what was read: notifications, and a FATAL as a notice.
            notified = False
            while pgconn.notifies() is not None:
                notified = True
            if self._fatal or pgconn.status != pq.ConnStatus.OK:
                raise psycopg.OperationalError("the listening connection is closed")
        except psycopg.Error:
            self._drop_listener()
            return False
        if notified:
            self._forget()
        return True

    def _open(self, connection: BaseDatabaseWrapper) -> bool:
        now = time.monotonic()
        if now < self._retry_at:
            return False
        params: dict[str, Any] = {
            k: v
            for k, v in connection.get_connection_params().items()
            if k not in {"cursor_factory", "context", "prepare_threshold"}
        }
        try:
            listener = _connect(params)
        except psycopg.Error:
            self._retry_at = now + RETRY_AFTER
            return False
        if not _triggers_in_place(listener):
            # Nothing would announce a revocation (a database restored without its triggers,
            # migrations not run): no cache, and say so, at most once a minute per worker.
            listener.close()
            log.warning(
                "API token cache off: the karani_auth_changed triggers are missing on %s"
                " (run `karani migrate`); every request looks its token up",
                " / ".join(_watched_tables()),
            )
            self._retry_at = now + TRIGGERS_RETRY_AFTER
            return False
        if not _listen(listener):
            self._retry_at = now + RETRY_AFTER
            return False
        # A terminated session (pg_terminate_backend, a shutdown) sends FATAL before it closes;
        # libpq reports that message, read while idle, as a notice, and may not have read the
        # close yet: the notice alone is enough to stop trusting the connection.
        listener.add_notice_handler(self._on_notice)
        self._listener, self._fatal = listener, False
        # Changes made while nobody listened were never announced: start empty.
        self._forget()
        return True

    def _on_notice(self, diagnostic: psycopg.errors.Diagnostic) -> None:
        if diagnostic.severity_nonlocalized in {"FATAL", "PANIC"}:
            self._fatal = True

    def _drop_listener(self) -> None:
        with contextlib.suppress(psycopg.Error):
            self._listener.close()
        self._listener = None
        self._retry_at = time.monotonic() + RETRY_AFTER
        self._forget()


def _watched_tables() -> list[str]:
    return [Token._meta.db_table, get_user_model()._meta.db_table]


def _triggers_in_place(listener: psycopg.Connection) -> bool:
    """Migration 0010's triggers exist and are enabled on both tables."""
    tables = _watched_tables()
    try:
        found = listener.execute(
            "SELECT count(DISTINCT tgrelid) FROM pg_trigger"
            " WHERE tgname = 'karani_auth_changed' AND tgenabled <> 'D'"
            " AND tgrelid = ANY(ARRAY[to_regclass(%s), to_regclass(%s)])",
            tables,
        ).fetchone()[0]
    except psycopg.Error:
        return False
    return found == len(tables)


def _connect(params: dict[str, Any]) -> psycopg.Connection:
    # Named, so that pg_stat_activity shows what the extra connection per worker is for.
    params = {**KEEPALIVES, **params, "application_name": APPLICATION_NAME}
    return psycopg.connect(**params, autocommit=True)


def _listen(listener: psycopg.Connection) -> bool:
    try:
        listener.execute(f"LISTEN {CHANNEL}")
    except psycopg.Error:
        listener.close()
        return False
    return True


_caches: dict[str, TokenRowCache] = {}
_caches_lock = threading.Lock()


def for_connection(connection: BaseDatabaseWrapper) -> TokenRowCache | None:
    """The alias's cache, or None where it must not be used (see the module's rules)."""
    if (
        connection.vendor != "postgresql"
        or not settings.KARANI_API_TOKEN_CACHE
        or connection.in_atomic_block
    ):
        return None
    cache = _caches.get(connection.alias)
    if cache is None:
        with _caches_lock:
            cache = _caches.setdefault(connection.alias, TokenRowCache())
    return cache


def close_all() -> None:
    """Close every listening connection of this process (a test database must be droppable)."""
    for cache in list(_caches.values()):
        cache.close()
