"""Recall through the REST API (dev server and gunicorn), beside in-process service recall.

    .venv/bin/python -m bench.api_bench --backend postgres [--size 10000] [--requests 600]
    .venv/bin/python -m bench.api_bench --backend sqlite   [--clients 1,2,8] [--rounds 5]

    .venv/bin/python -m bench.api_bench --backend postgres --servers gunicorn --throttle

One run, one ledger (its own database: ``--database``, default ``karani_api_bench``, on
Postgres, a temp-dir file of that name on SQLite, grown through ``services.import_facts`` to
``--size`` of ``ledgergen``'s generated facts), one query set (``ledgergen.queries``), a
reader's API token.

- ``service``: ``memory.selectors.recall`` called in-process: what recall costs without HTTP.
- ``API in-process``: the same requests through Django's test client in this process,
  interleaved call by call with the service: DRF and Django's cost without an HTTP server.
- ``runserver``: karani's ``manage.py runserver --noreload`` (threaded, as developers run
  it; karani_site's runserver sets TCP_NODELAY, see its module for the 40 ms it removes).
- ``gunicorn``: ``gunicorn -c deploy/gunicorn.conf.py`` (the production configuration; its
  module says why that worker class and those counts). ``GUNICORN_CMD_ARGS`` overrides it
  for experiments, e.g. ``GUNICORN_CMD_ARGS="--threads 4"`` (gthread).

Each server is measured at 1, 2 and 8 concurrent clients, and at each level the service is
measured at the same concurrency in the same run: N client processes, each alternating
blocks (``--rounds``) of in-process ``selectors.recall`` calls (its own database connection)
and API requests for the same queries, so background load on a shared machine hits both
alike. The overhead column is API p95 minus that service p95 (target: under 3 ms).

A client is a separate process (one client's GIL never slows another) with a loopback
socket (TCP_NODELAY) kept alive while the server allows it (a server that answers
``Connection: close`` gets a new connection on the next request, inside its timing); each
request is pre-built bytes sent in one write, the answer read by Content-Length: a client
that costs microseconds, so it does not steal the server's CPU. Every answer must be a 200
recall answer, or the run fails. Throttling is off (``KARANI_API_RECALL_RATE=off``), so the
bench measures recall and the API, not the limiter; ``--throttle`` turns the recall scope on
at a rate no run reaches, so each request also reads and writes its count in the database
cache (``karani_cache``), as a deployed server does.
"""

import argparse
import multiprocessing
import os
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

ROOT = Path(__file__).resolve().parent.parent
PG_BASE = os.environ.get("KARANI_BENCH_PG", "postgresql://postgres@127.0.0.1:5432")
PG_DB = "karani_api_bench"
SQLITE_DIR = Path(tempfile.gettempdir()) / "karani-bench"
GUNICORN_CONF = ROOT / "deploy" / "gunicorn.conf.py"
OVERHEAD_TARGET_MS = 3.0
SERVERS = ("runserver", "gunicorn")
WARMUP = 20
# --throttle: the recall scope counts every request, at a rate no run reaches.
THROTTLED_RATE = "1000000/min"


def _pct(values: list[float], p: int) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1]


def _timed_ms(fn, arg) -> float:
    t0 = time.perf_counter()
    fn(arg)
    return (time.perf_counter() - t0) * 1000


