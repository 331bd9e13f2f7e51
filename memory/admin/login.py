"""Admin login throttled per client address, counted in the database cache all workers share.

A successful login does not reset the count, so guessing between successes gains nothing.
"""

from django.contrib import admin
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect

from memory.conf import settings

BLOCKED_MESSAGE = (
    "Too many failed login attempts from this address; try again in {minutes} minutes."
)


@never_cache
@csrf_protect
def login(request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
    if request.method != "POST":
        return admin.site.login(request, extra_context)
    window = settings.KARANI_ADMIN_LOGIN_WINDOW
    # REMOTE_ADDR only: X-Forwarded-For is the client's to forge unless a proxy is trusted.
    key = f"karani:admin-login-failures:{request.META.get('REMOTE_ADDR', '')}"
    if (cache.get(key) or 0) >= settings.KARANI_ADMIN_LOGIN_ATTEMPTS:
        return HttpResponse(
            BLOCKED_MESSAGE.format(minutes=max(1, window // 60)),
            status=429,
            content_type="text/plain; charset=utf-8",
            headers={"Retry-After": str(window)},
        )
    response = admin.site.login(request, extra_context)
    # A good login redirects; a refused one re-renders the form with a 200. add() starts the
    # window on the first failure; later failures only increment.
    if response.status_code == 200 and not cache.add(key, 1, timeout=window):
        try:
            cache.incr(key)
        except ValueError:  # the window expired between add() and incr()
            cache.add(key, 1, timeout=window)
    return response
