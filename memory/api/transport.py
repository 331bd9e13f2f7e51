"""What a request carries before any serializer reads it: a body sent in chunks, and a URL
longer than the API answers."""

import io

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.handlers.wsgi import LimitedStream
from django.http import HttpRequest
from rest_framework import status
from rest_framework.exceptions import APIException

# Past every URL the schema allows (2,200 characters of query at 12 bytes each, percent-encoded),
# so a valid request is never refused; the app answers in JSON before a server's HTML 414 would.
MAX_URL_BYTES = 32 * 1024


class LengthRequired(APIException):
    status_code = status.HTTP_411_LENGTH_REQUIRED
    default_code = "length_required"
    default_detail = (
        "a chunked body (Transfer-Encoding: chunked) needs a server that de-chunks it, such as "
        "gunicorn; this one does not: send the body with a Content-Length"
    )


class UriTooLong(APIException):
    status_code = status.HTTP_414_REQUEST_URI_TOO_LONG
    default_code = "uri_too_long"


def check_url(request: HttpRequest) -> None:
    size = len(request.get_full_path().encode())
    if size > MAX_URL_BYTES:
        raise UriTooLong(
            f"the URL is {size:,} bytes, over the API's {MAX_URL_BYTES:,}; "
            "send long text in a POST body (POST /api/context takes the posting's fields)"
        )


def take_chunked_body(request: HttpRequest) -> None:
    """Reads a chunked body so the parsers see it, as they see one with a Content-Length.

    Django reads ``Content-Length`` bytes only, so it would read such a body as empty. A server
    that de-chunks the body and ends the stream says so with ``wsgi.input_terminated``
    (gunicorn does); elsewhere (runserver) the chunks are unreadable, so the body is refused.
    """
    if "chunked" not in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
        return
    if not request.META.get("wsgi.input_terminated"):
        raise LengthRequired()
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    stream = request.META["wsgi.input"]
    body = stream.read() if limit is None else stream.read(limit + 1)
    if limit is not None and len(body) > limit:
        raise RequestDataTooBig("Request body exceeded settings.DATA_UPLOAD_MAX_MEMORY_SIZE.")
    request.META["CONTENT_LENGTH"] = str(len(body))
    # Django's own stream type, over the bytes read: the request reads it as any other body.
    request._stream = LimitedStream(io.BytesIO(body), len(body))
