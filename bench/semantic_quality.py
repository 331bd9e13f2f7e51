"""Recall quality: basic (keyword) vs mem0 semantic vs fused, recall@1 and @5.

    .venv/bin/python bench/semantic_quality.py [--background 1000]

Ledger: the paraphrase set (tests/data/paraphrases.jsonl: each fact with a paraphrase query
sharing no content word, and a keyword query) plus its distractors plus ``--background``
generated facts (bench/ledgergen.py) as realistic noise, written through the service in
mem0 mode. Two query sets: paraphrase and keyword. Methods, in the same run:
- basic: memory.keyword.search (what basic mode and the fallback return);
- semantic: the shipped semantic search (mem0's embedder + vector store, scoped in the store);
- mem0 search (old): the previous path, mem0's Memory.search (vector + BM25 blend);
- fused: reciprocal rank fusion of semantic and keyword (memory.semantic.search.fuse);
- fused-w: the same with keyword ranks weighted 0.5.
"""

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import semantic_env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--background", type=int, default=1000)
    parser.add_argument("--ledger", choices=["sqlite", "postgres"], default="sqlite")
    args = parser.parse_args()
    semantic_env.setup(ledger=args.ledger, collection="bench_quality")

    import ledgergen
    from django.conf import settings

    from memory import keyword, services
    from memory import text as textmod
    from memory.semantic import reindex, search
    from memory.semantic.guard import guarded

    lines = (semantic_env.ROOT / "tests" / "data" / "paraphrases.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    items = [r for r in records if "fact" in r]
    facts = [{"text": r["fact"], "company": r["company"]} for r in items]
    facts += [{"text": r["distractor"]} for r in records if "distractor" in r]
    facts += [
        {"text": f.text, "company": f.company, "kind": f.kind}
        for f in ledgergen.chunk(0)[: args.background]
    ]
    settings.KARANI_MEMORY = "basic"  # load the ledger, then build the index in one pass
    services.import_facts(records=enumerate(facts, start=1))
    settings.KARANI_MEMORY = "mem0"
    started = time.perf_counter()
    report = reindex.reindex()
    print(
        f"ledger: {report.ledger_live} facts, indexed in {time.perf_counter() - started:.1f}s",
        file=sys.stderr,
    )
    from memory.models import Memory

    ids = dict(Memory.objects.values_list("text", "id"))

    def semantic(q, key, k):
        return guarded(lambda c: search.semantic_hits(c, query=q, company_key=key, limit=k))

    def weighted(sem, kw):
        scores: dict[int, float] = {}
        for weight, hits in ((1.0, sem), (0.5, kw)):
            for rank, h in enumerate(hits, start=1):
                scores[h.memory_id] = scores.get(h.memory_id, 0) + weight / (search.RRF_K + rank)
        return [m for m, _ in sorted(scores.items(), key=lambda kv: (-kv[1], -kv[0]))]

    def old(q, key, k):
        return guarded(
            lambda c: semantic_env.mem0_search_hits(c, query=q, company_key=key, limit=k)
        )

    methods = ["basic", "semantic", "mem0 search (old)", "fused", "fused-w"]
    rows = []
    for qset in ("query", "keyword_query"):
        hits = {m: [0, 0] for m in methods}
        for item in items:
            q = item[qset]
            key = textmod.company_key(item["company"]) if item["company"] else None
            want = ids[item["fact"]]
            kw = keyword.search(query=q, company_key=key, limit=20)
            sem = semantic(q, key, 5)
            ranked = {
                "basic": [h.memory_id for h in kw],
                "semantic": [h.memory_id for h in sem],
                "mem0 search (old)": [h.memory_id for h in old(q, key, 5)],
                "fused": [h.memory_id for h in search.fuse(sem, kw)],
                "fused-w": weighted(sem, kw),
            }
            for m in methods:
                hits[m][0] += ranked[m][:1] == [want]
                hits[m][1] += want in ranked[m][:5]
        n = len(items)
        label = "paraphrase" if qset == "query" else "keyword"
        for m in methods:
            rows.append([label, m, n, f"{hits[m][0] / n:.2f}", f"{hits[m][1] / n:.2f}"])
    print(semantic_env.table(["queries", "method", "n", "recall@1", "recall@5"], rows))


if __name__ == "__main__":
    main()
