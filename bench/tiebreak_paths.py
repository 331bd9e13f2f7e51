"""Recall's two tie-break paths at one ledger size, for candidate sets of growing size.

    .venv/bin/python bench/tiebreak_paths.py [--size 1000000] [--rounds 40]

A score level's newest facts are found either by fetching every candidate through the
covering index (memories_live_seen: cost ~ candidates) or by walking live facts newest
first with the candidates as a get_bit filter (cost ~ want x ledger / candidates).
memory.bitmaps picks by count^2 <= want x universe / _WALK_RATIO_PG. This times both paths on
the same random candidate sets (live ids of the recall bench ledger), alternating, so the
crossover can be read off and compared with the one _WALK_RATIO_PG implies. PostgreSQL.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchdb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--counts", default="100,200,400,800,1600,3200,6400")
    args = parser.parse_args()
    benchdb.setup("postgres")
    benchdb.use_size(args.size, [args.size])

    import numpy as np
    from django.db import connection
    from rich.console import Console
    from rich.table import Table

    from memory import bitmaps, keyword

    with connection.cursor() as cur:
        cur.execute("SELECT id FROM memories WHERE deleted_at IS NULL")
        live = np.array([r[0] for r in cur.fetchall()], dtype=np.int64)
    hi_block = int(live.max()) // bitmaps.BLOCK_BITS
    blocks = np.arange(0, hi_block + 1, dtype=np.int64)
    universe = (hi_block + 1) * bitmaps.BLOCK_BITS
    want = 5
    rng = np.random.default_rng(11)
    table = Table(
        title=f"tie-break paths, {len(live):,} live facts, want {want}, {args.rounds} rounds"
        f" (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores), ms"
    )
    for col in ("candidates", "by id p50 / p95", "walk p50 / p95", "chosen now"):
        table.add_column(col, justify="right")
    for count in [int(c) for c in args.counts.split(",")]:
        times: dict[str, list[float]] = {"by id": [], "walk": []}
        for _ in range(args.rounds + 5):
            ids = np.sort(rng.choice(live, size=count, replace=False))
            mask = np.zeros(len(blocks) * bitmaps.BLOCK_BYTES // 8, dtype=np.uint64)
            bits = mask.view(np.uint8)
            np.bitwise_or.at(bits, ids >> 3, (1 << (ids & 7)).astype(np.uint8))
            got = {}
            for name in ("by id", "walk"):
                t0 = time.perf_counter()
                if name == "by id":
                    found = bitmaps._fetch_newest(ids, want, keyword.ROW_FIELDS)
                else:
                    found = bitmaps._walk_newest_pg(mask, blocks, want, count, keyword.ROW_FIELDS)
                times[name].append((time.perf_counter() - t0) * 1000)
                got[name] = [mid for mid, _ in found]
            if got["by id"] != got["walk"]:
                raise SystemExit(f"the paths disagree at {count} candidates")
        cells = []
        for name in ("by id", "walk"):
            values = times[name][5:]
            p95 = statistics.quantiles(values, n=100, method="inclusive")[94]
            cells.append(f"{statistics.median(values):.2f} / {p95:.2f}")
        direct = count * count <= max(
            bitmaps.DIRECT_MIN**2, want * universe // bitmaps._WALK_RATIO_PG
        )
        table.add_row(str(count), *cells, "by id" if direct else "walk")
    Console(width=150).print(table)


if __name__ == "__main__":
    main()
