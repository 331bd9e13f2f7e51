"""Reindex throughput at 10k facts beside raw batch encoding and mem0's one-at-a-time add.

    .venv/bin/python -m bench.semantic_reindex [--size 10000] [--one-at-a-time 300]

Same process, same model, same texts (bench/support/ledgergen.py facts in an SQLite ledger):
- ``raw encode``: the embedder encoding every live text in one call (it sorts them by
  length, batches of 64), nothing else: the ceiling; run before and after the reindex, and
  the mean is the reference;
- ``reindex``: ``karani reindex``'s code path (drop, batch-embed, bulk insert while the next
  batch encodes, ledger bookkeeping, HNSW, counts);
- ``mem0 add``: ``Memory.add(text, infer=False)`` row by row, on the first
  ``--one-at-a-time`` texts (at ~10-60 rows/s a full 10k would take minutes for no new
  information), into a scratch collection, half before the reindex and half after.
All three run with the torch threads reindex uses (every core: reindex.encoder_threads) and
the configured embedder dtype (KARANI_EMBEDDER_DTYPE), printed on stderr.
Goals (issue 3): reindex >= 85% of raw encoding, >= 4x one-at-a-time.
"""

import argparse
import sys
import time

from bench.support import semantic_env


def _one_at_a_time(client, sample) -> float:
    """mem0's own write path, row by row: rows/s."""
    from memory.semantic.config import GLOBAL_SENTINEL, MEM0_USER

    t0 = time.perf_counter()
    for m in sample:
        client.memory.add(
            m.text,
            user_id=MEM0_USER,
            metadata={
                "ledger_id": m.pk,
                "kind": m.kind,
                "company": m.company_key or GLOBAL_SENTINEL,
            },
            infer=False,
        )
    return len(sample) / (time.perf_counter() - t0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--one-at-a-time", type=int, default=300)
    args = parser.parse_args()
    semantic_env.setup(ledger="sqlite", collection="bench_reindex")

    from django.conf import settings

    from bench.support import ledgergen
    from memory import services
    from memory.models import Memory
    from memory.semantic import reindex
    from memory.semantic.guard import guarded

    facts = []
    for n in range(0, (args.size + ledgergen.CHUNK - 1) // ledgergen.CHUNK):
        facts += [
            {"text": f.text, "company": f.company, "kind": f.kind} for f in ledgergen.chunk(n)
        ]
    settings.KARANI_MEMORY = "basic"
    services.import_facts(records=enumerate(facts[: args.size], start=1), batch_size=2000)
    settings.KARANI_MEMORY = "mem0"
    texts = list(Memory.objects.order_by("id").values_list("text", flat=True))
    client = guarded(lambda c: c)
    client.memory.embedding_model.embed_batch(texts[:64])  # warm

    def raw() -> float:
        # Every text in one call: sentence-transformers sorts them all by length and encodes
        # in batches of 64, the best the encoder can do on its own.
        t0 = time.perf_counter()
        client.memory.embedding_model.model.encode(texts, batch_size=reindex.BATCH_SIZE)
        return len(texts) / (time.perf_counter() - t0)

    sample = list(Memory.objects.order_by("id")[: args.one_at_a_time])
    half = len(sample) // 2

    def one_at_a_time(rows: list, *, fresh: bool = False) -> float:
        settings.KARANI_VECTOR_COLLECTION = "bench_reindex_add"
        add_client = guarded(lambda c: c)
        if fresh:
            add_client.store.delete_col()
            add_client.store.create_col()
        with reindex.encoder_threads(add_client):
            rate = _one_at_a_time(add_client, rows)
        settings.KARANI_VECTOR_COLLECTION = "bench_reindex"
        return rate

    # All three paths run with the torch threads reindex uses (every core), so neither
    # baseline is handicapped by a thread count reindex does not share. Both baselines are
    # measured before AND after the reindex (means reported): on this shared machine the
    # load can change during the run, and a baseline taken only on one side of it would
    # flatter or punish the reindex.
    add_before = one_at_a_time(sample[:half], fresh=True)
    client = guarded(lambda c: c)
    with reindex.encoder_threads(client) as threads:
        raw_before = raw()
        report = reindex.reindex()
        assert report.matches, report
        reindex_rate = report.written / report.seconds
        raw_after = raw()
    raw_rate = (raw_before + raw_after) / 2
    add_after = one_at_a_time(sample[half:])
    add_rate = (add_before + add_after) / 2

    rows = [
        ["raw encode (mean of before/after)", len(texts), f"{raw_rate:.0f}", "100%", "-"],
        [
            "reindex (full)",
            report.written,
            f"{reindex_rate:.0f}",
            f"{100 * reindex_rate / raw_rate:.0f}%",
            f"{reindex_rate / add_rate:.1f}x",
        ],
        [
            "mem0 add, one at a time (mean of before/after)",
            len(sample),
            f"{add_rate:.0f}",
            f"{100 * add_rate / raw_rate:.0f}%",
            "1.0x",
        ],
    ]
    print(
        f"raw encode before {raw_before:.0f}/s, after {raw_after:.0f}/s; one-at-a-time add "
        f"before {add_before:.0f}/s, after {add_after:.0f}/s; torch threads "
        f"{threads}, embedder dtype {semantic_env.embedder_dtype(client)}",
        file=sys.stderr,
    )
    print(semantic_env.table(["path", "rows", "rows/s", "vs raw", "vs add"], rows))


if __name__ == "__main__":
    main()
