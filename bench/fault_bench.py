"""Concurrency and faults: many API clients writing at once while the database is sabotaged.

    .venv/bin/python -m bench.fault_bench                       # both backends, 16 clients
    .venv/bin/python -m bench.fault_bench --backends postgres --clients 16 --ops 60

Each backend gets a fresh ledger (``karani_fault_bench`` on PostgreSQL, a temp-dir SQLite
file), a writer's token and a real gunicorn (``deploy/gunicorn.conf.py``, throttles off).
Every client thread mixes remembers of its own facts, remembers of a few facts all clients
share (the duplicate race), corrections of its own facts and of shared ones (the chain race)
and forgets. Two rounds run per backend, on the same ledger:

- ``baseline``: no faults, the reference for latency and for the answer counts;
- ``faults``: on PostgreSQL a killer ends a random client backend of the ledger
  (``pg_terminate_backend``) every ``--kill-every`` seconds; on SQLite, which has no server
  backends, it SIGKILLs a random gunicorn worker instead (a crash mid-transaction). The
  clients go on past ``--ops`` until ``--min-faults`` faults have landed, so a fast machine
  cannot finish the round between two faults.

Afterwards the ledger is read directly and checked against every answer the clients got:
duplicates (two live rows of one fact), lost acknowledged writes (a 2xx whose row, deletion,
correction or touch is not there), forked chains (one fact superseded twice, or a superseded
fact still live), 500s and "database is locked" (answers and gunicorn's log).
"""

import argparse
import http.client
import itertools
import json
import os
import random
import secrets
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PG_BASE = os.environ.get("KARANI_BENCH_PG", "postgresql://postgres@127.0.0.1:5432")
PG_DB = "karani_fault_bench"
SHARED_TEXTS = [f"Shared fact number {n} about remote work policy" for n in range(8)]


@dataclass
class Tally:
    """What the clients were told, and what they must therefore find in the ledger."""

    statuses: Counter = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)
    errors: Counter = field(default_factory=Counter)
    remembered: dict[int, str] = field(default_factory=dict)  # id -> text (2xx)
    touches: Counter = field(default_factory=Counter)  # text -> acknowledged remembers
    corrected: list[tuple[int, int, str]] = field(default_factory=list)  # old, new, text
    forgotten: set[int] = field(default_factory=set)
    locked: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _call(port: int, token: str, method: str, path: str, body: dict | None) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        payload = json.dumps(body).encode() if body is not None else None
        headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
        conn.request(method, path, body=payload, headers=headers)
        response = conn.getresponse()
        raw = response.read()
    finally:
        conn.close()
    try:
        return response.status, json.loads(raw)
    except ValueError:
        return response.status, {"raw": raw[:200].decode(errors="replace")}


def client(
    n: int, ops: int, port: int, token: str, tally: Tally, seed: int, enough: threading.Event
) -> None:
    """``ops`` requests, and more until ``enough`` is set (the faults round's faults landed)."""
    rnd = random.Random(seed)
    mine: list[int] = []
    for j in itertools.count():
        if j >= ops and enough.is_set():
            break
        roll = rnd.random()
        with tally.lock:
            shared_ids = [i for i, t in tally.remembered.items() if t in SHARED_TEXTS]
        if roll < 0.35 or (roll < 0.75 and not mine):
            text = f"Client {n} noted fact {j} at round {seed}"
            op = ("POST", "/api/memories", {"text": text, "company": f"Acme {n % 4}"})
        elif roll < 0.6:
            text = rnd.choice(SHARED_TEXTS)
            op = ("POST", "/api/memories", {"text": text})
        elif roll < 0.75:
            old = mine.pop(rnd.randrange(len(mine)))
            text = f"Client {n} corrected fact {old} at op {j} round {seed}"
            op = ("POST", f"/api/memories/{old}/correct", {"text": text, "reason": "newer"})
        elif roll < 0.85 and shared_ids:
            old = rnd.choice(shared_ids)
            text = f"Shared fact {old} corrected by client {n} at op {j} round {seed}"
            op = ("POST", f"/api/memories/{old}/correct", {"text": text, "reason": "race"})
        elif mine:
            old = mine.pop(rnd.randrange(len(mine)))
            op = ("DELETE", f"/api/memories/{old}", {"reason": "obsolete"})
        else:
            continue
        method, path, body = op
        started = time.perf_counter()
        try:
            code, answer = _call(port, token, method, path, body)
        except (OSError, http.client.HTTPException) as exc:
            with tally.lock:
                tally.errors[type(exc).__name__] += 1
            continue
        elapsed = (time.perf_counter() - started) * 1000
        with tally.lock:
            tally.statuses[code] += 1
            tally.latencies.append(elapsed)
            if "database is locked" in json.dumps(answer):
                tally.locked += 1
            if not 200 <= code < 300:
                continue
            if method == "POST" and path == "/api/memories":
                tally.remembered[answer["id"]] = body["text"]
                tally.touches[body["text"]] += 1
                if body["text"] not in SHARED_TEXTS and answer["created"]:
                    mine.append(answer["id"])
            elif method == "POST":
                tally.corrected.append((int(path.split("/")[3]), answer["id"], body["text"]))
                if "Client" in body["text"]:
                    mine.append(answer["id"])
            else:
                tally.forgotten.add(int(path.rsplit("/", 1)[1]))