def _summary(times: list[float], wall: float | None = None) -> dict:
    return {
        "n": len(times),
        "p50": statistics.median(times),
        "p95": _pct(times, 95),
        "rps": len(times) / wall if wall else 1000 / statistics.mean(times),
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- clients -------------------------------------------------------------------------------


class HttpClient:
    """One kept-alive HTTP/1.1 connection: a pre-built request in one write, read by length."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sock: socket.socket | None = None
        self.reconnects = 0

    def _connect(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def get(self, request: bytes) -> bytes:
        for attempt in (1, 2):
            if self.sock is None:
                self.sock = self._connect()
            try:
                return self._exchange(request)
            except (ConnectionError, EOFError):
                # The server closed an idle kept-alive connection: reconnect once, count it.
                self.close()
                if attempt == 2:
                    raise
                self.reconnects += 1
        raise AssertionError("unreachable")

    def _exchange(self, request: bytes) -> bytes:
        sock = self.sock
        assert sock is not None
        sock.sendall(request)
        buf = b""
        while (end := buf.find(b"\r\n\r\n")) < 0:
            chunk = sock.recv(65536)
            if not chunk:
                raise EOFError("connection closed before the headers")
            buf += chunk
        head = buf[:end].decode("latin-1").split("\r\n")
        body = buf[end + 4 :]
        headers = dict(line.lower().split(": ", 1) for line in head[1:])
        if "content-length" not in headers:
            raise SystemExit(f"no Content-Length in {head!r}")
        length = int(headers["content-length"])
        while len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                raise EOFError("connection closed inside the body")
            body += chunk
        if headers.get("connection") == "close":
            self.close()
        status = head[0].split(" ", 2)[1]
        if status != "200" or b'"results":' not in body:
            raise SystemExit(f"{request.splitlines()[0]!r} -> {head[0]}: {body[:200]!r}")
        return body


def _worker(pipe) -> None:
    """A client process: runs blocks of service calls or API requests on command."""
    import django

    django.setup()  # DATABASE_URL etc. come from the parent's environment
    from memory import selectors

    while True:
        command = pipe.recv()
        if command[0] == "stop":
            break
        kind, items, warmup = command[1], command[2], command[3]
        times = []
        if kind == "service":
            for query, company, limit in items[:warmup]:
                selectors.recall(query=query, company=company, limit=limit)
            start = time.perf_counter()
            for query, company, limit in items:
                t0 = time.perf_counter()
                selectors.recall(query=query, company=company, limit=limit)
                times.append((time.perf_counter() - t0) * 1000)
            end = time.perf_counter()
            reconnects = 0
        else:
            client = HttpClient(command[4])
            for request in items[:warmup]:
                client.get(request)
            start = time.perf_counter()  # CLOCK_MONOTONIC: comparable across processes
            for request in items:
                t0 = time.perf_counter()
                client.get(request)
                times.append((time.perf_counter() - t0) * 1000)
            end = time.perf_counter()
            client.close()
            reconnects = client.reconnects
        pipe.send({"times": times, "start": start, "end": end, "reconnects": reconnects})


class Clients:
    """N client processes (spawned: none inherits this process's database connection)."""

    def __init__(self, n: int) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.pipes, self.procs = [], []
        for _ in range(n):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker, args=(child,), daemon=True)
            proc.start()
            self.pipes.append(parent)
            self.procs.append(proc)

    def run(self, kind: str, per_client: list[list], warmup: int, port: int = 0) -> dict:
        for pipe, items in zip(self.pipes, per_client, strict=True):
            pipe.send(("run", kind, items, warmup, port))
        return [pipe.recv() for pipe in self.pipes]

    def close(self) -> None:
        for pipe in self.pipes:
            pipe.send(("stop",))
        for proc in self.procs:
            proc.join(timeout=30)


def run_level(
    port: int, token: str, queries: list, limit: int, clients: int, total: int, rounds: int
) -> dict:
    """Service and API at ``clients`` concurrency, alternating blocks of the same queries."""
    per_client = max(rounds, total // clients)
    assigned = []
    for i in range(clients):
        mine = queries[i::clients] or queries
        assigned.append((mine * (per_client // len(mine) + 1))[:per_client])
    pool = Clients(clients)
    sides: dict[str, dict] = {"service": {"times": [], "wall": 0.0, "reconnects": 0}}
    sides["api"] = {"times": [], "wall": 0.0, "reconnects": 0}
    try:
        for r in range(rounds):
            block = [mine[r::rounds] for mine in assigned]
            service_items = [[(q.query, q.company, limit) for q in b] for b in block]
            api_items = [[_request(q, limit, port, token) for q in b] for b in block]
            warmup = WARMUP if r == 0 else 5
            order = ("service", "api") if r % 2 == 0 else ("api", "service")
            for kind in order:
                items = service_items if kind == "service" else api_items
                results = pool.run(kind, items, min(warmup, len(items[0])), port)
                side = sides[kind]
                side["times"] += [t for res in results for t in res["times"]]
                side["wall"] += max(res["end"] for res in results) - min(
                    res["start"] for res in results
                )
                side["reconnects"] += sum(res["reconnects"] for res in results)
    finally:
        pool.close()
    out = {}
    for kind, side in sides.items():
        out[kind] = _summary(side["times"], side["wall"]) | {"reconnects": side["reconnects"]}
    return out


def _path(q, limit: int) -> str:
    params = {"q": q.query, "limit": limit} | ({"company": q.company} if q.company else {})
    return "/api/memories/recall?" + urlencode(params)


def _request(q, limit: int, port: int, token: str) -> bytes:
    return (
        f"GET {_path(q, limit)} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Token {token}\r\n\r\n"
    ).encode()


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
    return [
        str(bindir / "gunicorn"),
        "-c",
        str(GUNICORN_CONF),
        "--bind",
        f"127.0.0.1:{port}",
        "--log-level",
        "warning",
        "--chdir",
        str(ROOT),
    ]


def gunicorn_config() -> str:
    """The worker configuration gunicorn will run with (config file + GUNICORN_CMD_ARGS)."""
    from gunicorn.app.wsgiapp import WSGIApplication

    argv = sys.argv
    sys.argv = ["gunicorn", "-c", str(GUNICORN_CONF)]
    try:
        cfg = WSGIApplication().cfg
    finally:
        sys.argv = argv
    if cfg.worker_class_str == "sync":
        # A sync worker answers "Connection: close": each request pays its TCP handshake.
        return f"sync, {cfg.workers} workers, a new connection per request"
    return (
        f"{cfg.worker_class_str}, {cfg.workers} workers x {cfg.threads} threads, "
        f"keep-alive {cfg.keepalive}s"
    )


def start_server(kind: str, token: str, probe: str) -> tuple[subprocess.Popen, int]:
    port = _free_port()
    env = dict(os.environ)
    env.update(
        {
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
    request = (
        f"GET {probe} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token {token}\r\n\r\n"
    ).encode()
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{kind} exited with {proc.returncode} before answering")
        client = HttpClient(port)
        try:
            client.get(request)
            return proc, port
        except OSError:
            time.sleep(0.3)
        finally:
            client.close()
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


def setup_database(backend: str, name: str = PG_DB, throttle: bool = False) -> None:
    """Point Django at this bench's own database (never a real ledger) and migrate it."""
    if backend == "postgres":
        import psycopg

        with psycopg.connect(f"{PG_BASE}/postgres", autocommit=True) as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
                conn.execute(f'CREATE DATABASE "{name}"')
        os.environ["DATABASE_URL"] = f"{PG_BASE}/{name}"
    else:
        SQLITE_DIR.mkdir(parents=True, exist_ok=True)
        os.environ["DATABASE_URL"] = f"sqlite:///{SQLITE_DIR / name}.sqlite3"
    os.environ["DJANGO_SETTINGS_MODULE"] = "karani_site.settings"
    os.environ.setdefault("KARANI_MEMORY", "basic")
    # The servers and the in-process API row alike (children inherit the environment).
    os.environ["KARANI_API_RECALL_RATE"] = THROTTLED_RATE if throttle else "off"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def grow_to(size: int, *, log) -> None:
    """Import ledgergen's deterministic chunks through the service until ``size`` facts live."""
    from bench.support import ledgergen
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

    # Fresh statistics, or the planner may pick a scan for recall's queries.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


# --- main ----------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=["postgres", "sqlite"], default="sqlite")
    parser.add_argument("--size", type=int, default=10_000, help="live facts (multiple of 10k)")
    parser.add_argument("--requests", type=int, default=600, help="timed requests per level")
    parser.add_argument("--service-queries", type=int, default=600)
    parser.add_argument("--clients", default="1,2,8")
    parser.add_argument(
        "--servers", default="runserver,gunicorn", help=f"any of {', '.join(SERVERS)}"
    )
    parser.add_argument("--rounds", type=int, default=4, help="service/API blocks per level")
    parser.add_argument("--limit", type=int, default=5)
    parser.add_argument("--database", default=PG_DB, help="the bench's own database name")
    parser.add_argument(
        "--throttle", action="store_true", help="count recall requests in the shared cache"
    )
    args = parser.parse_args()
    levels = [int(c) for c in args.clients.split(",")]
    servers = [s for s in args.servers.split(",") if s]
    unknown = sorted(set(servers) - set(SERVERS))
    if unknown:
        parser.error(f"unknown server(s): {', '.join(unknown)} (any of {', '.join(SERVERS)})")

    from rich.console import Console
    from rich.table import Table

    console = Console()
    setup_database(args.backend, args.database, args.throttle)
    console.log(f"{args.backend}: growing the ledger to {args.size:,} facts")
    grow_to(args.size, log=console.log)

    from django.core.management import call_command
    from django.db import connections
    from django.test import Client

    from bench.support import ledgergen
    from memory import selectors

    out = StringIO()
    call_command("api-token", "api-bench", "--create-user", stdout=out)
    token = out.getvalue().strip()

    queries = ledgergen.queries(max(args.service_queries, args.requests) + WARMUP)
    paths = [_path(q, args.limit) for q in queries]

    console.log("service: in-process recall; then the API in-process (Django test client)")
    client = Client(HTTP_AUTHORIZATION=f"Token {token}", HTTP_HOST="127.0.0.1")

    def service_call(i: int) -> None:
        q = queries[i]
        selectors.recall(query=q.query, company=q.company, limit=args.limit)

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

    configs = {}
    if "runserver" in servers:
        configs["runserver"] = "threaded, one process, a thread per connection"
    if "gunicorn" in servers:
        configs["gunicorn"] = gunicorn_config()
    results: list[tuple[str, int, dict]] = []
    loads = []
    for kind in servers:
        proc, port = start_server(kind, token, paths[0])
        try:
            for clients in levels:
                console.log(f"{kind}: {clients} client(s), {args.requests} requests per side")
                level = run_level(
                    port, token, queries, args.limit, clients, args.requests, args.rounds
                )
                results.append((kind, clients, level))
                loads.append(os.getloadavg()[0])
        finally:
            stop_server(proc)

    load = f"{min(loads):.1f}-{max(loads):.1f}" if loads else f"{os.getloadavg()[0]:.1f}"
    table = Table(
        title=f"recall through the API vs in-process, {args.backend}, {args.size:,} facts, "
        f"limit {args.limit}, throttle {'on' if args.throttle else 'off'}; "
        f"load average {load} on {os.cpu_count()} cores",
        title_justify="left",
    )
    for col in ("path", "clients", "requests", "req/s", "p50 ms", "p95 ms"):
        table.add_column(col, justify="left" if col == "path" else "right")
    table.add_column("API p95 - service p95\n(same run, same clients)", justify="right")

    def row(name: str, clients: int, r: dict, overhead: str) -> None:
        cells = [f"{r['n']}", f"{r['rps']:.0f}", f"{r['p50']:.2f}", f"{r['p95']:.2f}"]
        table.add_row(name, str(clients), *cells, overhead)

    row("service (in-process)", 1, service, "")
    row("API, Django test client", 1, inproc, f"{inproc['p95'] - service['p95']:+.2f}")
    for kind, clients, level in results:
        table.add_section()
        row(f"  service, {clients} process(es)", clients, level["service"], "")
        overhead = level["api"]["p95"] - level["service"]["p95"]
        row(kind, clients, level["api"], f"{overhead:+.2f}")
    console.print(table)
    for kind, config in configs.items():
        console.print(f"{kind}: {config}")
    console.print(
        f"framework (DRF + Django, no HTTP server) at p95: {inproc['p95'] - service['p95']:.2f} ms"
    )
    for kind, clients, level in results:
        overhead = level["api"]["p95"] - level["service"]["p95"]
        verdict = "within" if overhead < OVERHEAD_TARGET_MS else "OVER"
        reconnects = level["api"]["reconnects"]
        console.print(
            f"{kind}, {clients} client(s): API overhead at p95 {overhead:+.2f} ms "
            f"({verdict} the {OVERHEAD_TARGET_MS:.0f} ms target)"
            + (f"; {reconnects} reconnects" if reconnects else "")
        )


if __name__ == "__main__":
    main()
