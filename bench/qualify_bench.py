"""Qualify's per-posting overhead with memory vs without, at 100k facts (excluding the LLM).

    .venv/bin/python -m bench.qualify_bench [--backend postgres|sqlite] [--size 100000]
                                            [--postings 300] [--history 2000]

What is timed is ``qualify.services.prepare_prompt`` — exactly what `qualify` does before it
asks the model: choose the prompt version, recall the working facts (company + title + role
category, top-k capped at 10), pick the few-shot examples, build the messages.

- with memory: ``KARANI_MEMORY=basic`` (keyword recall over the ledger, few-shot block);
- without: ``KARANI_MEMORY=off`` (the pre-memory prompt: no recall, no few-shot), measured in
  the same run on the same postings, alternating with the memory run posting by posting so
  machine noise hits both alike;
- recall only: ``memory.selectors.recall`` with the same query, to show where the time goes;
- qualify's own part: the with-memory time minus the time spent inside ``recall`` during that
  same call (the real recall, wrapped in a stopwatch);
- holdout on: ``KARANI_MEMORY_HOLDOUT=0.1``, the same call again, alternating with the two
  above; for memory-arm postings it is paired with "with memory" (holdout 0, the path as it
  was before the holdout existed) to give the holdout's own cost. Goal: <= 1 ms p95.

The ledger lives in this bench's own database, one per size, since a ledger is only ever
grown (``karani_qualify_bench_<size>``, or an SQLite file in the temp dir). It is loaded once
through ``memory.services.import_facts`` in batches (the service's own validation, dedupe
and keyword index), then kept for the next run:
deterministic generated facts, 1 in 3 global, the rest over 3,000 companies. Postings target
those companies; ``--history`` past verdicts with outcomes feed the few-shot choice. The
postings and history are written in one transaction that is rolled back at the end.
Goal: p95 with memory <= 10 ms.
"""

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PG_BASE = os.environ.get("KARANI_BENCH_PG", "postgresql://postgres@127.0.0.1:5432")
PG_DB = "karani_qualify_bench"
GOAL_P95_MS = 10.0
HOLDOUT_SHARE = 0.1
HOLDOUT_GOAL_P95_MS = 1.0
HOLDOUT_ON_MEMORY = "holdout on, memory-arm postings"
HOLDOUT_EXTRA = "holdout's extra (paired, memory arm)"
ARM_ALONE = "arm assignment alone (holdout.arm_for)"
WARMUP = 20
BATCH = 2000

PREFIXES = [
    "north", "south", "blue", "red", "iron", "stone", "river", "harbor", "summit", "cedar",
    "maple", "quantum", "vector", "nimbus", "polar", "solar", "nova", "orbit", "pixel", "cloud",
    "signal", "beacon", "anchor", "forge", "atlas", "apex", "prism", "helix", "fusion", "swift"
]  # fmt: skip
SUFFIXES = [
    "robotics", "labs", "systems", "analytics", "health", "payments", "logistics", "energy",
    "games", "media", "networks", "security", "software", "devices", "works", "studio",
    "capital", "mobility", "retail", "markets"
]  # fmt: skip
FORMS = ["", " GmbH", " Inc", " AG", " Group"]
ROLES = [
    "backend", "frontend", "platform", "data", "ml", "sre", "security", "mobile", "devops",
    "analytics"
]  # fmt: skip
WORDS = [
    "remote", "hybrid", "onsite", "salary", "equity", "interview", "recruiter", "screen",
    "offer", "rejected", "applied", "team", "culture", "stack", "python", "django", "postgres",
    "kubernetes", "terraform", "aws", "rust", "golang", "react", "oncall", "pager", "weekend",
    "overtime", "relocation", "visa", "budget", "bonus", "pension", "parental", "leave",
    "commute", "travel", "contract", "startup", "enterprise", "senior", "staff", "lead",
    "manager", "mentoring", "conference", "timezone", "english", "german", "fluent", "flexible",
    "benefits", "process", "technical", "takehome", "panel", "final", "round", "ghosted",
    "withdrew", "accepted", "declined"
]  # fmt: skip


def companies() -> list[str]:
    names = sorted(
        {f"{p.title()} {s.title()}{f}" for p in PREFIXES for s in SUFFIXES for f in FORMS}
    )
    random.Random(7).shuffle(names)
    return names[:3000]


def _facts(n: int):
    rng = random.Random(2026)
    names = companies()
    for i in range(n):
        company = None if i % 3 == 0 else rng.choice(names)
        words = " ".join(rng.choices(WORDS, k=rng.randint(8, 18)))
        role = rng.choice(ROLES)
        yield (
            i + 1,
            {
                "text": f"{role} {words} #{i}",
                "kind": rng.choice(["preference", "outcome", "note", "question"]),
                "company": company,
            },
        )


