"""Measuring memory's effect, measured itself: `funnel --json` at 10,000 qualifications with
outcomes, and `replay`'s own overhead per posting against a local OpenAI-compatible server.

    .venv/bin/python bench/qualify_eval_bench.py [--backend postgres|sqlite]
        [--qualifications 10000] [--replay 200] [--rounds 30]

- funnel: ``karani funnel --json`` (call_command, output discarded), timed ``--rounds`` times,
  alternating with the baseline: the funnel as it was before the holdout comparison (the
  module at git commit BASELINE_COMMIT, loaded under another name), its JSON dumped the same
  way. Goal: p95 <= 200 ms on both databases.
- replay: ``qualify.replay.run`` over ``--replay`` postings with known outcomes and two prompt
  versions, against the tests' scripted HTTP server (real HTTP on 127.0.0.1, the production
  openai client). karani's own time per answer is the wall time minus the time the client
  waited on the server; per posting it is the sum over both versions. The server's own
  round trip is shown beside it as the reference. Goal: p95 <= 10 ms per posting.

History (postings, verdicts in both arms, outcomes, 2,000 facts) is written in one
transaction that is
rolled back at the end, in the bench's own database (``karani_qualify_eval_bench`` or an
SQLite file in the temp dir).
"""

import argparse
import importlib.util
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from io import StringIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PG_BASE = os.environ.get("KARANI_BENCH_PG", "postgresql://postgres@127.0.0.1:5432")
PG_DB = "karani_qualify_eval_bench"
BASELINE_COMMIT = "de6a2aa"
FUNNEL_GOAL_MS = 200.0
REPLAY_GOAL_MS = 10.0
STAGES = ["applied", "screen", "interview", "offer", "rejected", "withdrawn"]


def setup(backend: str) -> None:
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "tests" / "qualify"))  # the scripted LLM server
    if backend == "postgres":
        import psycopg

        with psycopg.connect(f"{PG_BASE}/postgres", autocommit=True) as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [PG_DB]).fetchone():
                conn.execute(f'CREATE DATABASE "{PG_DB}"')
        os.environ["DATABASE_URL"] = f"{PG_BASE}/{PG_DB}"
    else:
        path = Path(tempfile.gettempdir()) / "karani-qualify-eval-bench.sqlite3"
        os.environ["DATABASE_URL"] = f"sqlite:///{path}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "karani_site.settings")
    os.environ["KARANI_MEMORY"] = "basic"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[94]


