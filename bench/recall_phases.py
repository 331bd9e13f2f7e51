"""Where keyword recall's time goes, per query kind: reading the term bitmaps, the numpy
scoring, the recency tie-break (by primary key or by the newest-first walk), fetching the
winning rows. Diagnostic companion to recall_bench.py, on its ledgers (build them first).

    .venv/bin/python bench/recall_phases.py --backend postgres --size 1000000
"""

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchdb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=["postgres", "sqlite"], required=True)
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    benchdb.setup(args.backend)
    benchdb.use_size(args.size, [args.size])

    import ledgergen
    from rich.console import Console
    from rich.table import Table

    from memory import bitmaps, services

    spent: dict[str, float] = defaultdict(float)
    how: dict[str, str] = {}

    def timed(name, fn, tag=None):
        def wrapper(*a, **kw):
            t0 = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                spent[name] += (time.perf_counter() - t0) * 1000
                if tag:
                    how["tie"] = tag

        return wrapper

    bitmaps._fetch = timed("read bitmaps", bitmaps._fetch)
    bitmaps._fetch_newest = timed("tie-break", bitmaps._fetch_newest, "by id")
    bitmaps._walk_newest_pg = timed("tie-break", bitmaps._walk_newest_pg, "walk")
    bitmaps._walk_newest = timed("tie-break", bitmaps._walk_newest, "walk")
    services._recalled_rows = timed("fetch rows", services._recalled_rows)

    queries = ledgergen.queries(args.queries)
    for q in queries[:30]:  # warm up
        services.recall(query=q.query, company=q.company)
    rows: dict[str, list[dict]] = defaultdict(list)
    for q in queries:
        spent.clear()
        how.clear()
        t0 = time.perf_counter()
        services.recall(query=q.query, company=q.company)
        total = (time.perf_counter() - t0) * 1000
        sample = dict(spent)
        sample["total"] = total
        sample["other (numpy, python)"] = total - sum(spent.values())
        rows[f"{q.label}/{how.get('tie', '-')}"].append(sample)

    table = Table(title=f"recall phases, {args.backend}, {benchdb.live_count():,} facts, ms")
    phases = ["total", "read bitmaps", "other (numpy, python)", "tie-break", "fetch rows"]
    table.add_column("query kind / tie-break")
    table.add_column("n", justify="right")
    for p in phases:
        table.add_column(f"{p} p50 / p95", justify="right")
    for label in sorted(rows):
        samples = rows[label]
        cells = []
        for p in phases:
            values = sorted(s.get(p, 0.0) for s in samples)
            p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
            cells.append(f"{statistics.median(values):.2f} / {p95:.2f}")
        table.add_row(label, str(len(samples)), *cells)
    Console(width=200).print(table)


if __name__ == "__main__":
    main()