def setup(backend: str, size: int) -> None:
    if backend == "postgres":
        import psycopg

        name = f"{PG_DB}_{size}"
        with psycopg.connect(f"{PG_BASE}/postgres", autocommit=True) as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
                conn.execute(f'CREATE DATABASE "{name}"')
        os.environ["DATABASE_URL"] = f"{PG_BASE}/{name}"
    else:
        path = Path(tempfile.gettempdir()) / f"karani-qualify-bench-{size}.sqlite3"
        os.environ["DATABASE_URL"] = f"sqlite:///{path}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "karani_site.settings")
    os.environ["KARANI_MEMORY"] = "basic"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def grow_to(size: int) -> int:
    """Load the generated facts through import_facts until ``size`` exist (kept across runs)."""
    import itertools

    from django.db import connection

    from memory import services as memory

    have = sum(1 for _ in itertools.islice(memory.iter_all_facts(), size))
    if have >= size:
        return have
    t0 = time.perf_counter()
    facts = itertools.islice(_facts(size), have, None)
    while True:
        batch = list(itertools.islice(facts, BATCH))
        if not batch:
            break
        memory.import_facts(records=batch, actor="bench", batch_size=BATCH)
        have += len(batch)
        print(f"  loaded {have:>7,} facts ({time.perf_counter() - t0:.0f}s)", flush=True)
    with connection.cursor() as cur:
        if connection.vendor == "postgresql":
            cur.execute("VACUUM ANALYZE memories")
        else:
            cur.execute("ANALYZE")
    return have


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[94]


def _fixture(n_postings: int, n_history: int):
    from qualify import services
    from qualify.models import Outcome, Posting, Qualification

    rng = random.Random(5)
    names = companies()
    profile = services.set_profile(
        summary="Senior backend engineer, Python and PostgreSQL, ten years",
        preferences="remote in Europe, no pager duty, at least 90k EUR",
        dealbreakers=["relocation", "crypto"],
    )

    def posting(i: int) -> Posting:
        role = rng.choice(ROLES)
        return Posting.objects.create(
            company=services.company_named(rng.choice(names)),
            title=f"Senior {role} engineer",
            role_category=role,
            remote=rng.choice(["remote", "hybrid", "onsite"]),
            description=" ".join(rng.choices(WORDS, k=120)),
            url=f"https://jobs.example.com/bench/{i}",
            dealbreakers=["on-site five days a week"] if i % 7 == 0 else [],
        )

    past = [posting(i) for i in range(n_history)]
    verdicts = Qualification.objects.bulk_create(
        Qualification(
            posting=p,
            verdict="qualified" if i % 3 else "rejected",
            fit_score=rng.randint(20, 95),
            reasons="bench history",
            prompt_version="qualify-v2-memory",
            fact_ids=[],
        )
        for i, p in enumerate(past)
    )
    stages = ["applied", "screen", "interview", "offer", "rejected", "withdrawn"]
    Outcome.objects.bulk_create(
        Outcome(posting_id=q.posting_id, qualification=q, stage=rng.choice(stages))
        for q in verdicts
        if rng.random() < 0.5
    )
    fresh = [posting(n_history + i) for i in range(n_postings)]
    # What autovacuum would have done to tables this size: without statistics the planner
    # guesses "empty" and the timings measure a plan production never runs.
    from django.db import connection

    with connection.cursor() as cur:
        for table in (
            "qualify_company",
            "qualify_posting",
            "qualify_qualification",
            "qualify_outcome",
        ):
            cur.execute(f"ANALYZE {table}")
    return fresh, profile


