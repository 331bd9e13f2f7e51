"""The outside pipeline's loop on gunicorn: `GET /api/context` beside an in-process recall of
the same query, and `POST /api/decisions` (new and repeated), on a ledger of 10k facts.

    .venv/bin/python -m bench.integration_bench --backend postgres [--size 10000]
    .venv/bin/python -m bench.integration_bench --backend sqlite [--requests 300]

One run, one ledger (api_bench's: its own database, ``--database``, grown with ledgergen's
facts), one gunicorn with the deployed configuration (deploy/gunicorn.conf.py), throttling
off. One client, one request at a time, each on a new connection (a sync worker closes it),
as a pipeline script calls the API.

- ``recall (in-process)``: ``memory.selectors.recall`` with the query and scope the context
  builder derives from the same posting (company and title): the baseline.
- ``GET /api/context``: the same postings over HTTP, in blocks alternating with the baseline,
  so background load on a shared machine hits both alike. Goal: p95 at most 15 ms above the
  baseline's p95.
- ``POST /api/decisions``: a decision on a new posting each time (posting, decision event and
  verdict fact written), then the same decisions again (repeats: nothing written). Goal: p50
  of new decisions at most 10 ms.
- ``POST /api/context``: bench/data/decisions.json's postings, each description grown past
  3,000 characters, beside ``qualify.context.select`` on the same posting in process (the
  baseline). Goal: p95 at most 15 ms above the baseline's p95.
- Two HTTP baselines on the same server, in the same blocks: ``GET /api/memories/recall``
  with the context's query and scope, and ``POST /api/memories`` (one fact written), so a
  loaded machine's cost of HTTP itself shows beside the goals.
"""

import argparse
import http.client
import json
import os
import statistics
import time
from io import StringIO
from pathlib import Path
from urllib.parse import urlencode

from bench import api_bench

CONTEXT_GOAL_MS = 15.0
DECISION_GOAL_MS = 10.0
ROUNDS = 4
WARMUP = 20


def _pct(values: list[float], p: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1]