def baseline_funnel():
    """qualify/funnel.py as it was at BASELINE_COMMIT, imported as its own module."""
    source = subprocess.run(
        ["git", "show", f"{BASELINE_COMMIT}:qualify/funnel.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = Path(tempfile.gettempdir()) / "karani_baseline_funnel.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("karani_baseline_funnel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def history(n: int) -> list:
    """n postings with verdicts (9 in 10 memory arm), half of them followed up."""
    from django.db import connection

    from qualify import services
    from qualify.models import Outcome, Posting, Profile, Qualification

    rng = random.Random(11)
    services.set_profile(summary="Senior backend engineer, Python", preferences="remote")
    companies = [services.company_named(f"Company {i}") for i in range(300)]
    postings = Posting.objects.bulk_create(
        Posting(
            company=rng.choice(companies),
            title=f"Backend engineer {i}",
            role_category=rng.choice(["backend", "platform", "data"]),
            url=f"https://jobs.example.com/eval/{i}",
        )
        for i in range(n)
    )
    verdicts = Qualification.objects.bulk_create(
        Qualification(
            posting=p,
            verdict="qualified" if rng.random() < 0.6 else "rejected",
            fit_score=rng.randint(20, 95),
            prompt_version="qualify-v1" if i % 10 == 0 else "qualify-v2-memory",
            arm="holdout" if i % 10 == 0 else "memory",
            fact_ids=[],
        )
        for i, p in enumerate(postings)
    )
    # Facts about those companies, so replay's memory-aware prompts recall something.
    from memory import services as memory

    words = ["recruiter", "remote", "salary", "pager", "interview", "python", "team", "visa"]
    memory.import_facts(
        records=[
            (
                i + 1,
                {
                    "text": f"{' '.join(rng.choices(words, k=8))} backend engineer note {i}",
                    "kind": "note",
                    "company": f"Company {i % 300}",
                },
            )
            for i in range(2000)
        ],
        actor="bench",
    )
    outcomes = []
    for q in verdicts:
        if rng.random() < 0.5:
            for stage in rng.sample(STAGES, rng.randint(1, 3)):
                outcomes.append(Outcome(posting_id=q.posting_id, qualification=q, stage=stage))
    Outcome.objects.bulk_create(outcomes)
    with connection.cursor() as cur:
        for table in ("qualify_posting", "qualify_qualification", "qualify_outcome"):
            cur.execute(f"ANALYZE {table}")
    return [Profile.current(), len(outcomes)]


def bench_funnel(rounds: int) -> dict[str, list[float]]:
    import json

    from django.core.management import call_command

    old = baseline_funnel()
    timings: dict[str, list[float]] = {"funnel --json (now)": [], "baseline (before)": []}
    runs = [
        ("funnel --json (now)", lambda: call_command("funnel", "--json", stdout=StringIO())),
        ("baseline (before)", lambda: json.dumps(old.to_dict(old.compute()), default=str)),
    ]
    for i in range(rounds + 2):
        for label, fn in runs if i % 2 else runs[::-1]:
            t0 = time.perf_counter()
            fn()
            if i >= 2:  # two warm-up rounds
                timings[label].append((time.perf_counter() - t0) * 1000)
    return timings


def bench_replay(n: int) -> tuple[dict[str, list[float]], int]:
    from django.conf import settings
    from qualify_fakes import FakeLLM

    from qualify import llm, replay

    server = FakeLLM()
    settings.KARANI_LLM_BASE_URL = server.url
    settings.KARANI_LLM_TIMEOUT = 30.0
    try:
        run, _ = replay.start_or_resume(since=None, limit=n, agent_mode=False, new=True)
        client = llm.ChatClient(llm.LLMConfig.from_settings())
        own: list[float] = []
        waited: list[float] = []
        per_posting: dict[int, float] = {}

        def on_answer(answer, own_ms: float) -> None:
            own.append(own_ms)
            waited.append(float(answer.latency_ms))
            per_posting[answer.posting_id] = per_posting.get(answer.posting_id, 0.0) + own_ms

        replay.run(run, client=client, on_answer=on_answer)
        requests = len(server.requests)
    finally:
        server.close()
    return {
        "karani's own time per answer": own,
        "karani's own time per posting (2 versions)": list(per_posting.values()),
        "server round trip per answer (reference)": waited,
    }, requests


def _table(title: str, timings: dict[str, list[float]]):
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for column in ("path", "n", "median ms", "p95 ms", "max ms"):
        table.add_column(column, justify="left" if column == "path" else "right")
    for label, values in timings.items():
        table.add_row(
            label,
            str(len(values)),
            f"{statistics.median(values):.2f}",
            f"{_p95(values):.2f}",
            f"{max(values):.2f}",
        )
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["postgres", "sqlite"], default="postgres")
    parser.add_argument("--qualifications", type=int, default=10_000)
    parser.add_argument("--replay", type=int, default=200, help="postings replayed")
    parser.add_argument("--rounds", type=int, default=30, help="funnel timings per path")
    args = parser.parse_args()
    setup(args.backend)

    from django.db import transaction
    from rich.console import Console

    console = Console(width=120)
    load = os.getloadavg()
    with transaction.atomic():
        _profile, n_outcomes = history(args.qualifications)
        funnel_times = bench_funnel(args.rounds)
        replay_times, requests = bench_replay(args.replay)
        transaction.set_rollback(True)
    console.print(
        _table(
            f"funnel · {args.qualifications:,} qualifications, {n_outcomes:,} outcomes · "
            f"{args.backend} · load {load[0]:.1f}",
            funnel_times,
        )
    )
    p95 = _p95(funnel_times["funnel --json (now)"])
    verdict = "meets" if p95 <= FUNNEL_GOAL_MS else "MISSES"
    console.print(f"funnel --json p95 {p95:.1f} ms {verdict} the goal (<= {FUNNEL_GOAL_MS:g} ms)")
    console.print(
        _table(
            f"replay · {args.replay} postings x 2 versions, {requests} requests · {args.backend}",
            replay_times,
        )
    )
    p95 = _p95(replay_times["karani's own time per posting (2 versions)"])
    verdict = "meets" if p95 <= REPLAY_GOAL_MS else "MISSES"
    console.print(
        f"replay's own time per posting p95 {p95:.2f} ms {verdict} the goal "
        f"(<= {REPLAY_GOAL_MS:g} ms)"
    )


if __name__ == "__main__":
    main()
