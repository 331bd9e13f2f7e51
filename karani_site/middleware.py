"""Middleware that knows the API needs less of the stack than the admin's pages."""

from django.contrib.messages.middleware import MessageMiddleware
from django.http import HttpRequest

# Where memory.api's URLs are included (karani_site/urls.py).
API_PREFIX = "/api/"


class SiteMessageMiddleware(MessageMiddleware):
    """Django's flash messages, for every page but the API's.

    The API never reads or writes messages, yet the stock middleware builds the message
    storage (the cookie and session backends) on every request and updates it on every
    response. Skipping it under /api/ leaves any pending admin messages where they are,
    for the next admin page. The admin's system check accepts this subclass.
    """

    def process_request(self, request: HttpRequest) -> None:
        if not request.path_info.startswith(API_PREFIX):
            super().process_request(request)

    # process_response already skips a request without message storage.
