"""Whole-process time of `karani recall` against a bare `django.setup()`, side by side.

Agents shell out to `karani recall` many times; what they pay is the process: interpreter
start, Django set-up, the command, the query, the output. The baseline is a process that
only runs `django.setup()` with the same settings, measured in the same run, interleaved
with the commands, so machine load hits every row alike.

usage: .venv/bin/python -m bench.cli_startup [--runs 20]
Prints a table (median and p95 in ms, and the ratio of medians to the baseline) and the
load average before and after. Runs on a fresh SQLite ledger with the demo facts, in basic
mode, in a temporary KARANI_DATA_DIR.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SETUP_ONLY = (
    "import os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'karani_site.settings'); "
    "import django; django.setup()"
)


def cases() -> dict[str, list[str]]:
    karani = str(BIN / "karani")
    return {
        "django.setup() only (baseline)": [sys.executable, "-c", SETUP_ONLY],
        "karani recall (table)": [karani, "recall", "how fast do recruiters reply?"],
        "karani recall --json": [karani, "recall", "how fast do recruiters reply?", "--json"],
        "karani recall, no match": [karani, "recall", "zeppelins"],
        "karani --version": [karani, "--version"],
    }


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs of each case (default 20)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="karani-cli-bench-") as data:
        env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
        env.update(KARANI_DATA_DIR=data, KARANI_MEMORY="basic")
        env.pop("DATABASE_URL", None)
        karani = str(BIN / "karani")
        for setup in (["migrate", "-v0"], ["import", str(REPO / "scripts" / "demo.jsonl")]):
            subprocess.run([karani, *setup], env=env, check=True, capture_output=True)

        load_before = os.getloadavg()
        timings: dict[str, list[float]] = {name: [] for name in cases()}
        for _ in range(args.runs):
            # Interleaved: each round runs every case once, so load drifts hit them alike.
            for name, command in cases().items():
                started = time.perf_counter()
                subprocess.run(command, env=env, check=True, capture_output=True, cwd=data)
                timings[name].append((time.perf_counter() - started) * 1000)
        load_after = os.getloadavg()

    base = statistics.median(timings["django.setup() only (baseline)"])
    print(f"karani CLI whole-process time, {args.runs} interleaved runs each (SQLite, basic)")
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (2 cores)")
    print()
    print(f"| {'case':<32} | {'median ms':>9} | {'p95 ms':>7} | {'x baseline':>10} |")
    print(f"|{'-' * 34}|{'-' * 11}|{'-' * 9}|{'-' * 12}|")
    for name, values in timings.items():
        median = statistics.median(values)
        print(f"| {name:<32} | {median:>9.0f} | {p95(values):>7.0f} | {median / base:>10.2f} |")


if __name__ == "__main__":
    main()
