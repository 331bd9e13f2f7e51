"""Bench databases: set-up, and a fast bulk loader that writes exactly what the service writes.

Postgres uses its own database (``karani_bench``), SQLite a file under the temp dir, so a
benchmark never touches a real ledger. ``grow_to(n)`` appends deterministic chunks of
generated facts until ``n`` live facts exist; sizes grow 10k -> 100k -> 1M without rebuilding.

Small sizes go through ``memory.services.import_facts``. Past that, the loader validates
every fact with ``services.validate_fact`` (so the secrets guard and normalisation are the
service's own) and writes the fact rows with COPY (Postgres) or ``executemany`` (SQLite),
terms included (the database's full-text index follows by itself); ``check_loader_matches_service``
proves the fact rows are identical.
"""

import os
import pickle
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent.parent
ROOT = BENCH_DIR.parent
CACHE = Path(tempfile.gettempdir()) / "karani-bench"
PG_BASE = os.environ.get("KARANI_BENCH_PG", "postgresql://postgres@127.0.0.1:5432")
PG_DB = "karani_bench"
SERVICE_LOAD_MAX = 10_000  # up to this size, import_facts loads the ledger


def _label(size: int) -> str:
    return f"{size // 1_000_000}m" if size % 1_000_000 == 0 else f"{size // 1000}k"


def _pg_admin():
    import psycopg

    return psycopg.connect(f"{PG_BASE}/postgres", autocommit=True)


