"""Measuring memory's effect, measured itself: `funnel --json` at 10,000 qualifications with
outcomes, and `replay`'s own overhead per posting against a local OpenAI-compatible server.

    .venv/bin/python -m bench.qualify_eval_bench [--backend postgres|sqlite]
        [--database NAME] [--qualifications 10000] [--replay 200] [--model-ms 100]
        [--rounds 30]

- funnel (skipped with ``--rounds 0``): ``karani funnel --json`` (call_command, output
  discarded), timed ``--rounds`` times, alternating with the baseline: the funnel as it was
  before the holdout comparison (the module at git commit BASELINE_COMMIT, loaded under
  another name), its JSON dumped the same way. Goal: p95 <= 200 ms on both databases.
- replay: ``qualify.replay.run`` over ``--replay`` postings with known outcomes and two prompt
  versions, against the tests' scripted HTTP server run in a child process as a local model
  server with one slot: it serves one request at a time, for ``--model-ms`` each, and queues
  the rest. The server timestamps each job its slot does; the slot's idle time between jobs
  is what karani adds to the run: per posting, the idle time before its two jobs (the first
  also carries the run's start). Goal: p95 <= 10 ms per posting. Beside it, karani's work per
  posting, whether or not the endpoint waits for it: ``prompt_for`` (recall included) and the
  answers' inserts, timed around those calls; and the CPU time of ``ChatClient.complete`` per
  request in the thread that calls it (the request built and sent, the answer parsed).

The bench's database (``--database``, an SQLite file of that name in the temp dir) is made
afresh each run; answers are committed as ``replay`` commits them.
"""

import argparse
import importlib.util
import multiprocessing
import os
import random
import statistics
import subprocess
import tempfile
import threading
import time
from io import StringIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PG_BASE = os.environ.get("KARANI_BENCH_PG", "postgresql://postgres@127.0.0.1:5432")
BASELINE_COMMIT = "de6a2aa"
FUNNEL_GOAL_MS = 200.0
REPLAY_GOAL_MS = 10.0
STAGES = ["applied", "screen", "interview", "offer", "rejected", "withdrawn"]


