"""Semantic recall latency at 10k and 100k facts, beside keyword recall in the same run.

    .venv/bin/python -m bench.semantic_latency [--sizes 10000,100000] [--queries 200]

Ledger: PostgreSQL ``karani_sem_ledger_bench`` grown with bench/support/ledgergen.py facts through
``services.import_facts`` (kept between runs, and only ever grown: a ledger already past a
size cannot time it, so time each size on its own ledger, KARANI_BENCH_LEDGER_DB). Index:
``karani_sem_vec_bench``, one collection per size, HNSW (cosine). The first 10k facts get
their real embeddings (cached under the temp dir); past 10k, each further fact gets a real
vector plus small Gaussian noise, re-normalised: realistic geometry for HNSW without encoding
100k texts on 2 cores.

Paths timed per query (ms): ``embed`` (query embedding alone: memory.semantic.encoder),
``dense`` (embedding + the scoped vector query: search.nearest), ``lexical`` (idf coverage on
the ledger's full-text index alone: memory.lexical, after recall counted the query's words),
``recall`` (selectors.recall in mem0 mode, end to end, timed first on each query: the hybrid,
whose embedding runs beside the lexical query), ``recall, names a subject`` (the same query
asked as "What did the Backend Engineer say about …?": it writes names, so it is embedded
after the lexical half, without the role when the lexical candidates include facts labelled
with it, memory.semantic.cues.about; ``stripped`` counts those), and two baselines:
``mem0 search (old)`` (mem0's ``Memory.search``: embedding + vector and full-text queries +
BM25 blend, what semantic recall ranked with before the hybrid) and ``basic``
(selectors.recall's keyword path). ``short`` counts scoped queries whose dense half returned
fewer than k hits although the scope holds at least k facts (the filtered-HNSW pitfall);
``plan`` is the store's plan for a scoped query.
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from bench.support import semantic_env

K = 5


def _grow_ledger(target: int) -> None:
    from django.conf import settings

    from bench.support import ledgergen
    from memory import services
    from memory.models import Memory

    have = Memory.objects.count()
    if have > target:
        sys.exit(
            f"the bench ledger holds {have:,} facts, more than {target:,}: give each size its "
            "own ledger (KARANI_BENCH_LEDGER_DB) and run one size per process"
        )
    settings.KARANI_MEMORY = "basic"
    for n in range(have // ledgergen.CHUNK, target // ledgergen.CHUNK):
        t0 = time.perf_counter()
        facts = [{"text": f.text, "company": f.company, "kind": f.kind} for f in ledgergen.chunk(n)]
        services.import_facts(records=enumerate(facts, start=1), batch_size=2000)
        print(f"  ledger chunk {n}: {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    settings.KARANI_MEMORY = "mem0"
    from django.db import connection

    with connection.cursor() as cursor:
        # What autovacuum does to a loaded ledger within a minute, done now so the first
        # timed query meets the same table: planner statistics and the visibility map.
        cursor.execute("VACUUM ANALYZE memories")


def _base_vectors(client, rows) -> "object":
    import numpy as np

    cache = Path(tempfile.gettempdir()) / "karani-semantic-bench" / "vectors.npy"
    if cache.exists():
        vectors = np.load(cache)
        if len(vectors) >= len(rows):
            return vectors[: len(rows)]
    t0 = time.perf_counter()
    vectors = np.asarray(client.memory.embedding_model.embed_batch([r.text for r in rows]))
    print(f"  encoded {len(rows)} texts in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    np.save(cache, vectors)
    return vectors


def _load_collection(size: int) -> None:
    import numpy as np
    from django.conf import settings

    from memory.models import Memory
    from memory.semantic import client as clientmod
    from memory.semantic import schema, store
    from memory.semantic.guard import guarded

    settings.KARANI_VECTOR_COLLECTION = f"bench_latency_{size}"
    t0 = time.perf_counter()
    # First use in the process (client.get -> schema.ensure).
    client = guarded(lambda c: c)
    if store.counts(client, maintenance=True)[0] == size:
        schema.ensure_indexes(client.store, client.config, analyze=True, maintenance=True)
        print(f"  {size}: first use + indexes {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        return
    client.store.delete_col()
    client.store.create_col()
    with client.pool.connection() as conn:  # bulk load first, build HNSW once after
        conn.execute(f"DROP INDEX IF EXISTS bench_latency_{size}_hnsw_idx")
    rows = list(Memory.objects.order_by("id").only("id", "text", "kind", "company_key")[:size])
    base = _base_vectors(client, rows[:10_000])
    rng = np.random.default_rng(7)
    t0 = time.perf_counter()
    for start in range(0, size, 2000):
        batch = rows[start : start + 2000]
        vecs = base[np.arange(start, start + len(batch)) % len(base)].copy()
        if start >= len(base):
            vecs += rng.normal(0, 0.02, vecs.shape)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        store.insert_rows(client, batch, vecs)
    t1 = time.perf_counter()
    schema.ensure_indexes(client.store, client.config, analyze=True, maintenance=True)
    print(
        f"  loaded {size} vectors in {t1 - t0:.0f}s, HNSW built in {time.perf_counter() - t1:.0f}s",
        file=sys.stderr,
    )
    clientmod.discard_store()


def _plan(client, company_key: str) -> str:
    from psycopg import sql

    vec = client.memory.embedding_model.embed("remote python role", "search")
    query = sql.SQL(
        "EXPLAIN SELECT id FROM {} WHERE payload->>'user_id' = 'karani' "
        "AND payload->>'company' = ANY(%s) ORDER BY vector <=> %s::vector LIMIT 30"
    ).format(sql.Identifier(client.config.collection))
    with client.pool.connection() as conn:
        lines = [r[0] for r in conn.execute(query, ([company_key, "__GLOBAL__"], vec)).fetchall()]
    for line in lines:
        if "Scan" in line:
            return line.strip().split("  (")[0].replace("->  ", "")
    return lines[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--remember", type=int, default=100, help="new facts to time (0: none)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    semantic_env.setup(ledger="postgres", collection="bench_latency", fresh_ledger=False)

    from django.conf import settings

    from bench.support import ledgergen
    from memory import lexical, selectors
    from memory.models import Memory
    from memory.semantic import cues, encoder, entities, search
    from memory.semantic.guard import guarded

    queries = [(q.query, q.company) for q in ledgergen.queries(args.queries)]
    roles = [ledgergen.ROLES[n % len(ledgergen.ROLES)].title() for n in range(len(queries))]
    rows = []
    for size in sizes:
        _grow_ledger(size)
        _load_collection(size)
        settings.KARANI_VECTOR_COLLECTION = f"bench_latency_{size}"
        client = guarded(lambda c: c)
        semantic_env.mem0_keyword_layout(client)  # for the "mem0 search (old)" baseline alone
        for q, company in queries[:20]:  # warm: model, pool, caches
            selectors.recall(query=q, company=company, limit=K)
        load_before = os.getloadavg()[0]
        names = (
            "entities (the question's NER)",
            "embed",
            "dense",
            "lexical",
            "recall",
            "mem0 search (old)",
            "basic",
            "recall, names a subject",
        )
        timings: dict[str, list[float]] = {name: [] for name in names}
        short = scoped = stripped = 0
        depth = K * search._OVERFETCH + search._EXTRA
        for (q, company), role in zip(queries, roles, strict=True):
            key = company.casefold() if company else None
            named = f"What did the {role} say about {q}?"
            # Recall first, so it counts the query's words no earlier query counted, as a
            # worker does; the lexical half alone then runs with them counted.
            entities.question.cache_clear()  # recall runs the model on every question
            tn = time.perf_counter()
            entities.question(q)
            entities.question.cache_clear()
            t0 = time.perf_counter()
            result = selectors.recall(query=q, company=company, limit=K)
            t1 = time.perf_counter()
            vector = encoder.embed_query(client, q)
            t2 = time.perf_counter()
            hits = search.nearest(client, vector, company_key=key, depth=depth)
            t3 = time.perf_counter()
            lexical.search(query=q, company_key=key, limit=depth)
            t4 = time.perf_counter()
            semantic_env.mem0_search_hits(client, query=q, company_key=key, limit=K)
            t5 = time.perf_counter()
            settings.KARANI_MEMORY = "basic"
            selectors.recall(query=q, company=company, limit=K)
            settings.KARANI_MEMORY = "mem0"
            t6 = time.perf_counter()
            entities.question.cache_clear()
            named_result = selectors.recall(query=named, company=company, limit=K)
            t7 = time.perf_counter()
            assert not (result.fallback or named_result.fallback), "the index fell back"
            words = lexical.search(query=named, company_key=key, limit=depth)
            stripped += cues.about(named, words) != named
            entities.question.cache_clear()
            spans = (t0 - tn, t2 - t1, t3 - t1, t4 - t3, t1 - t0, t5 - t4, t6 - t5, t7 - t6)
            for name, ms in zip(timings, spans, strict=True):
                timings[name].append(ms * 1000)
            if key is not None:
                scoped += 1
                short += len(hits) < K
        live_in_last_scope = Memory.objects.for_scope(key).count() if key else size
        plan = _plan(client, key or "acme")
        for name, values in timings.items():
            rows.append(
                [
                    f"{size:,}",
                    name,
                    len(values),
                    f"{semantic_env.pct(values, 50):.1f}",
                    f"{semantic_env.pct(values, 95):.1f}",
                ]
            )
        print(
            f"{size:,}: {short}/{scoped} scoped queries returned < {K} hits; "
            f"{stripped}/{len(queries)} naming a subject were embedded without it "
            f"(last scope holds {live_in_last_scope}); plan: {plan}; load average (1 min) "
            f"{load_before:.2f} before, {os.getloadavg()[0]:.2f} after the timed queries",
            file=sys.stderr,
        )
    print(semantic_env.table(["facts", "path", "n", "p50 ms", "p95 ms"], rows), flush=True)
    if args.remember:
        print(
            semantic_env.table(["facts", "path", "n", "p50 ms", "p95 ms"], _remember(args.remember))
        )


def _remember(count: int) -> list[list]:
    """``services.remember`` of new facts in mem0 mode (the write and its vector; facts are
    not run through the entity model), forgotten again so the live ledger keeps its size."""
    from bench.support import ledgergen
    from memory import services
    from memory.models import Memory

    timings, ids = [], []
    for n, fake in enumerate(ledgergen.chunk(7)[:count]):
        t0 = time.perf_counter()
        ids.append(services.remember(text=f"{fake.text} (bench {n})", company="bench-remember").id)
        timings.append((time.perf_counter() - t0) * 1000)
    for pk in ids:
        services.forget(id=pk, reason="latency bench write")
    p50, p95 = (f"{semantic_env.pct(timings, p):.1f}" for p in (50, 95))
    return [[f"{Memory.objects.count():,}", "remember (mem0 mode)", len(timings), p50, p95]]


if __name__ == "__main__":
    main()
