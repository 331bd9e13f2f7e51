"""remember() latency in mem0 mode (verbatim, no LLM), beside basic mode in the same run.

    .venv/bin/python -m bench.semantic_remember [--ledger sqlite|postgres] [--count 200]

Paths timed per fact (ms): ``remember, basic`` (the ledger write alone: the baseline),
``remember, mem0, indexed inline`` (KARANI_INDEX_IN_BACKGROUND off: the ledger write, then the
fact embedded and inserted into the index after commit, memory.semantic.sync), ``remember,
mem0`` (the default: the write returns after commit and memory.background's worker indexes),
and ``payload`` (memory.semantic.store.payload alone, what every vector's metadata costs to
build). Facts come from bench/ledgergen.py, a fresh set per path, so no write is a duplicate.
Databases: ``karani_sem_remember_ledger`` (PostgreSQL, dropped and recreated each run) or SQLite
under the temp dir, and ``karani_sem_remember_vec``.
"""

import argparse
import os
import time

# Its own databases: semantic_env starts the ledger afresh, and the shared bench ledger is
# another bench's (read when semantic_env is imported).
os.environ.setdefault("KARANI_BENCH_LEDGER_DB", "karani_sem_remember_ledger")
os.environ.setdefault("KARANI_BENCH_VECTOR_DB", "karani_sem_remember_vec")
from bench.support import semantic_env


def timed(calls: list) -> list[float]:
    out = []
    for call in calls:
        started = time.perf_counter()
        call()
        out.append((time.perf_counter() - started) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ledger", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--count", type=int, default=200, help="facts per path")
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    semantic_env.setup(ledger=args.ledger, collection="bench_remember")

    from django.test import override_settings

    from bench.support import ledgergen
    from memory import background, services
    from memory.models import Memory
    from memory.semantic import client as clientmod
    from memory.semantic import store

    client = clientmod.get()
    client.store.reset()
    n = args.count + args.warmup
    facts = ledgergen.chunk(0, seed=11)[: 3 * n]
    basic, inline, mem0 = facts[:n], facts[n : 2 * n], facts[2 * n :]

    def remember(fact: ledgergen.FakeFact) -> None:
        services.remember(text=fact.text, kind=fact.kind, company=fact.company)

    with override_settings(KARANI_MEMORY="basic"):
        rows = {"remember, basic (baseline)": timed([lambda f=f: remember(f) for f in basic])}
    with override_settings(KARANI_INDEX_IN_BACKGROUND=False):
        rows["remember, mem0, indexed inline"] = timed([lambda f=f: remember(f) for f in inline])
    rows["remember, mem0 (worker thread indexes)"] = timed([lambda f=f: remember(f) for f in mem0])
    started = time.perf_counter()
    background.flush()
    drained = (time.perf_counter() - started) * 1000
    sample = list(Memory.objects.order_by("-pk")[: 2 * n])
    rows["payload (per vector)"] = timed([lambda m=m: store.payload(m) for m in sample])
    pending = sum(m.indexed_at is None for m in sample)

    table = []
    for name, values in rows.items():
        kept = values[args.warmup :]
        table.append(
            [
                name,
                len(kept),
                f"{semantic_env.pct(kept, 50):.2f}",
                f"{semantic_env.pct(kept, 95):.2f}",
            ]
        )
    print(
        f"ledger: {args.ledger}; the worker finished {drained:.0f} ms after the last write;"
        f" rows left pending in mem0 mode: {pending}"
    )
    print(semantic_env.table(["path (ms per fact)", "n", "p50", "p95"], table))


if __name__ == "__main__":
    main()