def setup(backend: str, database: str) -> None:
    if backend == "postgres":
        import psycopg

        with psycopg.connect(f"{PG_BASE}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{database}"')
            conn.execute(f'CREATE DATABASE "{database}"')
        os.environ["DATABASE_URL"] = f"{PG_BASE}/{database}"
    else:
        path = Path(tempfile.gettempdir()) / f"{database}.sqlite3"
        path.unlink(missing_ok=True)
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
        for table in ("qualify_posting", "qualify_qualification", "qualify_outcome", "memories"):
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


def serve(conn, model_ms: float) -> None:
    """The scripted server, in a child process, modelling a local server with one slot (as
    llama.cpp's with ``--parallel 1``): requests are read and answered on their connections'
    threads, the model's work (``model_ms``) is done by one slot at a time, and a request that
    arrives while the slot is busy waits for it. Sends its URL, serves until told to stop,
    then sends back (start, end) of every job the slot did."""
    from tests.qualify.qualify_fakes import FakeLLM, criteria

    fake, slot, spans = FakeLLM(), threading.Lock(), []

    def respond(body) -> dict:
        with slot:
            start = time.perf_counter()  # CLOCK_MONOTONIC: comparable across processes
            time.sleep(model_ms / 1000)
            spans.append((start, time.perf_counter()))
        return criteria()

    fake.responder = respond
    handler = fake.server.RequestHandlerClass
    # Keep-alive and no Nagle delay, as llama.cpp's and vLLM's servers answer.
    handler.protocol_version, handler.disable_nagle_algorithm = "HTTP/1.1", True
    conn.send(fake.url)
    conn.recv()
    fake.close()
    conn.send(sorted(spans))


def bench_replay(n: int, model_ms: float) -> tuple[dict[str, list[float]], float]:
    from django.conf import settings

    from qualify import llm, replay
    from qualify.models import ReplayAnswer

    own: dict[int, float] = {}

    def timed(fn):  # karani's work per posting: its prompts prepared, its answers written
        def call(*args, **kwargs):
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                pk = kwargs["posting"].pk
                own[pk] = own.get(pk, 0.0) + (time.perf_counter() - started) * 1000

        return call

    replay.prompt_for = timed(replay.prompt_for)
    client_cpu, complete = [], llm.ChatClient.complete

    def cpu_timed(self, *args, **kwargs):  # the client's own CPU: request built, answer parsed
        started = time.thread_time()
        try:
            return complete(self, *args, **kwargs)
        finally:
            client_cpu.append((time.thread_time() - started) * 1000)

    llm.ChatClient.complete = cpu_timed
    ReplayAnswer.objects.create = timed(ReplayAnswer.objects.create)
    parent, child = multiprocessing.get_context("fork").Pipe()
    server = multiprocessing.get_context("fork").Process(target=serve, args=(child, model_ms))
    server.start()
    settings.KARANI_LLM_BASE_URL = parent.recv()
    settings.KARANI_LLM_TIMEOUT = 30.0
    try:
        run, _ = replay.start_or_resume(since=None, limit=n, agent_mode=False, new=True)
        client = llm.ChatClient(llm.LLMConfig.from_settings())
        started = time.perf_counter()
        replay.run(run, client=client)
        finished = time.perf_counter()
    finally:
        parent.send("stop")
        spans = parent.recv()
        server.join()
    ends = [started] + [end for _, end in spans[:-1]]
    idle = [(start - before) * 1000 for (start, _), before in zip(spans, ends, strict=True)]
    busy = sum(end - start for start, end in spans) / (finished - started)
    return {
        "endpoint idle per posting (2 requests)": [
            a + b for a, b in zip(idle[::2], idle[1::2], strict=True)
        ],
        "endpoint idle per request (its slot between jobs)": idle,
        "karani's work per posting (prompts incl. recall, writes)": list(own.values()),
        "the LLM client's CPU per request (its thread)": client_cpu,
        "the slot's time per job (scripted)": [(e - s) * 1000 for s, e in spans],
    }, busy


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
    parser.add_argument("--database", default="karani_qualify_eval_bench", help="made afresh")
    parser.add_argument("--qualifications", type=int, default=10_000)
    parser.add_argument("--replay", type=int, default=200, help="postings replayed")
    parser.add_argument("--model-ms", type=float, default=100.0, help="endpoint's time per answer")
    parser.add_argument("--rounds", type=int, default=30, help="funnel timings per path")
    args = parser.parse_args()
    setup(args.backend, args.database)

    from django.db import transaction
    from rich.console import Console

    console = Console(width=120)
    with transaction.atomic():
        _profile, n_outcomes = history(args.qualifications)

    def report(title: str, times: dict[str, list[float]], path: str, goal: float) -> str:
        """Print the table; the goal's path p95 and whether it meets the goal."""
        console.print(_table(title, times))
        p95 = _p95(times[path])
        return f"p95 {p95:.2f} ms {'meets' if p95 <= goal else 'MISSES'} the goal (<= {goal:g} ms)"

    if args.rounds:
        load = os.getloadavg()[0]
        funnel_times = bench_funnel(args.rounds)
        title = (
            f"funnel · {args.qualifications:,} qualifications, {n_outcomes:,} outcomes · "
            f"{args.backend} · load {load:.1f}"
        )
        console.print(
            "funnel --json " + report(title, funnel_times, "funnel --json (now)", FUNNEL_GOAL_MS)
        )
    load = os.getloadavg()[0]
    replay_times, busy = bench_replay(args.replay, args.model_ms)
    title = (
        f"replay · {args.replay} postings x 2 versions, endpoint {args.model_ms:g} ms per "
        f"answer · {args.backend} · load {load:.1f}-{os.getloadavg()[0]:.1f}"
    )
    idle = report(title, replay_times, "endpoint idle per posting (2 requests)", REPLAY_GOAL_MS)
    console.print(f"endpoint busy {busy:.1%} of the replay; idle per posting {idle}")


if __name__ == "__main__":
    main()
