"""remember() latency and single-process throughput, beside a bare insert measured in the same run.

    .venv/bin/python -m bench.remember_bench --backend postgres
    .venv/bin/python -m bench.remember_bench --backend sqlite

Runs on a copy of the 100k-fact recall bench ledger when there is one (else a fresh ledger of
10k generated facts), in its own database, so the recall ledgers stay untouched. Paths:
- ``remember (new)``: ``memory.services.remember`` of unseen facts — validation and the
  secrets scan, then one upsert (the database keeps the full-text index), one commit.
- ``remember (duplicate)``: the same facts again — validation, the upsert touching the live
  twin, and reading that row back.
- ``validate only``: ``services.validate_fact`` alone (where the CPU goes, no database).
- ``bare insert``: ``Memory.objects.create`` with precomputed fields, no validation, no
  dedupe — the floor a single-row insert costs on this database.
- ``N writers``: N separate processes each remember ``--count`` distinct new facts at once;
  throughput is all their facts over the wall time from the first start to the last finish.
  The same with ``Memory.objects.create`` of precomputed rows (one stock ORM insert each, the
  same table and indexes, no validation) is the baseline: what this machine gives any writer.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.support import benchdb


def _use_remember_db(backend: str) -> str:
    from django.core.management import call_command
    from django.db import connection

    connection.close()
    if backend == "postgres":
        name = f"{benchdb.PG_DB}_remember"
        source = f"{benchdb.PG_DB}_100k"
        with benchdb._pg_admin() as conn:
            have = {r[0] for r in conn.execute("SELECT datname FROM pg_database").fetchall()}
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            template = f' TEMPLATE "{source}"' if source in have else ""
            conn.execute(f'CREATE DATABASE "{name}"{template}')
        connection.settings_dict["NAME"] = name
    else:
        path = benchdb.CACHE / "bench-remember.sqlite3"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        source = benchdb.CACHE / "bench-100k.sqlite3"
        if source.exists():
            shutil.copyfile(source, path)
        connection.settings_dict["NAME"] = str(path)
    call_command("migrate", verbosity=0)
    if benchdb.live_count() == 0:
        benchdb.grow_to(10_000, log=lambda *_: None)
    return f"{benchdb.live_count():,} live facts"


def _pct(values: list[float], p: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1]


def _bare_create(c) -> None:
    """One stock ORM insert of a validated fact: no dedupe, no secrets scan."""
    from memory.models import Memory

    Memory.all_objects.create(
        text=c.text, kind=c.kind, company=c.company, company_key=c.company_key,
        source=c.source, fact_key=c.fact_key,
    )  # fmt: skip


def _cpu_seconds(pid: int) -> float:
    """A process's CPU time so far (user + system), from /proc: any process of this machine."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _worker(path: str, chunk: int, count: int, start_at: float) -> None:
    """One writer process: write ``count`` facts of its own chunk, report its timings and the
    CPU it and its PostgreSQL backend spent meanwhile."""
    import django

    django.setup()
    from django.db import connection

    from bench.support import ledgergen
    from memory import services

    facts = ledgergen.chunk(chunk)[:count]
    services.remember(text=f"warm-up {path} {chunk}")  # connect before the start line
    if path == "bare":
        # Validated before the start line: the baseline times the insert alone.
        clean = [services.validate_fact(text=f.text, kind=f.kind, company=f.company) for f in facts]
    backend = None
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            backend = cursor.fetchone()[0]
    while time.time() < start_at:
        time.sleep(0.001)
    t0, cpu0 = time.time(), time.process_time()
    backend0 = _cpu_seconds(backend) if backend else 0.0
    if path == "bare":
        for c in clean:
            _bare_create(c)
    else:
        for f in facts:
            services.remember(text=f.text, kind=f.kind, company=f.company)
    cpu = time.process_time() - cpu0 + (_cpu_seconds(backend) - backend0 if backend else 0.0)
    print(json.dumps({"start": t0, "end": time.time(), "n": len(facts), "cpu": cpu}))