def _request(port: int, method: str, path: str, token: str, body: dict | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Token {token}"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    t0 = time.perf_counter()
    conn.request(method, path, body=data, headers=headers)
    response = conn.getresponse()
    raw = response.read()
    elapsed = (time.perf_counter() - t0) * 1000
    conn.close()
    return response.status, raw, elapsed


def long_postings() -> list[dict]:
    """The decision set's postings, each description grown past 3,000 characters with the
    next ones'."""
    data = json.loads((Path(__file__).resolve().parent / "data" / "decisions.json").read_text())
    fields = ("company", "title", "role_category", "location", "remote", "salary")
    postings = data["postings"]
    out = []
    for i, posting in enumerate(postings):
        grown, j = posting["description"], i + 1
        while len(grown) < 3000:
            grown += "\n\n" + postings[j % len(postings)]["description"]
            j += 1
        # The remote policy goes as the board wrote it ("Hybrid (2 days)").
        out.append({**{k: posting[k] for k in fields}, "description": grown[:3200]})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=["postgres", "sqlite"], default="sqlite")
    parser.add_argument("--size", type=int, default=10_000, help="live facts (multiple of 10k)")
    parser.add_argument("--requests", type=int, default=400, help="timed context requests")
    parser.add_argument("--decisions", type=int, default=200, help="timed new decisions")
    parser.add_argument("--database", default="karani_integration_bench")
    args = parser.parse_args()

    from rich.console import Console
    from rich.table import Table

    console = Console()
    os.environ["KARANI_API_WRITE_RATE"] = "off"
    api_bench.setup_database(args.backend, args.database)
    console.log(f"{args.backend}: growing the ledger to {args.size:,} facts")
    api_bench.grow_to(args.size, log=console.log)

    from django.core.management import call_command

    from bench.support import ledgergen
    from memory import selectors
    from qualify.context import Subject, recall_query, select
    from qualify.models import Qualification

    out = StringIO()
    call_command("api-token", "integration-bench", "--create-user", "--writer", stdout=out)
    token = out.getvalue().strip()
    names = ledgergen.companies()
    postings = [
        {"company": q.company or names[i % len(names)], "title": q.query}
        for i, q in enumerate(ledgergen.queries(args.requests + WARMUP))
    ]

    def recall_ms(p: dict) -> float:
        query = recall_query(Subject(company=p["company"], title=p["title"]))
        t0 = time.perf_counter()
        selectors.recall(query=query, company=p["company"], limit=5)
        return (time.perf_counter() - t0) * 1000

    proc, port = api_bench.start_server("gunicorn", token, "/api/memories/recall?q=remote")
    try:

        def context_ms(p: dict) -> float:
            status, raw, ms = _request(port, "GET", "/api/context?" + urlencode(p), token)
            if status != 200 or b'"block"' not in raw:
                raise SystemExit(f"GET /api/context -> {status}: {raw[:200]!r}")
            return ms

        def http_recall_ms(p: dict) -> float:
            query = recall_query(Subject(company=p["company"], title=p["title"]))
            params = urlencode({"q": query, "company": p["company"], "limit": 5})
            status, raw, ms = _request(port, "GET", "/api/memories/recall?" + params, token)
            if status != 200:
                raise SystemExit(f"GET /api/memories/recall -> {status}: {raw[:200]!r}")
            return ms

        for p in postings[:WARMUP]:
            recall_ms(p), context_ms(p), http_recall_ms(p)
        timed = postings[WARMUP:]
        block = max(1, len(timed) // ROUNDS)
        base, api, http_base = [], [], []
        for start in range(0, len(timed), block):
            chunk = timed[start : start + block]
            base += [recall_ms(p) for p in chunk]
            api += [context_ms(p) for p in chunk]
            http_base += [http_recall_ms(p) for p in chunk]

        def select_ms(p: dict) -> float:
            t0 = time.perf_counter()
            select(Subject(**p))
            return (time.perf_counter() - t0) * 1000

        def post_context_ms(p: dict) -> float:
            status, raw, ms = _request(port, "POST", "/api/context", token, p)
            if status != 200 or b'"block"' not in raw:
                raise SystemExit(f"POST /api/context -> {status}: {raw[:200]!r}")
            return ms

        long = long_postings()
        for p in long[:5]:
            select_ms(p), post_context_ms(p)
        long_base, long_api = [], []
        for _ in range(ROUNDS):
            long_base += [select_ms(p) for p in long]
            long_api += [post_context_ms(p) for p in long]

        run = int(time.time())
        bodies = [
            {
                "external_id": f"https://jobs.example.com/bench/{run}/{i}",
                "company": names[i % len(names)],
                "title": f"Engineer {i}",
                "verdict": "qualified" if i % 3 else "rejected",
                "fit_score": i % 101,
                "prompt_version": "bench-v1",
            }
            for i in range(args.decisions + WARMUP)
        ]

        def decide_ms(body: dict, expect: int) -> float:
            status, raw, ms = _request(port, "POST", "/api/decisions", token, body)
            if status != expect:
                raise SystemExit(f"POST /api/decisions -> {status}: {raw[:200]!r}")
            return ms

        def remember_ms(i: int) -> float:
            fact = {"text": f"Bench run {run} fact {i}: remote platform work", "company": "Acme"}
            status, raw, ms = _request(port, "POST", "/api/memories", token, fact)
            if status != 201:
                raise SystemExit(f"POST /api/memories -> {status}: {raw[:200]!r}")
            return ms

        new, remembered = [], []
        for i, body in enumerate(bodies):  # interleaved, so load hits both alike
            new.append(decide_ms(body, 201))
            remembered.append(remember_ms(i))
        repeat = [decide_ms(b, 200) for b in bodies]
        prefix = f"https://jobs.example.com/bench/{run}/"
        written = Qualification.objects.filter(posting__external_id__startswith=prefix).count()
    finally:
        api_bench.stop_server(proc)

    new, repeat, remembered = new[WARMUP:], repeat[WARMUP:], remembered[WARMUP:]
    table = Table(
        title=f"{args.backend}, {args.size:,} facts, gunicorn ({api_bench.gunicorn_config()})"
    )
    for column in ("measure", "n", "p50 ms", "p95 ms", "goal", "met"):
        table.add_column(column, justify="left" if column in ("measure", "goal") else "right")
    gap = _pct(api, 95) - _pct(base, 95)
    long_gap = _pct(long_api, 95) - _pct(long_base, 95)
    rows = [
        ("recall (in-process, baseline)", base, "", ""),
        (
            "GET /api/context",
            api,
            f"p95 <= baseline + {CONTEXT_GOAL_MS:g}",
            "yes" if gap <= CONTEXT_GOAL_MS else "NO",
        ),
        (
            "POST /api/decisions (new)",
            new,
            f"p50 <= {DECISION_GOAL_MS:g}",
            "yes" if statistics.median(new) <= DECISION_GOAL_MS else "NO",
        ),
        ("POST /api/decisions (repeat)", repeat, "", ""),
        ("context in process, 3,000-char posting (baseline)", long_base, "", ""),
        (
            "POST /api/context, 3,000-char posting",
            long_api,
            f"p95 <= baseline + {CONTEXT_GOAL_MS:g}",
            "yes" if long_gap <= CONTEXT_GOAL_MS else "NO",
        ),
        ("GET /api/memories/recall (same query)", http_base, "HTTP baseline", ""),
        ("POST /api/memories (remember)", remembered, "HTTP baseline", ""),
    ]
    for name, values, goal, met in rows:
        table.add_row(
            name,
            str(len(values)),
            f"{statistics.median(values):.2f}",
            f"{_pct(values, 95):.2f}",
            goal,
            met,
        )
    console.print(table)
    console.print(
        f"context p95 - recall p95: {gap:.2f} ms; POST context p95 - in-process p95:"
        f" {long_gap:.2f} ms; decisions this run wrote: {written:,}"
    )


if __name__ == "__main__":
    main()
