"""``runserver`` with TCP_NODELAY on each accepted connection: no 40 ms stall per request.

Django's dev server (wsgiref underneath) writes a response in several small ``send`` calls:
the 17-byte status line first, then the Date and Server lines, the headers and the body.
With Nagle's algorithm on, only the first small segment leaves at once; the rest wait for
the client's ACK, and a client on a kept-alive connection (``requests.Session``, an agent's
HTTP client) delays that ACK by up to 40 ms. Seen on the loopback: 17 bytes, then the other
2 kB ~45 ms later on every request. TCP_NODELAY sends each write as it comes.

Everything else is staticfiles' runserver (``--insecure``, ``--nostatic``): karani_site is
listed before django.contrib.staticfiles in INSTALLED_APPS so this command takes its name.
"""

import socket
from typing import Any

from django.contrib.staticfiles.management.commands.runserver import Command as StaticRunserver
from django.core.servers.basehttp import WSGIServer


class NoDelayWSGIServer(WSGIServer):
    def get_request(self) -> tuple[socket.socket, Any]:
        conn, address = super().get_request()
        if conn.family in (socket.AF_INET, socket.AF_INET6):
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn, address


class Command(StaticRunserver):
    server_cls = NoDelayWSGIServer