def _writers(path: str, n: int, count: int, first_chunk: int) -> tuple[float, float]:
    """Facts per second with ``n`` writer processes running at once, and the cores they kept
    busy (the writers' and their backends' CPU over the wall time)."""
    from django.db import connection

    env = dict(os.environ)
    if connection.vendor == "postgresql":
        env["DATABASE_URL"] = f"{benchdb.PG_BASE}/{connection.settings_dict['NAME']}"
    else:
        env["DATABASE_URL"] = f"sqlite:///{connection.settings_dict['NAME']}"
    start_at = time.time() + 3 + n  # every process is up and connected by then
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench.remember_bench",
                "--worker",
                path,
                str(first_chunk + i),
                str(count),
                str(start_at),
            ],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(n)
    ]
    reports = []
    for proc in procs:
        out, _ = proc.communicate()
        if proc.returncode:
            raise SystemExit(f"writer process failed (exit {proc.returncode})")
        reports.append(json.loads(out.strip().splitlines()[-1]))
    wall = max(r["end"] for r in reports) - min(r["start"] for r in reports)
    return sum(r["n"] for r in reports) / wall, sum(r["cpu"] for r in reports) / wall


def main() -> None:
    if len(sys.argv) == 6 and sys.argv[1] == "--worker":
        _worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=["postgres", "sqlite"], required=True)
    parser.add_argument("--count", type=int, default=300, help="facts per path")
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--writers", default="1,4", help="concurrent writer processes to compare")
    args = parser.parse_args()

    from rich.console import Console
    from rich.table import Table

    console = Console(width=max(Console().width, 150))
    benchdb.setup(args.backend)
    ledger = _use_remember_db(args.backend)

    from bench.support import ledgergen
    from memory import services

    # Chunk 900 is never part of a bench ledger (those stop at 1M = chunk 99).
    facts = ledgergen.chunk(900)[: args.warmup + args.count]
    warm, facts = facts[: args.warmup], facts[args.warmup :]
    for f in warm:
        services.remember(text=f.text, kind=f.kind, company=f.company)

    def timed(fn) -> list[float]:
        out = []
        for f in facts:
            t0 = time.perf_counter()
            fn(f)
            out.append((time.perf_counter() - t0) * 1000)
        return out

    results = {}
    results["validate only"] = timed(
        lambda f: services.validate_fact(text=f.text, kind=f.kind, company=f.company)
    )
    results["remember (new)"] = timed(
        lambda f: services.remember(text=f.text, kind=f.kind, company=f.company)
    )
    results["remember (duplicate)"] = timed(
        lambda f: services.remember(text=f.text, kind=f.kind, company=f.company)
    )
    clean = [services.validate_fact(text=f.text + " bare", kind=f.kind) for f in facts]
    it = iter(clean)

    results["bare insert (baseline)"] = timed(lambda _f: _bare_create(next(it)))
    table = Table(
        title=f"remember, {args.backend}, {ledger}, {args.count} calls per path "
        f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    for col in ("path", "p50 ms", "p95 ms", "throughput / s (1 process)"):
        table.add_column(col, justify="left" if col == "path" else "right")
    for path, times in results.items():
        table.add_row(
            path,
            f"{statistics.median(times):.2f}",
            f"{_pct(times, 95):.2f}",
            f"{1000 * len(times) / sum(times):,.0f}",
        )
    console.print(table)

    # Distinct chunks per run and per writer, none of them part of a bench ledger.
    counts = [int(n) for n in args.writers.split(",") if n]
    paths = {"remember": "remember (new)", "bare": "bare insert (baseline)"}
    rates = {
        (path, n): _writers(path, n, args.count, 910 + 10 * i + 100 * j)
        for i, n in enumerate(counts)
        for j, path in enumerate(paths)
    }
    table = Table(title=f"concurrent writers of distinct new facts, {args.backend}")
    table.add_column("writers", justify="right")
    for label in paths.values():
        table.add_column(f"{label}, facts / s (vs 1 writer)", justify="right")
        table.add_column("cores busy", justify="right")
    for n in counts:
        cells = []
        for path in paths:
            (rate, busy), one = rates[path, n], rates.get((path, 1))
            cells.append(f"{rate:,.0f} ({rate / one[0]:.2f}x)" if one else f"{rate:,.0f}")
            cells.append(f"{busy:.2f}")
        table.add_row(str(n), *cells)
    console.print(table)
    print(
        f"cores busy: the writers' and their backends' CPU over the wall time, of the machine's "
        f"{os.cpu_count()}; n writers can reach at most cores / (one writer's cores busy) x one"
    )


if __name__ == "__main__":
    main()