# --- the ledger, read directly -------------------------------------------------------------


def _query(backend: str, url: str, sql: str) -> list[tuple]:
    if backend == "postgres":
        import psycopg

        with psycopg.connect(url) as conn:
            return conn.execute(sql).fetchall()
    with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
        return conn.execute(sql).fetchall()


def verify(backend: str, url: str, tally: Tally) -> dict[str, int]:
    rows = {
        r[0]: r[1:]
        for r in _query(
            backend, url, "SELECT id, text, deleted_at, supersedes_id, seen_count FROM memories"
        )
    }
    live_keys = _query(
        backend,
        url,
        "SELECT fact_key FROM memories WHERE deleted_at IS NULL GROUP BY fact_key"
        " HAVING COUNT(*) > 1",
    )
    forks = _query(
        backend,
        url,
        "SELECT supersedes_id FROM memories WHERE supersedes_id IS NOT NULL"
        " GROUP BY supersedes_id HAVING COUNT(*) > 1",
    )
    live_superseded = _query(
        backend,
        url,
        "SELECT COUNT(*) FROM memories old JOIN memories new ON new.supersedes_id = old.id"
        " WHERE old.deleted_at IS NULL",
    )[0][0]
    lost = sum(1 for pk, text in tally.remembered.items() if pk not in rows or rows[pk][0] != text)
    lost += sum(1 for pk in tally.forgotten if pk not in rows or rows[pk][1] is None)
    for old, new, text in tally.corrected:
        new_row, old_row = rows.get(new), rows.get(old)
        kept = new_row is not None and new_row[0] == text and new_row[2] == old
        # ...and the corrected fact is no longer live.
        lost += not (kept and old_row is not None and old_row[1] is not None)
    # A touch counts once in seen_count: every acknowledged remember of a text is there.
    seen = Counter()
    for text, _deleted, _sup, count in rows.values():
        seen[text] += count
    lost += sum(1 for text, acked in tally.touches.items() if seen[text] < acked)
    return {
        "duplicates": len(live_keys),
        "lost": lost,
        "forks": len(forks) + live_superseded,
    }


# --- servers, databases, faults -------------------------------------------------------------


