"""karani's runserver: staticfiles' dev server, with TCP_NODELAY on every accepted socket.

Without it, Django's dev server answers a kept-alive client ~40 ms late on every request:
wsgiref writes the status line alone, Nagle holds the rest until the client's delayed ACK.
"""

import socket
import threading

from django.core.management import get_commands, load_command_class
from django.core.servers.basehttp import WSGIRequestHandler

from karani_site.management.commands.runserver import Command, NoDelayWSGIServer


def test_its_runserver_is_karanis_and_keeps_the_static_options():
    assert get_commands()["runserver"] == "karani_site"
    command = load_command_class("karani_site", "runserver")
    assert isinstance(command, Command)
    assert command.server_cls is NoDelayWSGIServer
    parser = command.create_parser("manage.py", "runserver")
    options = parser.parse_args(["--insecure", "--nostatic"])
    assert options.insecure_serving is True and options.use_static_handler is False


def test_it_turns_nagle_off_on_each_accepted_connection():
    server = NoDelayWSGIServer(("127.0.0.1", 0), WSGIRequestHandler)
    accepted: list[socket.socket] = []
    try:
        accept = threading.Thread(target=lambda: accepted.append(server.get_request()[0]))
        accept.start()
        with socket.create_connection(server.server_address, timeout=5):
            accept.join(timeout=5)
        assert accepted, "no connection accepted"
        assert accepted[0].getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        for conn in accepted:
            conn.close()
        server.server_close()
