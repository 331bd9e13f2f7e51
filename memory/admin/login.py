"""Admin login throttled per client address, counted in the database cache all workers share.

A successful login does not reset the count, so guessing between successes gains nothing. The
window is timed on ``memory.clock``, as the API's throttles are, so tests move time instead of
waiting it out; the cache's own expiry only clears old entries.
"""

import math

from django.contrib import admin
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect

from memory import clock
from memory.conf import settings

BLOCKED_MESSAGE = (
    "Too many failed login attempts from this address; try again in {minutes} minutes."
)


def _keys(request: HttpRequest) -> tuple[str, str]:
    # REMOTE_ADDR only: X-Forwarded-For is the client's to forge unless a proxy is trusted.
    address = request.META.get("REMOTE_ADDR", "")
    return f"karani:admin-login-failures:{address}", f"karani:admin-login-since:{address}"


def _seconds_left(count_key: str, since_key: str, window: int) -> float:
    """How long this address's window of failures still runs (0 once it is over)."""
    since = cache.get(since_key)
    if since is None:
        return 0.0
    left = since + window - clock.now()
    if left <= 0:
        cache.delete_many([count_key, since_key])
        return 0.0
    return left


@never_cache
@csrf_protect
def login(request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
    if request.method != "POST":
        return admin.site.login(request, extra_context)
    window = settings.KARANI_ADMIN_LOGIN_WINDOW
    count_key, since_key = _keys(request)
    left = _seconds_left(count_key, since_key, window)
    if left and (cache.get(count_key) or 0) >= settings.KARANI_ADMIN_LOGIN_ATTEMPTS:
        return HttpResponse(
            BLOCKED_MESSAGE.format(minutes=max(1, math.ceil(left / 60))),
            status=429,
            content_type="text/plain; charset=utf-8",
            headers={"Retry-After": str(math.ceil(left))},
        )
    response = admin.site.login(request, extra_context)
    # A good login redirects; a refused one re-renders the form with a 200.
    if response.status_code == 200:
        # add() keeps an existing entry: the window starts at the first failure, and a count
        # whose start was culled from the cache gets a new one.
        cache.add(since_key, clock.now(), timeout=window)
        if not cache.add(count_key, 1, timeout=window):
            try:
                cache.incr(count_key)
            except ValueError:  # the entry expired between add() and incr()
                cache.add(count_key, 1, timeout=window)
    return response
