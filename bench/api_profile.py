"""CPU per recall request inside a WSGI worker, minus the service's own, and where it goes.

    .venv/bin/python -m bench.api_profile --backend postgres [--requests 2000] [--profile 30]

Runs in one process what a gunicorn sync worker runs per request, without the socket: a
WSGI environ as gunicorn builds it (method, path, query string, Host, Authorization,
wsgi.input), ``karani_site.wsgi.application`` with the real middleware stack, a real API
token, the bench ledger of bench/api_bench.py (``karani_api_bench`` on Postgres). The same
queries also go straight to ``selectors.recall``; requests and service calls are
interleaved, so the difference in CPU time (``time.process_time``: this process only, not
PostgreSQL's) is what Django and DRF add to one recall. ``--canned`` measures that part
alone and more steadily: every request gets one precomputed recall answer, so all that is
left is the WSGI handler, the middleware, DRF, the token lookup and the JSON.
``--profile N`` then prints the N costliest functions of a cProfile run (CPU time) over
the WSGI loop, and the same run grouped by package (Django's middleware, DRF, karani's
API module, the service, the driver).

``gunicorn``'s own per-request work (accept, parse the request, write the answer, close)
is not in this loop; ``--gunicorn`` measures a real worker's CPU (from /proc) over a run of
requests on one connection each, so the two can be compared.
"""

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

from bench import api_bench


def _environ(path_qs: str, token: str) -> dict:
    path, _, qs = path_qs.partition("?")
    # What gunicorn's sync worker hands the application (gunicorn/http/wsgi.py).
    return {
        "REQUEST_METHOD": "GET",
        "SCRIPT_NAME": "",
        "PATH_INFO": path,
        "QUERY_STRING": qs,
        "RAW_URI": path_qs,
        "SERVER_PROTOCOL": "HTTP/1.1",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "REMOTE_ADDR": "127.0.0.1",
        "REMOTE_PORT": "50000",
        "HTTP_HOST": "127.0.0.1:8000",
        "HTTP_AUTHORIZATION": f"Token {token}",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        "wsgi.file_wrapper": None,
    }


def _call(application, environ: dict) -> bytes:
    status = []

    def start_response(s: str, headers: list, exc_info=None) -> None:
        status.append(s)

    result = application(environ, start_response)
    try:
        body = b"".join(result)
    finally:
        if hasattr(result, "close"):
            result.close()  # request_finished: Django's connection bookkeeping runs here
    if not status[0].startswith("200") or b'"results":' not in body:
        raise SystemExit(f"{environ['RAW_URI']} -> {status[0]}: {body[:200]!r}")
    return body


def _group(filename: str) -> str:
    for marker, name in (
        ("/django/middleware/", "django middleware"),
        ("/django/contrib/sessions/", "django middleware"),
        ("/django/contrib/messages/", "django middleware"),
        ("/django/contrib/auth/", "django.contrib.auth"),
        ("/django/urls/", "django url resolving"),
        ("/django/db/", "django.db"),
        ("/django/core/handlers/", "django handler"),
        ("/django/http/", "django request/response"),
        ("/django/", "django other"),
        ("/rest_framework/", "DRF"),
        ("/psycopg", "psycopg"),
        ("/memory/api/", "karani API"),
        ("/memory/", "karani service"),
        ("/logging/", "logging"),
    ):
        if marker in filename:
            return name
    return "stdlib/other"


