"""Memories admin page latency on a big PostgreSQL ledger, beside a stock ModelAdmin.

    .venv/bin/python -m bench.admin_bench --fresh --sizes 100000,1000000 [--repeat 15]

Loads ``karani_admin_bench`` (its own database) with generated rows by one INSERT ... SELECT
per size step — the admin reads only the memories table, so the keyword index is not built:
1 in 3 facts global, the rest over 2,000 companies, created one minute apart (~2 years per
million), 1 in 20 soft-deleted and superseded by the next row. Then it times full page loads
(Django test client, in process: ORM, SQL and template rendering) of karani's admin and, in
the same run on the same data, of a stock ModelAdmin (bench/support/admin_bench_urls.py). Prints
median and p95 page time in milliseconds, ``sql``: the milliseconds spent in SQL on one page
load (best of 3), and ``q``: the SQL queries per page. Page time minus sql is Python (mostly
rendering 50 rows), which is what CPU load on a shared machine inflates.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PG_BASE = os.environ.get("KARANI_BENCH_PG", "postgresql://postgres@127.0.0.1:5432")
PG_DB = "karani_admin_bench"

# (name, karani admin params, stock admin params); None = the stock admin has no such page.
SCENARIOS = [
    ("list, all rows", {}, {}),
    ("status live", {"status": "live"}, {"deleted_at__isempty": "1"}),
    ("status deleted", {"status": "deleted"}, {"deleted_at__isempty": "0"}),
    ("kind question", {"kind__exact": "question"}, {"kind__exact": "question"}),
    ("one company", {"company": "company 42"}, {"company": "Company 42"}),
    ("year 2026", {"created_at__year": "2026"}, {"created_at__year": "2026"}),
    (
        "month 2025-06",
        {"created_at__year": "2025", "created_at__month": "6"},
        {"created_at__year": "2025", "created_at__month": "6"},
    ),
    ("page 20", {"p": "20"}, {"p": "20"}),
    ("search 'salary'", {"q": "salary"}, {"q": "salary"}),
    ("fact page + chain", "change", "change"),
]

PHRASES = [
    "prefers remote teams",
    "salary range discussed with the recruiter",
    "interview loop was four rounds",
    "avoids agencies",
    "wants equity",
    "moved to final round",
    "asked about on-call",
]


def setup(*, fresh: bool) -> None:
    import psycopg

    with psycopg.connect(f"{PG_BASE}/postgres", autocommit=True) as conn:
        if fresh:
            conn.execute(f'DROP DATABASE IF EXISTS "{PG_DB}"')
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [PG_DB]).fetchone():
            conn.execute(f'CREATE DATABASE "{PG_DB}"')
    os.environ["DATABASE_URL"] = f"{PG_BASE}/{PG_DB}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "karani_site.settings"
    os.environ.setdefault("KARANI_MEMORY", "basic")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def grow_to(target: int) -> None:
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("SELECT COALESCE(MAX(id), 0) FROM memories")
        have = cur.fetchone()[0]
        if have > target:
            raise SystemExit(
                f"{PG_DB} already holds {have:,} rows, more than {target:,}: "
                "pass --fresh to start from an empty database"
            )
        if have == target:
            return
        t0 = time.perf_counter()
        phrases = "ARRAY[" + ", ".join(f"'{p}'" for p in PHRASES) + "]"
        cur.execute(
            f"""
            INSERT INTO memories (id, text, kind, company, company_key, source, fit_score, ref,
                fact_key, created_at, last_seen_at, seen_count, created_by, deleted_at,
                delete_reason, deleted_by, supersedes_id, vector_id, indexed_at, terms)
            SELECT i,
                'Fact ' || i || ': ' || ({phrases})[1 + mod(i, {len(PHRASES)})],
                (ARRAY['preference', 'outcome', 'question', 'note'])[1 + mod(i, 4)],
                CASE WHEN mod(i, 3) = 0 THEN NULL ELSE 'Company ' || (mod(i, 2000)) END,
                CASE WHEN mod(i, 3) = 0 THEN NULL ELSE 'company ' || (mod(i, 2000)) END,
                CASE WHEN mod(i, 20) = 1 AND i > 1 THEN 'correction'
                     ELSE (ARRAY['teach', 'import', 'verdict', 'outcome'])[1 + mod(i, 4)] END,
                CASE WHEN mod(i, 5) = 0 THEN mod(i, 101) END,
                NULL,
                md5(i::text),
                timestamptz '2025-01-01 00:00+00' + i * interval '1 minute',
                timestamptz '2025-01-01 00:00+00' + i * interval '1 minute',
                1, 'bench',
                CASE WHEN mod(i, 20) = 0 THEN timestamptz '2025-01-01 00:00+00'
                    + (i + 1) * interval '1 minute' END,
                CASE WHEN mod(i, 20) = 0 THEN 'bench correction' ELSE '' END,
                CASE WHEN mod(i, 20) = 0 THEN 'bench' ELSE '' END,
                CASE WHEN mod(i, 20) = 1 AND i > 1 THEN i - 1 END,
                NULL, NULL,
                -- The admin never reads the keyword index's terms; recall is not benched here.
                ''
            FROM generate_series(%s, %s) AS i
            """,
            [have + 1, target],
        )
        cur.execute("SELECT setval(pg_get_serial_sequence('memories', 'id'), %s)", [target])
        cur.execute("ANALYZE memories")
        print(f"  loaded {target:,} rows in {time.perf_counter() - t0:.1f}s", file=sys.stderr)


def time_page(client, url: str, params: dict, repeat: int) -> tuple[float, float, int, float]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.get(url, params)  # warm caches and the connection
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        response = client.get(url, params)
        times.append((time.perf_counter() - t0) * 1000)
        assert response.status_code == 200, (url, params, response.status_code)
    sql_ms = []
    for _ in range(3):
        with CaptureQueriesContext(connection) as queries:
            client.get(url, params)
        sql_ms.append(sum(float(q["time"]) for q in queries.captured_queries) * 1000)
    times.sort()
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    return statistics.median(times), p95, len(queries.captured_queries), min(sql_ms)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--fresh", action="store_true", help="drop the bench database first")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    setup(fresh=args.fresh)

    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.test.utils import override_settings

    user, _ = get_user_model().objects.get_or_create(
        username="bench-admin", defaults={"is_staff": True, "is_superuser": True}
    )
    client = Client()
    client.force_login(user)
    print(
        f"{'rows':>9} {'page':<20} {'karani med':>10} {'p95':>7} {'sql':>6} {'q':>3}   "
        f"{'stock med':>9} {'p95':>7} {'sql':>6} {'q':>4}"
    )
    # The test client sends Host: testserver, which production settings do not allow.
    with override_settings(
        ROOT_URLCONF="bench.support.admin_bench_urls", DEBUG=False, ALLOWED_HOSTS=["testserver"]
    ):
        for size in sizes:
            grow_to(size)
            superseded = 20 * (size // 40)  # a deleted row in the middle of the table
            for name, ours, stock in SCENARIOS:
                if ours == "change":
                    ours_url = f"/admin/memory/memory/{superseded}/change/"
                    stock_url = f"/baseline/memory/memory/{superseded}/change/"
                    ours = stock = {}
                else:
                    ours_url, stock_url = "/admin/memory/memory/", "/baseline/memory/memory/"
                k = time_page(client, ours_url, ours, args.repeat)
                s = time_page(client, stock_url, stock, max(3, args.repeat // 3))
                print(
                    f"{size:>9,} {name:<20} {k[0]:>10.1f} {k[1]:>7.1f} {k[3]:>6.1f} {k[2]:>3}   "
                    f"{s[0]:>9.1f} {s[1]:>7.1f} {s[3]:>6.1f} {s[2]:>4}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
