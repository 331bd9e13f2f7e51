"""Recall through the REST API (dev server and gunicorn), beside in-process service recall.

    .venv/bin/python bench/api_bench.py --backend sqlite   [--size 10000] [--requests 600]
    .venv/bin/python bench/api_bench.py --backend postgres [--clients 1,2,8]

One run, one ledger (its own database: ``karani_api_bench`` on Postgres, a temp-dir file on
SQLite, grown through ``services.import_facts`` to ``--size`` of ``ledgergen``'s generated
facts), one query set (``ledgergen.queries``), a reader's API token:

- ``service``: ``memory.services.recall`` called in this process, one query after another:
  the baseline, what recall costs without HTTP.
- ``API in-process``: the same requests through Django's test client in this process,
  interleaved with the service calls: DRF and Django's cost without any HTTP server.
- ``runserver``: ``manage.py runserver --noreload`` (threaded, as developers run it).
  Expect ~40 ms more per request than gunicorn on a kept-alive connection: its wsgiref
  handler sends the status line in a TCP segment of its own, and Nagle's algorithm holds
  the rest until the client's delayed ACK (seen with a raw socket: 17 bytes, then the
  headers and body ~40 ms later). A property of the dev server, not of the API.
- ``gunicorn``: ``karani_site.wsgi`` under gunicorn, 2 workers x 4 threads (gthread, so
  clients keep their connections alive).

Each server is measured with 1, 2 and 8 concurrent clients. A client is a separate process
(so the GIL of one client never slows another) holding one keep-alive ``http.client``
connection on the loopback and sending a fixed number of recall requests; every answer must
be a 200 with the recall JSON, or the run fails. Throttling is switched off for the servers
(``KARANI_API_RECALL_RATE=off``) so the bench measures recall, not the limiter.

Reported: requests/s over the whole level (wall clock from the first request to the last),
median and p95 latency per request, and the API overhead: single-client API p95 minus the
service's p95 (target: under 3 ms).
"""

import argparse
import http.client
import json
import multiprocessing
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from io import StringIO
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent))

ROOT = Path(__file__).resolve().parent.parent
PG_BASE = os.environ.get("KARANI_BENCH_PG", "postgresql://postgres@127.0.0.1:5432")
PG_DB = "karani_api_bench"
SQLITE_FILE = Path(tempfile.gettempdir()) / "karani-bench" / "api_bench.sqlite3"
OVERHEAD_TARGET_MS = 3.0
WARMUP = 20


def _pct(values: list[float], p: int) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1]


def _timed_ms(fn, arg) -> float:
    t0 = time.perf_counter()
    fn(arg)
    return (time.perf_counter() - t0) * 1000


