"""Recall latency at growing ledger sizes, beside a naive scan measured in the same run.

    .venv/bin/python -m bench.recall_bench --backend postgres --sizes 10000,100000,1000000
    .venv/bin/python -m bench.recall_bench --backend sqlite --sizes 10000,100000,1000000

Paths (same queries, same database, same process):
- ``recall``: ``memory.selectors.recall`` end to end (validation, ranking from the token index,
  fetching the rows) — what every caller gets.
- ``naive``: no index at all — load every live fact of the scope and rank it in Python with
  the same tokenizer and score. It returns exactly recall's results; the script checks that
  on every naive query and fails loudly otherwise. Being slow, it runs fewer queries at
  large sizes (the ``n`` column).
"""

import argparse
import statistics
import time

from bench.support import benchdb


def naive_rank(query: str, company: str | None, limit: int) -> list[tuple[int, float]]:
    """Rank by scanning: every live fact in scope, tokenised in Python."""
    from memory import keyword
    from memory import text as textmod
    from memory.models import Memory

    qtokens = set(textmod.tokens(query)[: textmod.MAX_QUERY_TOKENS])
    key = None if company is None else textmod.company_key(company)
    named = set(keyword.named_company_keys(query, key))
    scored = []
    rows = Memory.objects.for_scope(key).values_list("id", "text", "company_key", "last_seen_at")
    for mid, text, ckey, seen in rows.iterator(chunk_size=5000):
        score = len(qtokens.intersection(textmod.words(text)))
        if ckey is not None and ckey in named:
            score += keyword.COMPANY_BOOST
        if score:
            scored.append((score, seen, mid))
    scored.sort(reverse=True)
    return [(mid, float(score)) for score, _, mid in scored[:limit]]


def _timed(fn, items) -> tuple[list[float], list]:
    times, results = [], []
    for item in items:
        t0 = time.perf_counter()
        out = fn(item)
        times.append((time.perf_counter() - t0) * 1000)
        results.append(out)
    return times, results


def _pct(values: list[float], p: float) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(p) - 1]


def bench_size(size: int, args, log) -> list[dict]:
    from bench.support import ledgergen
    from memory import selectors

    benchdb.use_size(size, args.size_list)
    benchdb.grow_to(size, log=log)
    if args.build_only:
        return []
    qs = ledgergen.queries(args.queries + args.warmup)
    warm, qs = qs[: args.warmup], qs[args.warmup :]

    def recall(q):
        r = selectors.recall(query=q.query, company=q.company, limit=args.limit)
        return [(f.id, f.score) for f in r.results]

    def naive(q):
        return naive_rank(q.query, q.company, args.limit)

    for q in warm:
        recall(q)
    n_naive = args.naive_queries or max(5, min(len(qs), 1_000_000 // size))
    rows = []
    t_recall, r_recall = _timed(recall, qs)
    naive_qs = qs[:: max(1, len(qs) // n_naive)][:n_naive]
    t_naive, r_naive = _timed(naive, naive_qs)
    # Exactness: every path must return the same ids, order and scores.
    idx = {id(q): i for i, q in enumerate(qs)}
    bad = sum(r_recall[idx[id(q)]] != r for q, r in zip(naive_qs, r_naive, strict=True))
    if bad:
        raise SystemExit(f"{bad} queries ranked differently between paths at {size}")
    naive_p50 = statistics.median(t_naive)
    for path, times in (("recall", t_recall), ("naive", t_naive)):
        rows.append(
            {
                "size": size,
                "path": path,
                "n": len(times),
                "p50": statistics.median(times),
                "p95": _pct(times, 95),
                "max": max(times),
                "speedup": naive_p50 / statistics.median(times),
            }
        )
    if args.by_label:
        for label in sorted({q.label for q in qs}):
            times = [t for t, q in zip(t_recall, qs, strict=True) if q.label == label]
            rows.append(
                {
                    "size": size,
                    "path": f"recall:{label}",
                    "n": len(times),
                    "p50": statistics.median(times),
                    "p95": _pct(times, 95),
                    "max": max(times),
                    "speedup": naive_p50 / statistics.median(times),
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=["postgres", "sqlite"], required=True)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument(
        "--naive-queries",
        type=int,
        default=0,
        help="naive scans per size (default: fewer as the ledger grows)",
    )
    parser.add_argument("--limit", type=int, default=5)
    parser.add_argument("--build-only", action="store_true", help="grow the ledgers, no timing")
    parser.add_argument("--by-label", action="store_true", help="recall p50/p95 per query kind")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    args.size_list = sizes

    from rich.console import Console
    from rich.table import Table

    console = Console(width=max(Console().width, 150))
    benchdb.setup(args.backend)
    rows = []
    for size in sizes:
        console.log(f"{args.backend}: {size:,} live facts")
        rows += bench_size(size, args, console.log)
    import os

    table = Table(
        title=f"recall latency, {args.backend}, limit {args.limit} "
        f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    for col in (
        "live facts",
        "backend",
        "path",
        "n",
        "p50 ms",
        "p95 ms",
        "max ms",
        "speed-up vs naive (p50)",
    ):
        table.add_column(col, justify="right" if col not in ("backend", "path") else "left")
    for r in rows:
        table.add_row(
            f"{r['size']:,}",
            args.backend,
            r["path"],
            str(r["n"]),
            f"{r['p50']:.2f}",
            f"{r['p95']:.2f}",
            f"{r['max']:.2f}",
            f"{r['speedup']:.0f}x",
        )
    console.print(table)


if __name__ == "__main__":
    main()
