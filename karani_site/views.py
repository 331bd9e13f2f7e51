"""The home page: what karani is, where its interfaces are, and each memory layer's health."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache

from karani_site.version import VERSION


@never_cache
def home(request: HttpRequest) -> HttpResponse:
    from memory.semantic import health  # Django's checks load this module on every CLI start

    return render(
        request,
        "home.html",
        {
            "version": VERSION,
            "report": health.diagnose(),
            # Layer details name databases and hosts: staff only; everyone sees ok or FAIL.
            "show_details": request.user.is_staff,
        },
    )