def _summary(times: list[float]) -> dict:
    return {
        "n": len(times),
        "p50": statistics.median(times),
        "p95": _pct(times, 95),
        "rps": 1000 / statistics.mean(times),
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- clients -------------------------------------------------------------------------------


def _client(port: int, token: str, paths: list[str], warmup: int) -> dict:
    """One client process: warm up, then send ``paths`` in order over one connection."""
    headers = {"Authorization": f"Token {token}", "Connection": "keep-alive"}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    reconnects = 0

    def get(path: str) -> bytes:
        nonlocal conn, reconnects
        for attempt in (1, 2):
            try:
                conn.request("GET", path, headers=headers)
                response = conn.getresponse()
                body = response.read()
                if response.status != 200:
                    raise SystemExit(f"GET {path} -> {response.status}: {body[:200]!r}")
                if response.getheader("Connection", "").lower() == "close":
                    conn.close()
                return body
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # A server that closed the idle connection: reconnect once and count it.
                if attempt == 2:
                    raise
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                reconnects += 1
        raise AssertionError("unreachable")

    for path in paths[:warmup]:
        get(path)
    times = []
    start = time.perf_counter()  # CLOCK_MONOTONIC: comparable across processes on Linux
    for path in paths:
        t0 = time.perf_counter()
        body = get(path)
        times.append((time.perf_counter() - t0) * 1000)
        if "results" not in json.loads(body):
            raise SystemExit(f"GET {path}: not a recall answer: {body[:200]!r}")
    end = time.perf_counter()
    conn.close()
    return {"times": times, "start": start, "end": end, "reconnects": reconnects}


def _client_star(args: tuple) -> dict:
    return _client(*args)


def run_level(port: int, token: str, paths: list[str], clients: int, total: int) -> dict:
    per_client = max(1, total // clients)
    jobs = []
    for i in range(clients):
        mine = paths[i::clients] or paths
        cycle = (mine * (per_client // len(mine) + 1))[:per_client]
        jobs.append((port, token, cycle, min(WARMUP, per_client)))
    # spawn, not fork: the children must not inherit this process's database connection.
    with multiprocessing.get_context("spawn").Pool(clients) as pool:
        results = pool.map(_client_star, jobs)
    times = [t for r in results for t in r["times"]]
    wall = max(r["end"] for r in results) - min(r["start"] for r in results)
    return {
        "n": len(times),
        "rps": len(times) / wall,
        "p50": statistics.median(times),
        "p95": _pct(times, 95),
        "reconnects": sum(r["reconnects"] for r in results),
    }


# --- servers -------------------------------------------------------------------------------


def _server_cmd(kind: str, port: int) -> list[str]:
    bindir = Path(sys.executable).parent
    if kind == "runserver":
        return [
            sys.executable,
            str(ROOT / "manage.py"),
            "runserver",
            f"127.0.0.1:{port}",
            "--noreload",
            "--skip-checks",
        ]
    gunicorn = shutil.which("gunicorn", path=str(bindir)) or "gunicorn"
    return [
        gunicorn,
        "karani_site.wsgi:application",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        "2",
        "--worker-class",
        "gthread",
        "--threads",
        "4",
        "--keep-alive",
        "30",
        "--log-level",
        "warning",
        "--chdir",
        str(ROOT),
    ]


def start_server(kind: str, token: str, probe: str) -> tuple[subprocess.Popen, int]:
    port = _free_port()
    env = dict(os.environ)
    env.update(
        {
            "KARANI_API_RECALL_RATE": "off",
            "KARANI_DEBUG": "false",
            "DJANGO_SETTINGS_MODULE": "karani_site.settings",
        }
    )
    proc = subprocess.Popen(
        _server_cmd(kind, port),
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{kind} exited with {proc.returncode} before answering")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", probe, headers={"Authorization": f"Token {token}"})
            if conn.getresponse().status == 200:
                conn.close()
                return proc, port
            conn.close()
        except OSError:
            pass
        time.sleep(0.3)
    stop_server(proc)
    raise SystemExit(f"{kind} did not answer within 90 s")


def stop_server(proc: subprocess.Popen) -> None:
    # Its own session: the signal reaches gunicorn's workers too, and nothing else.
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


# --- ledger --------------------------------------------------------------------------------


def setup_database(backend: str) -> None:
    """Point Django at this bench's own database (never a real ledger) and migrate it."""
    if backend == "postgres":
        import psycopg

        with psycopg.connect(f"{PG_BASE}/postgres", autocommit=True) as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [PG_DB]).fetchone():
                conn.execute(f'CREATE DATABASE "{PG_DB}"')
        os.environ["DATABASE_URL"] = f"{PG_BASE}/{PG_DB}"
    else:
        SQLITE_FILE.parent.mkdir(parents=True, exist_ok=True)
        os.environ["DATABASE_URL"] = f"sqlite:///{SQLITE_FILE}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "karani_site.settings"
    os.environ.setdefault("KARANI_MEMORY", "basic")
    os.environ["KARANI_API_RECALL_RATE"] = "off"  # for the in-process API row too
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def grow_to(size: int, *, log) -> None:
    """Import ledgergen's deterministic chunks through the service until ``size`` facts live."""
    import ledgergen

    from memory import services
    from memory.models import Memory

    have = Memory.objects.count()
    for n in range(have // ledgergen.CHUNK, size // ledgergen.CHUNK):
        t0 = time.perf_counter()
        records = (
            (i, {"text": f.text, "kind": f.kind, "company": f.company})
            for i, f in enumerate(ledgergen.chunk(n), 1)
        )
        report = services.import_facts(records=records, batch_size=1000)
        log(f"  chunk {n}: {report.created:,} created in {time.perf_counter() - t0:.1f}s")
    from django.db import connection

    # Fresh statistics, or the planner may pick a scan for the token-index queries.
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("ANALYZE memories")
            cursor.execute("ANALYZE memory_tokens")
        else:
            cursor.execute("ANALYZE")


# --- main ----------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=["postgres", "sqlite"], default="sqlite")
    parser.add_argument("--size", type=int, default=10_000, help="live facts (multiple of 10k)")
    parser.add_argument("--requests", type=int, default=600, help="timed requests per level")
    parser.add_argument("--service-queries", type=int, default=600)
    parser.add_argument("--clients", default="1,2,8")
    parser.add_argument("--servers", default="runserver,gunicorn")
    parser.add_argument("--limit", type=int, default=5)
    args = parser.parse_args()
    levels = [int(c) for c in args.clients.split(",")]
    servers = [s for s in args.servers.split(",") if s]

    from rich.console import Console
    from rich.table import Table

    console = Console()
    setup_database(args.backend)
    console.log(f"{args.backend}: growing the ledger to {args.size:,} facts")
    grow_to(args.size, log=console.log)

    import ledgergen
    from django.core.management import call_command
    from django.db import connections
    from django.test import Client

    from memory import services

    out = StringIO()
    call_command("api-token", "api-bench", "--create-user", stdout=out)
    token = out.getvalue().strip()

    queries = ledgergen.queries(max(args.service_queries, args.requests) + WARMUP)
    paths = [
        "/api/memories/recall?"
        + urlencode(
            {"q": q.query, "limit": args.limit} | ({"company": q.company} if q.company else {})
        )
        for q in queries
    ]

    console.log("service: in-process recall; then the API in-process (Django test client)")
    client = Client(HTTP_AUTHORIZATION=f"Token {token}")

    def service_call(i: int) -> None:
        q = queries[i]
        services.recall(query=q.query, company=q.company, limit=args.limit)

    def client_call(i: int) -> None:
        response = client.get(paths[i])
        if response.status_code != 200:
            raise SystemExit(f"GET {paths[i]} -> {response.status_code}")

    # The same queries both ways, interleaved, so load on a shared machine hits both alike.
    for i in range(WARMUP):
        service_call(i)
        client_call(i)
    service_times, inproc_times = [], []
    for i in range(WARMUP, WARMUP + args.service_queries):
        service_times.append(_timed_ms(service_call, i))
        inproc_times.append(_timed_ms(client_call, i))
    connections.close_all()
    service, inproc = _summary(service_times), _summary(inproc_times)

    results: list[tuple[str, int, dict]] = []
    for kind in servers:
        proc, port = start_server(kind, token, paths[0])
        try:
            for clients in levels:
                console.log(f"{kind}: {clients} client(s), {args.requests} requests")
                results.append(
                    (kind, clients, run_level(port, token, paths, clients, args.requests))
                )
        finally:
            stop_server(proc)

    load = os.getloadavg()[0]
    table = Table(
        title=f"recall through the API vs in-process, {args.backend}, {args.size:,} facts, "
        f"limit {args.limit} (load average {load:.1f} on {os.cpu_count()} cores)",
        title_justify="left",
    )
    for col in ("path", "clients", "requests", "req/s", "p50 ms", "p95 ms", "p95 - service p95"):
        table.add_column(col, justify="left" if col == "path" else "right")
    table.add_row(
        "service (in-process)",
        "1",
        str(service["n"]),
        f"{service['rps']:.0f}",
        f"{service['p50']:.2f}",
        f"{service['p95']:.2f}",
        "-",
    )
    table.add_row(
        "API in-process (test client)",
        "1",
        str(inproc["n"]),
        f"{inproc['rps']:.0f}",
        f"{inproc['p50']:.2f}",
        f"{inproc['p95']:.2f}",
        f"{inproc['p95'] - service['p95']:+.2f}",
    )
    for kind, clients, r in results:
        table.add_row(
            kind,
            str(clients),
            str(r["n"]),
            f"{r['rps']:.0f}",
            f"{r['p50']:.2f}",
            f"{r['p95']:.2f}",
            f"{r['p95'] - service['p95']:+.2f}",
        )
    console.print(table)
    console.print(
        f"framework (DRF + Django, no HTTP server) at p95: {inproc['p95'] - service['p95']:.2f} ms"
    )
    for kind, clients, r in results:
        if clients == 1:
            overhead = r["p95"] - service["p95"]
            verdict = "within" if overhead < OVERHEAD_TARGET_MS else "OVER"
            console.print(
                f"{kind}: API overhead at p95, one client: {overhead:.2f} ms "
                f"({verdict} the {OVERHEAD_TARGET_MS:.0f} ms target)"
                + (f"; {r['reconnects']} reconnects" if r["reconnects"] else "")
            )


if __name__ == "__main__":
    main()
