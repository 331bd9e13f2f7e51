"""gunicorn configuration for karani's web app (the REST API, the admin and the home page).

    gunicorn -c deploy/gunicorn.conf.py                       # 127.0.0.1:8000
    gunicorn -c deploy/gunicorn.conf.py --bind 0.0.0.0:8000   # the command line wins
    GUNICORN_CMD_ARGS="--workers 8" gunicorn -c deploy/gunicorn.conf.py

Sync workers, one per core, chosen with bench/api_bench.py (figures in docs/benchmarks.md).
A sync worker waits on its one client, so put a buffering proxy (nginx) in front when clients
are slow or far away; without one, ``GUNICORN_CMD_ARGS="--threads 4"`` switches to gthread.
gunicorn is one of karani's dependencies; gunicorn-h1c (optional, in the dev extra) gives it
its C request parser, which the default ``http_parser = "auto"`` uses when it is installed.

Workers share nothing in memory: throttle counts live in the ledger database's cache table
(settings.CACHES), so the documented rate holds across workers and hosts.
"""

import multiprocessing

wsgi_app = "karani_site.wsgi:application"
bind = "127.0.0.1:8000"

worker_class = "sync"
# One per core. Every worker waits on the shared listening socket and wakes for each new
# connection; more workers than cores measured worse here (more wake-ups and context
# switches), even though recall spends part of its time waiting on the database.
workers = multiprocessing.cpu_count()

# gunicorn answers a request line over 4094 bytes with its own HTML 414, before the app. At 0
# its C parser (gunicorn-h1c) stops at 1 MiB instead, so the app answers a URL over
# memory.api.transport.MAX_URL_BYTES (32 KiB) with its JSON 414; the pure-Python parser has
# no cap at 0, so without gunicorn-h1c the largest finite limit stays.
try:
    import gunicorn_h1c  # noqa: F401

    limit_request_line = 0
except ImportError:
    limit_request_line = 8190
