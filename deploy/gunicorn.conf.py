"""gunicorn configuration for karani's web app (the REST API and the admin).

    gunicorn -c deploy/gunicorn.conf.py                       # 127.0.0.1:8000
    gunicorn -c deploy/gunicorn.conf.py --bind 0.0.0.0:8000   # the command line wins
    GUNICORN_CMD_ARGS="--workers 8" gunicorn -c deploy/gunicorn.conf.py

Chosen with bench/api_bench.py (README, REST API; shared 2-core machine, PostgreSQL ledger of
10k facts, recall at 1, 2 and 8 concurrent clients). Requests/s at 8 clients, one run each,
other benchmarks running (run-to-run spread is wide: sync 4 workers gave 180, 261 and 347):

    sync,    4 workers              180-347   sync, 3 workers        311
    gthread, 4 workers x 2 threads  217       gthread, 3 x 1 thread  177
    gthread, 2 workers x 4 threads  162       gthread, 4 x 1 thread  162

gthread keeps connections alive, but every request on a kept-alive connection travels from
the worker's poller thread to a pool thread and back, and threads of one process take turns
on the GIL: that costs more than the TCP handshake a sync worker's closed connection makes a
loopback or LAN client pay again. Sync workers need a buffering proxy (nginx) in front when
clients are slow or far away: a sync worker waits on its one client. Where there is none,
``GUNICORN_CMD_ARGS="--threads 4"`` switches to gthread.
"""

import multiprocessing

wsgi_app = "karani_site.wsgi:application"
bind = "127.0.0.1:8000"

worker_class = "sync"
# Two per core: recall spends about half its time waiting on the database, and a second
# process per core runs while the first waits. More only adds context switches.
workers = 2 * multiprocessing.cpu_count()
