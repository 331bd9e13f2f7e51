"""remember() latency and single-process throughput, beside a bare insert measured in the same run.

    .venv/bin/python bench/remember_bench.py --backend postgres
    .venv/bin/python bench/remember_bench.py --backend sqlite

Runs on a copy of the 100k-fact recall bench ledger when there is one (else a fresh ledger of
10k generated facts), in its own database, so the recall ledgers stay untouched. Paths:
- ``remember (new)``: ``memory.services.remember`` of unseen facts — validation and the
  secrets scan, the dedupe check, the insert, the token rows and term bitmaps, one commit.
- ``remember (duplicate)``: the same facts again — validation, then a touch.
- ``validate only``: ``services.validate_fact`` alone (where the CPU goes, no database).
- ``bare insert``: ``Memory.objects.create`` with precomputed fields, no validation, no
  dedupe, no index — the floor a single-row insert costs on this database.
"""

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchdb


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=["postgres", "sqlite"], required=True)
    parser.add_argument("--count", type=int, default=300, help="facts per path")
    parser.add_argument("--warmup", type=int, default=30)
    args = parser.parse_args()

    from rich.console import Console
    from rich.table import Table

    console = Console(width=max(Console().width, 150))
    benchdb.setup(args.backend)
    ledger = _use_remember_db(args.backend)

    import ledgergen

    from memory import services
    from memory.models import Memory

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

    def bare(_f) -> None:
        c = next(it)
        Memory.all_objects.create(
            text=c.text, kind=c.kind, company=c.company, company_key=c.company_key,
            source=c.source, fact_key=c.fact_key,
        )  # fmt: skip

    results["bare insert (baseline)"] = timed(bare)
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


if __name__ == "__main__":
    main()