def _measure(postings, profile) -> dict[str, list[float]]:
    from django.conf import settings

    from memory import selectors as memory
    from qualify import context, holdout, services
    from qualify.few_shot import FewShotPool

    timings: dict[str, list[float]] = {
        "with memory": [],
        "without memory": [],
        "recall only": [],
        "qualify's own part (with memory, minus its recall)": [],
        HOLDOUT_ON_MEMORY: [],
        "holdout on, holdout-arm postings (pre-memory prompt)": [],
        HOLDOUT_EXTRA: [],
        ARM_ALONE: [],
    }
    # The real recall, wrapped in a stopwatch, so the time qualify spends outside memory's
    # service is measured exactly rather than by subtracting two separate runs.
    real_recall = memory.recall
    inside_recall = [0.0]

    def timed_recall(**kwargs):
        t = time.perf_counter()
        try:
            return real_recall(**kwargs)
        finally:
            inside_recall[0] += (time.perf_counter() - t) * 1000

    memory.recall = timed_recall
    salt = holdout.salt()
    facts: list[int] = []
    # `qualify` loads the few-shot candidates once per batch; time that once, apart.
    t0 = time.perf_counter()
    pool = FewShotPool.load()
    timings["_pool"] = [(time.perf_counter() - t0) * 1000]
    for i, p in enumerate(postings):
        runs = [
            ("with memory", "basic", 0.0),
            ("without memory", "off", 0.0),
            ("holdout on", "basic", HOLDOUT_SHARE),
        ]
        shift = i % len(runs)  # rotate the order so machine noise hits each run alike
        this: dict[str, float] = {}
        for label, mode, share in runs[shift:] + runs[:shift]:
            settings.KARANI_MEMORY = mode
            settings.KARANI_MEMORY_HOLDOUT = share
            inside_recall[0] = 0.0
            t0 = time.perf_counter()
            prepared = services.prepare_prompt(posting=p, profile=profile, pool=pool)
            this[label] = (time.perf_counter() - t0) * 1000
            if label == "with memory":
                facts.append(len(prepared.facts))
                assert prepared.memory_error is None, prepared.memory_error
                own = this[label] - inside_recall[0]
        if i >= WARMUP:
            timings["with memory"].append(this["with memory"])
            timings["without memory"].append(this["without memory"])
            timings["qualify's own part (with memory, minus its recall)"].append(own)
            if holdout.position(p.pk, salt_value=salt) >= HOLDOUT_SHARE:
                timings[HOLDOUT_ON_MEMORY].append(this["holdout on"])
                timings[HOLDOUT_EXTRA].append(this["holdout on"] - this["with memory"])
            else:
                label = "holdout on, holdout-arm postings (pre-memory prompt)"
                timings[label].append(this["holdout on"])
        # The only work the holdout adds to prepare_prompt, timed alone.
        settings.KARANI_MEMORY_HOLDOUT = HOLDOUT_SHARE
        t0 = time.perf_counter()
        holdout.arm_for(p.pk)
        if i >= WARMUP:
            timings[ARM_ALONE].append((time.perf_counter() - t0) * 1000)
        settings.KARANI_MEMORY_HOLDOUT = 0.0
        settings.KARANI_MEMORY = "basic"
        t0 = time.perf_counter()
        real_recall(
            query=context.recall_query(context.Subject.of(p)),
            company=p.company.name,
            limit=context.fact_cap(),
        )
        if i >= WARMUP:
            timings["recall only"].append((time.perf_counter() - t0) * 1000)
    memory.recall = real_recall
    timings["_facts"] = [float(f) for f in facts]
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["postgres", "sqlite"], default="postgres")
    parser.add_argument("--size", type=int, default=100_000, help="facts in the ledger")
    parser.add_argument("--postings", type=int, default=300, help="postings timed")
    parser.add_argument("--history", type=int, default=2000, help="past verdicts")
    args = parser.parse_args()

    setup(args.backend, args.size)
    print(f"ledger: {args.size:,} facts ({args.backend}) ...", flush=True)
    live = grow_to(args.size)

    from django.conf import settings
    from django.db import transaction
    from rich.console import Console
    from rich.table import Table

    settings.KARANI_MEMORY_TOP_K = 5
    from qualify import holdout

    holdout.salt()  # committed (and so cached) as in production, outside the rollback
    with transaction.atomic():
        postings, profile = _fixture(args.postings + WARMUP, args.history)
        timings = _measure(postings, profile)
        transaction.set_rollback(True)  # leave the bench ledger as we found it

    facts = timings.pop("_facts")
    pool_ms = timings.pop("_pool")[0]
    table = Table(
        title=(
            f"qualify overhead per posting, excluding the LLM call · {live:,} "
            f"facts · {args.backend} · {len(timings['with memory'])} postings · "
            f"{statistics.mean(facts):.1f} facts injected on average"
        ),
        title_justify="left",
    )
    for column in ("path", "median ms", "p95 ms", "max ms"):
        table.add_column(column, justify="right" if column != "path" else "left")
    for label, values in timings.items():
        if len(values) < 2:
            continue
        table.add_row(
            label,
            f"{statistics.median(values):.2f}",
            f"{_p95(values):.2f}",
            f"{max(values):.2f}",
        )
    with_p95 = _p95(timings["with memory"])
    extra = [
        w - wo for w, wo in zip(timings["with memory"], timings["without memory"], strict=True)
    ]
    table.add_row(
        "memory's extra (paired)",
        f"{statistics.median(extra):.2f}",
        f"{_p95(extra):.2f}",
        f"{max(extra):.2f}",
    )
    console = Console(width=120)
    console.print(table)
    console.print(f"few-shot pool, loaded once per batch: {pool_ms:.2f} ms")
    verdict = "meets" if with_p95 <= GOAL_P95_MS else "MISSES"
    console.print(f"with-memory p95 {with_p95:.2f} ms {verdict} the goal (<= {GOAL_P95_MS:g} ms)")
    arm_p95 = _p95(timings[ARM_ALONE])
    verdict = "meets" if arm_p95 <= HOLDOUT_GOAL_P95_MS else "MISSES"
    console.print(
        f"the holdout's added work (arm assignment) p95 {arm_p95:.3f} ms {verdict} the goal "
        f"(<= {HOLDOUT_GOAL_P95_MS:g} ms); the paired difference carries recall's noise: "
        f"median {statistics.median(timings[HOLDOUT_EXTRA]):+.2f} ms"
    )
    console.print(f"load average at the end: {os.getloadavg()[0]:.1f} (2 cores, shared)")


if __name__ == "__main__":
    main()