def _setup(backend: str, name: str) -> None:
    """bench/api_bench.py's ledger, as that bench left it (run it once first)."""
    if backend == "postgres":
        os.environ["DATABASE_URL"] = f"{api_bench.PG_BASE}/{name}"
    else:
        os.environ["DATABASE_URL"] = f"sqlite:///{api_bench.SQLITE_DIR / name}.sqlite3"
    os.environ["DJANGO_SETTINGS_MODULE"] = "karani_site.settings"
    os.environ.setdefault("KARANI_MEMORY", "basic")
    os.environ["KARANI_API_RECALL_RATE"] = "off"  # as the bench's servers run
    import django

    django.setup()
    from memory.models import Memory

    if Memory.objects.count() < 10_000:
        raise SystemExit("no bench ledger: run bench/api_bench.py once first")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=["postgres", "sqlite"], default="postgres")
    parser.add_argument("--database", default=api_bench.PG_DB, help="api_bench's --database")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--profile", type=int, default=0, help="print the N costliest functions")
    parser.add_argument("--gunicorn", action="store_true", help="also a real worker's CPU")
    parser.add_argument(
        "--canned",
        action="store_true",
        help="also the API alone: recall's answer computed once, returned to every request",
    )
    parser.add_argument("--limit", type=int, default=5)
    args = parser.parse_args()

    _setup(args.backend, args.database)
    from django.core.management import call_command

    from bench.support import ledgergen
    from karani_site.wsgi import application
    from memory import selectors

    out = io.StringIO()
    call_command("api-token", "api-bench", "--create-user", stdout=out)
    token = out.getvalue().strip()
    queries = ledgergen.queries(args.requests)
    paths = [api_bench._path(q, args.limit) for q in queries]

    for i in range(50):
        selectors.recall(query=queries[i].query, company=queries[i].company, limit=args.limit)
        _call(application, _environ(paths[i], token))

    api_cpu, service_cpu, api_wall = [], [], []
    for i, q in enumerate(queries):
        c0 = time.process_time()
        selectors.recall(query=q.query, company=q.company, limit=args.limit)
        c1 = time.process_time()
        w = time.perf_counter()
        _call(application, _environ(paths[i], token))
        api_wall.append(time.perf_counter() - w)
        api_cpu.append(time.process_time() - c1)
        service_cpu.append(c1 - c0)
    mean_api, mean_service = statistics.fmean(api_cpu), statistics.fmean(service_cpu)
    print(
        f"{len(queries)} requests, mean CPU per request (this process, ms): "
        f"WSGI {mean_api * 1000:.3f}, service {mean_service * 1000:.3f}, "
        f"API adds {(mean_api - mean_service) * 1000:.3f}; "
        f"WSGI wall p50 {statistics.median(api_wall) * 1000:.3f}; "
        f"load average {os.getloadavg()[0]:.2f}"
    )

    if args.canned:
        _canned(application, token, paths, queries[0], args.limit)

    if args.profile:
        # CPU time, not wall: waits on PostgreSQL and on a busy machine are not the API.
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
        for i in range(len(queries)):
            _call(application, _environ(paths[i], token))
        profiler.disable()
        stats = pstats.Stats(profiler)
        per = defaultdict(float)
        for (filename, _line, _name), (_cc, _nc, tottime, _ct, _callers) in stats.stats.items():
            per[_group(filename)] += tottime
        total = sum(per.values())
        print(f"\nown time by package, ms per request (profiled: {total / len(queries) * 1e3:.3f})")
        for name, value in sorted(per.items(), key=lambda kv: -kv[1]):
            print(f"  {name:28s} {value / len(queries) * 1000:7.3f}")
        print()
        stats.sort_stats("cumulative").print_stats(args.profile)
        stats.sort_stats("tottime").print_stats(args.profile)

    if args.gunicorn:
        _gunicorn_cpu(token, paths, mean_service)


def _canned(application, token: str, paths: list[str], query, limit: int) -> None:
    """CPU of the WSGI path when recall costs nothing: one precomputed answer for all."""
    from memory import selectors

    answer = selectors.recall(query=query.query, company=query.company, limit=limit)
    real = selectors.recall
    selectors.recall = lambda **kwargs: answer
    try:
        times = []
        for _round in range(5):
            for path in paths[:50]:
                _call(application, _environ(path, token))
            c0 = time.process_time()
            for path in paths:
                _call(application, _environ(path, token))
            times.append((time.process_time() - c0) / len(paths))
    finally:
        selectors.recall = real
    print(
        f"API alone (recall answered from memory), CPU per request, 5 rounds of "
        f"{len(paths)}: median {statistics.median(times) * 1000:.3f} ms, "
        f"min {min(times) * 1000:.3f}; load average {os.getloadavg()[0]:.2f}"
    )


def _proc_counts(pids: list[int]) -> tuple[float, int]:
    """CPU seconds (utime + stime) and voluntary context switches (wake-ups) of ``pids``."""
    tick = os.sysconf("SC_CLK_TCK")
    cpu = switches = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            status = Path(f"/proc/{pid}/status").read_text()
        except FileNotFoundError:  # a backend that ended between the listing and the read
            continue
        cpu += int(fields[11]) + int(fields[12])
        switches += int(status.split("voluntary_ctxt_switches:")[1].split()[0])
    return cpu / tick, switches


def _backends() -> list[int]:
    """Server processes of the bench database's connections (this process's excepted)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid()"
        )
        return [row[0] for row in cursor.fetchall()]


def _gunicorn_cpu(token: str, paths: list[str], mean_service: float) -> None:
    """One client, requests in turn: the workers' and their PostgreSQL backends' CPU and
    wake-ups per request, from /proc (10 ms clock ticks: use many requests)."""
    proc, port = api_bench.start_server("gunicorn", token, paths[0])
    try:
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        workers = [int(pid) for pid in children]
        client = api_bench.HttpClient(port)
        requests = [
            (
                f"GET {p} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                f"Authorization: Token {token}\r\n\r\n"
            ).encode()
            for p in paths
        ]
        for request in requests[:100]:  # every worker has its database connection now
            client.get(request)
        backends = _backends()
        w0, b0 = _proc_counts(workers), _proc_counts(backends)
        for request in requests:
            client.get(request)
        w1, b1 = _proc_counts(workers), _proc_counts(backends)
        client.close()
        n = len(requests)
        cpu = (w1[0] - w0[0]) / n * 1000
        print(
            f"\ngunicorn ({api_bench.gunicorn_config()}), {n} requests from one client:\n"
            f"  workers:  CPU {cpu:.3f} ms per request (service alone "
            f"{mean_service * 1000:.3f}: the worker adds {cpu - mean_service * 1000:.3f}), "
            f"{(w1[1] - w0[1]) / n:.2f} wake-ups per request\n"
            f"  postgres: CPU {(b1[0] - b0[0]) / n * 1000:.3f} ms per request, "
            f"{(b1[1] - b0[1]) / n:.2f} wake-ups per request ({len(backends)} backends)"
        )
    finally:
        api_bench.stop_server(proc)


if __name__ == "__main__":
    main()