def setup(backend: str) -> None:
    """Configure Django for ``backend``; each size then gets its own database (use_size)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    if backend == "postgres":
        with _pg_admin() as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [PG_DB]).fetchone():
                conn.execute(f'CREATE DATABASE "{PG_DB}"')
        os.environ["DATABASE_URL"] = f"{PG_BASE}/{PG_DB}"
    elif backend == "sqlite":
        os.environ["DATABASE_URL"] = f"sqlite:///{CACHE / 'bench.sqlite3'}"
    else:
        raise SystemExit(f"unknown backend {backend!r}; use postgres or sqlite")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "karani_site.settings")
    os.environ["KARANI_MEMORY"] = "basic"
    import django

    django.setup()


def use_size(size: int, sizes: list[int]) -> None:
    """Switch to the database holding ``size`` facts, building it from the next smaller one.

    Every size keeps its own database (karani_bench_10k, _100k, _1m; SQLite files alike), so
    any size can be re-measured; a new size starts as a copy of the largest smaller one and
    only the missing facts are loaded.
    """
    import shutil

    from django.core.management import call_command
    from django.db import connection

    smaller = [s for s in sorted(sizes) if s < size]
    connection.close()
    if connection.vendor == "postgresql":
        name = f"{PG_DB}_{_label(size)}"
        with _pg_admin() as conn:
            have = {r[0] for r in conn.execute("SELECT datname FROM pg_database").fetchall()}
            if name not in have:
                base = next(
                    (
                        f"{PG_DB}_{_label(s)}"
                        for s in reversed(smaller)
                        if f"{PG_DB}_{_label(s)}" in have
                    ),
                    None,
                )
                template = f' TEMPLATE "{base}"' if base else ""
                conn.execute(f'CREATE DATABASE "{name}"{template}')
        connection.settings_dict["NAME"] = name
    else:
        path = CACHE / f"bench-{_label(size)}.sqlite3"
        if not path.exists():
            base = next(
                (
                    CACHE / f"bench-{_label(s)}.sqlite3"
                    for s in reversed(smaller)
                    if (CACHE / f"bench-{_label(s)}.sqlite3").exists()
                ),
                None,
            )
            if base:
                shutil.copyfile(base, path)
        connection.settings_dict["NAME"] = str(path)
    call_command("migrate", verbosity=0)


def live_count() -> int:
    from memory.models import Memory

    return Memory.objects.count()


def _cached_chunk(n: int) -> list[tuple]:
    """Chunk ``n`` validated: (CleanFact, created_at, last_seen_at, tokens) per fact.

    Validation (mostly the secrets scan) is the slow part, so it is cached across backends.
    """
    from bench.support import ledgergen
    from memory import text as textmod
    from memory.validation import validate_fact

    path = CACHE / f"chunk-{n:04d}.pickle"
    if path.exists():
        return pickle.loads(path.read_bytes())
    rows = []
    for f in ledgergen.chunk(n):
        clean = validate_fact(text=f.text, kind=f.kind, company=f.company, source="import")
        rows.append((clean, f.created_at, f.last_seen_at, textmod.tokens(clean.text)))
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL))
    return rows


def _service_load(n: int) -> None:
    from bench.support import ledgergen
    from memory import services

    records = (
        (
            i,
            {
                "text": f.text,
                "kind": f.kind,
                "company": f.company,
                "created_at": f.created_at.isoformat(),
            },
        )
        for i, f in enumerate(ledgergen.chunk(n), 1)
    )
    report = services.import_facts(records=records, batch_size=1000)
    assert not report.rejected, report.rejected[:3]
    _set_last_seen(n)


def _set_last_seen(n: int) -> None:
    # import_facts stamps last_seen_at = now; the generator's spread matters for the
    # recency tie-break, so copy it over (what a ledger that lived for two years looks like).
    from django.db import connection

    from bench.support import ledgergen
    from memory import text as textmod

    with connection.cursor() as cur:
        cur.executemany(
            "UPDATE memories SET last_seen_at = %s WHERE fact_key = %s AND deleted_at IS NULL",
            [
                (
                    f.last_seen_at,
                    textmod.fact_key(text=f.text.strip(), kind=f.kind, company_key=_key(f.company)),
                )
                for f in ledgergen.chunk(n)
            ],
        )


def _key(company: str | None) -> str | None:
    from memory import text as textmod

    return None if company is None else textmod.company_key(company)


def _fields() -> list:
    from memory.models import Memory

    return list(Memory._meta.concrete_fields)


def memory_row(mid: int, clean, created_at, last_seen_at, tokens) -> tuple:
    """A memories row in _fields() order, built as the service builds a new fact's row
    (memory.ledger.new_row; import_facts writes with no actor)."""
    from memory.ledger import new_row

    row = new_row(clean, actor="", now=last_seen_at, created_at=created_at)
    row.pk, row.terms = mid, " ".join(tokens)
    return tuple(getattr(row, f.attname) for f in _fields())


def _bulk_load(n: int) -> None:
    from django.db import connection, transaction

    rows = _cached_chunk(n)
    columns = ", ".join(f.column for f in _fields())
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute("SELECT COALESCE(MAX(id), 0) FROM memories")
        base = cur.fetchone()[0]
        mems = [
            memory_row(base + i, clean, created, seen, tokens)
            for i, (clean, created, seen, tokens) in enumerate(rows, 1)
        ]
        if connection.vendor == "postgresql":
            raw = cur.cursor
            with raw.copy(f"COPY memories ({columns}) FROM STDIN") as cp:
                for r in mems:
                    cp.write_row(r)
            cur.execute(
                "SELECT setval(pg_get_serial_sequence('memories', 'id'), %s)", [base + len(rows)]
            )
        else:
            ph = ", ".join(["%s"] * len(_fields()))
            cur.executemany(f"INSERT INTO memories ({columns}) VALUES ({ph})", mems)


def grow_to(target: int, *, log=print) -> None:
    """Append generated chunks until ``target`` live facts exist (multiples of CHUNK)."""
    from django.db import connection

    from bench.support import ledgergen

    have = live_count()
    if have % ledgergen.CHUNK:
        raise SystemExit(
            f"bench database holds {have} facts, not a whole number of chunks; "
            "drop it and start again"
        )
    for n in range(have // ledgergen.CHUNK, target // ledgergen.CHUNK):
        t0 = time.perf_counter()
        if n * ledgergen.CHUNK < SERVICE_LOAD_MAX:
            _service_load(n)
        else:
            _bulk_load(n)
        if n == 0:
            check_loader_matches_service()
        if (n + 1) % 10 == 0 or n * ledgergen.CHUNK < SERVICE_LOAD_MAX:
            log(
                f"  loaded {(n + 1) * ledgergen.CHUNK:>9,} facts "
                f"({time.perf_counter() - t0:.1f}s for the last chunk)"
            )
    with connection.cursor() as cur:
        if connection.vendor == "postgresql":
            # What autovacuum does to a table that stopped growing: statistics, and a
            # visibility map so index-only scans skip the heap.
            cur.execute("VACUUM ANALYZE memories")
        else:
            cur.execute("ANALYZE")
            cur.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def check_loader_matches_service() -> None:
    """Chunk 0 went through import_facts: the bulk loader must produce the very same rows."""
    from django.db import connection

    rows = _cached_chunk(0)
    columns = [f.column for f in _fields()]
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT {', '.join(columns)} FROM memories WHERE id <= %s ORDER BY id",
            [len(rows)],
        )
        stored = cur.fetchall()
    by_key = {r[columns.index("fact_key")]: r for r in stored}
    for clean, created, seen, tokens in rows:
        got = by_key[clean.fact_key]
        want = memory_row(got[columns.index("id")], clean, created, seen, tokens)
        # Compare through str(): SQLite hands timestamps back as text, Postgres as datetimes.
        if [_norm(v) for v in got] != [_norm(v) for v in want]:
            raise SystemExit(f"bulk loader row differs from the service's:\n{got}\n{want}")


def _norm(value):
    from datetime import datetime

    from django.utils.dateparse import parse_datetime

    if isinstance(value, str) and value[:2] == "20" and (dt := parse_datetime(value)):
        value = dt
    if isinstance(value, datetime):
        return value.timestamp()
    return value
