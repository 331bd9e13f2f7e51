"""staticfiles' ``runserver`` with TCP_NODELAY, so Nagle never holds wsgiref's small writes."""

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
