"""What `karani compact` buys: the keyword index's read, term-clustered vs block-ordered.

    .venv/bin/python bench/bitmap_layout.py [--size 1000000] [--queries 300]

On a recall bench ledger (PostgreSQL, built by recall_bench.py), two copies of the bitmap
table: rows in (block, term) order, as a ledger grows them (each block's rows are born
together), and in (term, block) order, as `karani compact` leaves them. Each query's
terms (five of the 60 terms with the most rows, as the `common` recall queries pick) are
read from both copies alternately, with the binary cursor recall uses, so load hits both
alike. The copies are dropped afterwards.
"""

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchdb

LAYOUTS = {"block order (as grown)": "block, term", "term order (compacted)": "term, block"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    import psycopg
    from rich.console import Console
    from rich.table import Table

    dsn = f"{benchdb.PG_BASE}/{benchdb.PG_DB}_{benchdb._label(args.size)}"
    conn = psycopg.connect(dsn, autocommit=True)
    tables = {}
    for i, (name, order) in enumerate(LAYOUTS.items()):
        table = f"karani_layout_bench_{i}"
        conn.execute(f"DROP TABLE IF EXISTS {table}")
        conn.execute(
            f"CREATE TABLE {table} AS SELECT term, block, bits FROM memory_term_bitmaps"
            f" ORDER BY {order}"
        )
        conn.execute(f"CREATE UNIQUE INDEX ON {table} (term, block)")
        conn.execute(f"VACUUM ANALYZE {table}")
        tables[name] = table
    try:
        terms = [
            t
            for (t,) in conn.execute(
                "SELECT term FROM memory_term_bitmaps GROUP BY term ORDER BY count(*) DESC, term"
                " LIMIT 60"
            ).fetchall()
        ]
        rng = random.Random(7)
        picks = [rng.sample(terms, 5) for _ in range(args.queries + 30)]
        times: dict[str, list[float]] = {name: [] for name in tables}
        for n, pick in enumerate(picks):
            for name, table in tables.items():
                cur = conn.cursor(binary=True)
                t0 = time.perf_counter()
                cur.execute(f"SELECT term, block, bits FROM {table} WHERE term = ANY(%s)", [pick])
                rows = cur.fetchall()
                if n >= 30:  # the first 30 warm both copies
                    times[name].append((time.perf_counter() - t0) * 1000)
        table = Table(
            title=f"bitmap read, 5 common terms, {args.size:,} facts ({len(rows)} rows last query;"
            f" load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
        )
        for col in ("layout", "n", "p50 ms", "p95 ms"):
            table.add_column(col, justify="left" if col == "layout" else "right")
        for name, values in times.items():
            p95 = statistics.quantiles(values, n=100, method="inclusive")[94]
            table.add_row(name, str(len(values)), f"{statistics.median(values):.2f}", f"{p95:.2f}")
        Console(width=150).print(table)
    finally:
        for table in tables.values():
            conn.execute(f"DROP TABLE IF EXISTS {table}")


if __name__ == "__main__":
    main()
