"""gunicorn configuration for karani's web app (the REST API and the admin).

    gunicorn -c deploy/gunicorn.conf.py                       # 127.0.0.1:8000
    gunicorn -c deploy/gunicorn.conf.py --bind 0.0.0.0:8000   # the command line wins
    GUNICORN_CMD_ARGS="--workers 8" gunicorn -c deploy/gunicorn.conf.py

Chosen with bench/api_bench.py (README, REST API; shared 2-core machine, PostgreSQL ledger of
10k facts, recall at 1, 2 and 8 concurrent clients, other benchmarks running, so the spread
between runs is wide). Requests/s and API p95 minus service p95 at 8 clients:

    sync,    2 workers (one per core)   331 req/s, +10 ms    (1 client +4.7, 2 clients +3.7)
    sync,    3 or 4 workers             180-347,   +12-29 ms (1 client +3.3 to +6.9)
    gthread, 2 workers x 4 threads      162-203,   +27-35 ms (1 client +4.4 to +5.6)
    gthread, 4 x 2, 3 x 1, 4 x 1        162-217,   +14-33 ms

gthread keeps connections alive, but every request on a kept-alive connection travels from
the worker's poller thread to a pool thread and back, and threads of one process take turns
on the GIL: that costs more than the TCP handshake a sync worker's closed connection makes a
loopback or LAN client pay again. Sync workers need a buffering proxy (nginx) in front when
clients are slow or far away: a sync worker waits on its one client. Where there is none,
``GUNICORN_CMD_ARGS="--threads 4"`` switches to gthread.

gunicorn-h1c (a dev dependency beside gunicorn) gives gunicorn its C request parser, which
the default ``http_parser = "auto"`` uses when it is installed: 0.25-0.45 ms less worker CPU
per request than the pure-Python parser (bench/api_profile.py --gunicorn, A/B, one client).
"""

import multiprocessing

wsgi_app = "karani_site.wsgi:application"
bind = "127.0.0.1:8000"

worker_class = "sync"
# One per core. Every worker waits on the shared listening socket and wakes for each new
# connection; more workers than cores measured worse here (more wake-ups and context
# switches), even though recall spends part of its time waiting on the database.
workers = multiprocessing.cpu_count()