def fresh_ledger(backend: str, tmp: Path) -> str:
    if backend == "postgres":
        import psycopg

        with psycopg.connect(f"{PG_BASE}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{PG_DB}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{PG_DB}"')
        return f"{PG_BASE}/{PG_DB}"
    return f"sqlite:///{tmp / 'fault.sqlite3'}"


def karani(env: dict[str, str], *args: str) -> str:
    proc = subprocess.run(
        [str(BIN / "karani"), *args], env=env, capture_output=True, text=True, timeout=300
    )
    if proc.returncode != 0:
        raise SystemExit(f"karani {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout.strip()


def start_gunicorn(env: dict[str, str], workers: int, log: Path) -> tuple[subprocess.Popen, int]:
    port = _free_port()
    cmd = [str(BIN / "gunicorn"), "-c", str(ROOT / "deploy" / "gunicorn.conf.py")]
    cmd += ["--bind", f"127.0.0.1:{port}", "--workers", str(workers), "--error-logfile", str(log)]
    # Its own session, so stopping it signals gunicorn's workers and nothing else.
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, start_new_session=True)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"gunicorn exited with {proc.returncode}; see {log}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port
        except OSError:
            time.sleep(0.3)
    raise SystemExit("gunicorn did not listen within 90 s")


def stop(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _workers(master: int) -> list[int]:
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == master:
            pids.append(int(stat.parent.name))
    return pids


def killer(
    backend: str,
    url: str,
    master: int,
    every: float,
    done: threading.Event,
    enough: threading.Event,
    min_faults: int,
) -> int:
    """End one random backend (PostgreSQL) or gunicorn worker (SQLite) per ``every`` s; set
    ``enough`` once ``min_faults`` have landed (or as many tries found nothing to end)."""
    kills = tries = 0
    rnd = random.Random(7)
    if backend == "postgres":
        import psycopg

        admin = psycopg.connect(url, autocommit=True)
    while not done.wait(every):
        tries += 1
        if kills >= min_faults or tries >= 4 * min_faults:
            enough.set()
        if backend == "postgres":
            pids = admin.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
            ).fetchall()
            if pids:
                admin.execute("SELECT pg_terminate_backend(%s)", [rnd.choice(pids)[0]])
                kills += 1
        else:
            pids = _workers(master)
            if pids:
                try:
                    os.kill(rnd.choice(pids), signal.SIGKILL)
                    kills += 1
                except ProcessLookupError:
                    pass
    if backend == "postgres":
        admin.close()
    return kills


def warm_up(port: int, token: str, clients: int) -> None:
    """A few untimed reads from every client at once, so each worker has loaded the app."""

    def reads() -> None:
        for _ in range(3):
            _call(port, token, "GET", "/api/memories?limit=1", None)

    threads = [threading.Thread(target=reads) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def run_round(
    backend: str, url: str, port: int, master: int, args, token: str, seed: int, faults: bool
):
    tally = Tally()
    done, enough = threading.Event(), threading.Event()
    kills: list[int] = []
    fault_thread = None
    every = args.kill_every if backend == "postgres" else args.worker_kill_every
    if faults:
        fault_thread = threading.Thread(
            target=lambda: kills.append(
                killer(backend, url, master, every, done, enough, args.min_faults)
            )
        )
        fault_thread.start()
    else:
        enough.set()
    threads = [
        threading.Thread(
            target=client, args=(n, args.ops, port, token, tally, seed * 100 + n, enough)
        )
        for n in range(args.clients)
    ]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    done.set()
    if fault_thread is not None:
        fault_thread.join()
    return tally, wall, kills[0] if kills else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default="postgres,sqlite")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--ops", type=int, default=40, help="requests per client per round")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn sync workers")
    parser.add_argument(
        "--kill-every", type=float, default=0.25, help="seconds between backend kills (PostgreSQL)"
    )
    parser.add_argument(
        "--worker-kill-every",
        type=float,
        default=3.0,
        help="seconds between worker kills (SQLite); a new worker needs a second or two to boot",
    )
    parser.add_argument(
        "--min-faults", type=int, default=3, help="faults a faults round lasts for at least"
    )
    args = parser.parse_args()
    load = os.getloadavg()
    print(
        f"# {args.clients} clients x {args.ops} requests, {args.workers} gunicorn workers,"
        f" a fault every {args.kill_every}s (PostgreSQL) / {args.worker_kill_every}s (SQLite);"
        f" load {load[0]:.2f} {load[1]:.2f}, {os.cpu_count()} cores"
    )
    header = (
        f"{'backend':9} {'round':9} {'req':>5} {'req/s':>6} {'p50 ms':>7} {'p95 ms':>7} {'2xx':>5}"
        f" {'4xx':>4} {'503':>4} {'500':>4} {'conn':>5} {'kills':>5} {'dups':>4} {'lost':>4}"
        f" {'forks':>5} {'locked':>6}"
    )
    print(header, flush=True)
    for backend in args.backends.split(","):
        with tempfile.TemporaryDirectory(prefix="karani-fault-") as tmpdir:
            tmp = Path(tmpdir)
            url = fresh_ledger(backend, tmp)
            env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
            env.update(
                DATABASE_URL=url,
                KARANI_DATA_DIR=str(tmp / "data"),
                KARANI_MEMORY="basic",
                KARANI_API_WRITE_RATE="off",
                KARANI_API_RECALL_RATE="off",
                KARANI_SECRET_KEY=secrets.token_urlsafe(50),
            )
            karani(env, "migrate", "-v0")
            token = karani(env, "api-token", "fault-bench", "--create-user", "--writer")
            log = tmp / "gunicorn.log"
            proc, port = start_gunicorn(env, args.workers, log)
            try:
                warm_up(port, token, args.clients)
                for seed, name in ((1, "baseline"), (2, "faults")):
                    tally, wall, kills = run_round(
                        backend, url, port, proc.pid, args, token, seed, name == "faults"
                    )
                    # The faults round ends with a pause: gunicorn replaces killed workers.
                    time.sleep(1)
                    found = verify(backend, url, tally)
                    locked = tally.locked + log.read_text().count("database is locked")
                    lat = sorted(tally.latencies) or [0.0]
                    requests = sum(tally.statuses.values())
                    bad = sum(c for s, c in tally.statuses.items() if 400 <= s < 500)
                    print(
                        f"{backend:9} {name:9} {requests:5d} {requests / wall:6.0f}"
                        f" {statistics.median(lat):7.1f} {lat[int(0.95 * (len(lat) - 1))]:7.1f}"
                        f" {sum(c for s, c in tally.statuses.items() if 200 <= s < 300):5d}"
                        f" {bad:4d} {tally.statuses[503]:4d} {tally.statuses[500]:4d}"
                        f" {sum(tally.errors.values()):5d} {kills:5d} {found['duplicates']:4d}"
                        f" {found['lost']:4d} {found['forks']:5d} {locked:6d}",
                        flush=True,
                    )
            finally:
                stop(proc)
    print("# conn: requests that got no HTTP answer (a killed worker's connection reset)")


if __name__ == "__main__":
    main()
