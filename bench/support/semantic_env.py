"""Set-up shared by the semantic-index benchmarks: own databases, mem0 mode, a fresh index.

Ledger: PostgreSQL ``karani_sem_ledger_bench`` (or SQLite under the temp dir); vectors:
``karani_sem_vec_bench`` with pgvector (KARANI_BENCH_LEDGER_DB / KARANI_BENCH_VECTOR_DB
override them). Neither is ever a real ledger or another bench's.
"""

import os
import tempfile
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent.parent
ROOT = BENCH_DIR.parent
PG_BASE = os.environ.get("KARANI_BENCH_PG", "postgresql://postgres@127.0.0.1:5432")
# Bench databases only (never a real ledger): karani_<owner>_* per the shared-machine rule.
VECTOR_DB = os.environ.get("KARANI_BENCH_VECTOR_DB", "karani_sem_vec_bench")
LEDGER_DB = os.environ.get("KARANI_BENCH_LEDGER_DB", "karani_sem_ledger_bench")


def _ensure_database(name: str, *, vector: bool) -> None:
    import psycopg

    with psycopg.connect(f"{PG_BASE}/postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
    if vector:
        with psycopg.connect(f"{PG_BASE}/{name}", autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")


def setup(
    *,
    ledger: str,
    collection: str,
    fresh_ledger: bool = True,
    data_dir: str = "karani-semantic-bench",
    apps: tuple[str, ...] = (),
) -> None:
    """Django on the bench ledger in mem0 mode, the index in its own collection; ``data_dir``
    names the bench's directory under the temp dir, ``apps`` limits the migration to them."""
    data_dir = Path(tempfile.gettempdir()) / data_dir
    data_dir.mkdir(parents=True, exist_ok=True)
    if ledger == "postgres":
        import psycopg

        if fresh_ledger:
            with psycopg.connect(f"{PG_BASE}/postgres", autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{LEDGER_DB}" WITH (FORCE)')
        _ensure_database(LEDGER_DB, vector=False)
        os.environ["DATABASE_URL"] = f"{PG_BASE}/{LEDGER_DB}"
    else:
        db = data_dir / f"{collection}.sqlite3"
        if fresh_ledger:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)
        os.environ["DATABASE_URL"] = f"sqlite:///{db}"
    _ensure_database(VECTOR_DB, vector=True)
    os.environ.update(
        DJANGO_SETTINGS_MODULE="karani_site.settings",
        KARANI_MEMORY="mem0",
        KARANI_DATA_DIR=str(data_dir),
        KARANI_VECTOR_DSN=f"{PG_BASE}/{VECTOR_DB}",
        KARANI_VECTOR_COLLECTION=collection,
    )
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", *apps, verbosity=0)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def table(headers: list[str], rows: list[list[object]]) -> str:
    cells = [[str(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |"  # noqa: E731
    out = [line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    return "\n".join(out + [line(r) for r in cells])


def mem0_keyword_layout(client) -> None:
    """What mem0's own ``Memory.search`` reads beside the vectors, for its baseline only: a
    lemmatised copy of each text and its full-text index. karani writes neither
    (memory/semantic/schema.py); without them mem0's search loses its keyword half."""
    from mem0.utils.lemmatization import lemmatize_for_bm25
    from psycopg import sql

    col = sql.Identifier(client.config.collection)
    index = sql.Identifier(f"{client.config.collection}_text_lemmatized_idx")
    import psycopg

    # Its own connection: the index's pool sets a short tcp_user_timeout (fail fast when the
    # store is down), which a 100k-row update, piped faster than the server reads, trips.
    with psycopg.connect(client.config.dsn) as conn:
        conn.execute("SET statement_timeout = 0")
        rows = conn.execute(
            sql.SQL(
                "SELECT id, payload->>'data' FROM {} WHERE NOT payload ? 'text_lemmatized'"
            ).format(col)
        ).fetchall()
        with conn.cursor() as cur:
            cur.executemany(
                sql.SQL(
                    "UPDATE {} SET payload = payload"
                    " || jsonb_build_object('text_lemmatized', %s::text) WHERE id = %s"
                ).format(col),
                [(lemmatize_for_bm25(text), pk) for pk, text in rows],
            )
        conn.execute(
            sql.SQL(
                "CREATE INDEX IF NOT EXISTS {} ON {}"
                " USING gin (to_tsvector('simple', payload->>'text_lemmatized'))"
            ).format(index, col)
        )


def mem0_search_hits(client, *, query: str, company_key: str | None, limit: int) -> list:
    """The previous recall path, kept here as the benches' baseline: mem0's ``Memory.search``
    (lemmatise, embed, scoped vector query, full-text query, BM25 blend, pydantic items)."""
    from memory import keyword
    from memory.semantic import search

    found = client.memory.search(
        query,
        filters=search.scope_filters(company_key),
        top_k=limit * search._OVERFETCH + search._EXTRA,
        threshold=0.0,
    )
    hits, seen = [], set()
    for item in found.get("results", []):
        ledger_id = (item.get("metadata") or {}).get("ledger_id")
        if not isinstance(ledger_id, int) or ledger_id in seen:
            continue
        seen.add(ledger_id)
        hits.append(keyword.Hit(memory_id=ledger_id, score=float(item.get("score") or 0.0)))
    return hits


def embedder_dtype(client) -> str:
    """The weight type the loaded local embedder runs in (for the bench's notes)."""
    model = getattr(client.memory.embedding_model, "model", None)
    return str(next(model.parameters()).dtype).removeprefix("torch.") if model else "remote"
