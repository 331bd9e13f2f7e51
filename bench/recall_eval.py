"""Recall quality of every method, on the job-search set and on LoCoMo, in one run.

    .venv/bin/python -m bench.recall_eval [--locomo ../shared/data/locomo-dev] [--jobsearch]
        [--ledger sqlite|postgres] [--depth 30] [--background 1000]

LoCoMo (Maharana et al., ACL 2024; github.com/snap-research/LoCoMo; CC BY-NC 4.0) is read
from the directory given, never copied here. Each dataset is loaded into a fresh ledger
(SQLite under the temp dir, or PostgreSQL ``karani_recall_ledger``) through
services.import_facts, then indexed with ``reindex`` into the pgvector database
``karani_recall_vectors`` (KARANI_BENCH_VECTOR_DB / KARANI_BENCH_LEDGER_DB override them).

Every query is scoped to its company (LoCoMo: its conversation) and asks for the top 10.
Per method: R@1, R@5 (share of evidence in the top k), MRR@10, hit@5 (any evidence in the
top 5), leaks (queries whose top 10 holds another company's fact) and latency p50/p95 in ms
(for a fusion: its sources, run one after the other, plus the fusion). Overall, then R@5 and
MRR@10 per category (LoCoMo) or style (job search: paraphrase, keyword, scope-trap), then the
questions sharing no content word with their evidence (the dense half's alone to find). The
family rows vary one constant of memory.semantic.tuning at a time; --cv scores each family
leave-one-conversation-out.
"""

import argparse
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
os.environ.setdefault("KARANI_BENCH_VECTOR_DB", "karani_recall_vectors")
os.environ.setdefault("KARANI_BENCH_LEDGER_DB", "karani_recall_ledger")
from bench.support import semantic_env  # noqa: E402

TOP = 10
# Each constant of memory.semantic.tuning, at the values --cv chooses among.
FAMILIES = {
    "dense_share": (0.3, 0.4, 0.5, 0.6),
    "covered": (0.0, 0.5, 0.7, 0.85, 1.0),
    "neighbour": (0.0, 0.2, 0.4, 0.5),
    "date_share": (0.0, 1.0, 1.5, 3.0),
    "subject_share": (0.0, 1.0, 2.0, 3.0),
    "keep": (0, 1, 2, 3),
}


def _shipped() -> dict:
    from memory.semantic import tuning

    return {
        "dense_share": tuning.DENSE_SHARE,
        "covered": tuning.COVERED,
        "neighbour": tuning.NEIGHBOUR_SHARE,
        "date_share": tuning.DATE_SHARE,
        "subject_share": tuning.SUBJECT_SHARE,
        "keep": tuning.DENSE_KEPT,
    }


def _load(data) -> dict[str, int]:
    """Import the facts in basic mode, index them in one reindex; dataset key -> ledger id."""
    from django.conf import settings

    from memory import services
    from memory import text as textmod
    from memory.models import Memory
    from memory.semantic import reindex

    records = []
    for fact in data.facts:
        record = {"text": fact.text, "company": fact.company}
        if fact.created_at:
            record["created_at"] = fact.created_at
        records.append(record)
    settings.KARANI_MEMORY = "basic"
    t0 = time.perf_counter()
    report = services.import_facts(records=enumerate(records, start=1), batch_size=1000)
    assert not report.rejected, report.rejected[:3]
    settings.KARANI_MEMORY = "mem0"
    indexed = reindex.reindex()
    print(
        f"{data.name}: {indexed.ledger_live} facts loaded and indexed in "
        f"{time.perf_counter() - t0:.0f}s",
        file=sys.stderr,
    )
    by_key = dict(Memory.objects.values_list("fact_key", "id"))
    return {
        f.key: by_key[
            textmod.fact_key(
                text=f.text,
                kind="note",
                company_key=textmod.company_key(f.company) if f.company else None,
            )
        ]
        for f in data.facts
    }


def _sources(depth: int, query_texts: list[str], company_of: dict) -> dict:
    """name -> callable(query, company key) -> Ranked: the lists methods are built from."""
    from bench.support import recall_eval_methods as rm
    from memory import keyword
    from memory.semantic import client as clientmod
    from memory.semantic import search
    from memory.semantic.encoder import embed_query

    client = clientmod.get()
    semantic_env.mem0_keyword_layout(client)  # for the "mem0" baseline alone
    bm25 = rm.PythonBM25()
    bm25_scope = rm.PythonBM25(scope_stats=True)
    from memory.models import Memory

    texts = list(Memory.objects.values_list("text", flat=True)) + query_texts
    bm25_stem = rm.PythonBM25(stems=rm.english_stems(os.environ["KARANI_VECTOR_DSN"], texts))

    def dense(q, key):
        found = client.store.search(
            query=q, vectors=embed_query(client, q), top_k=depth, filters=search.scope_filters(key)
        )
        best: dict[int, float] = {}
        for r in sorted(found, key=lambda r: -float(r.score)):  # the scan's order is relaxed
            pk = (r.payload or {}).get("ledger_id")
            if isinstance(pk, int) and pk not in best:
                best[pk] = float(r.score)
        return list(best.items())

    def dense_about(q, key):
        # The dense half as search.search asks it: without the subjects the question names
        # among the lexical half's candidates.
        from memory import lexical
        from memory.semantic import cues

        return dense(cues.about(q, lexical.search(query=q, company_key=key, limit=depth)), key)

    def mem0_shipped(q, key):
        # mem0's own Memory.search: what semantic mode ranked with before the hybrid (the
        # vector query, with mem0's BM25 blend breaking ties among its candidates).
        hits = semantic_env.mem0_search_hits(client, query=q, company_key=key, limit=TOP)
        return [(h.memory_id, h.score) for h in hits]

    def hybrid_shipped(q, key):
        return [(h.memory_id, h.score) for h in search.search(query=q, company_key=key, limit=TOP)]

    def basic(q, key):
        return [
            (h.memory_id, h.score) for h in keyword.search(query=q, company_key=key, limit=depth)
        ]

    sources = {
        "basic": basic,
        "mem0": mem0_shipped,
        "hybrid": hybrid_shipped,
        "dense": dense,
        "dense_about": dense_about,
        "dense_boost": lambda q, key: rm.scope_boost(dense(q, key), company_of, key, 0.2),
        "bm25": lambda q, key: bm25(q, key, depth),
        "bm25s": lambda q, key: bm25_scope(q, key, depth),
        "coverage": lambda q, key: bm25.coverage(q, key, depth),
        "bm25stem": lambda q, key: bm25_stem(q, key, depth),
        "coverage_stem": lambda q, key: bm25_stem.coverage(q, key, depth),
        # Not a ranking: the question itself, for the cue families below.
        "question": lambda q, key: q,
    }
    try:
        from memory import lexical

        sources["lexical"] = lambda q, key: [
            (h.memory_id, h.score) for h in lexical.search(query=q, company_key=key, limit=depth)
        ]
    except ImportError:
        pass
    return sources


def _methods(sources: dict) -> dict:
    """name -> (source names, fusion over their lists, (family, value) or None).

    A family is one constant of memory.semantic.tuning at several values, the others as
    shipped: --cv picks its value on all conversations but one and scores it on the one left
    out (LoCoMo), five times."""
    from bench.support import recall_eval_methods as rm

    one = lambda lists: lists[0]  # noqa: E731
    methods = {
        "basic (keyword, shipped basic mode)": (["basic"], one, None),
        "mem0 search (before: dense + mem0 BM25 tie-break)": (["mem0"], one, None),
        "hybrid as shipped (memory.semantic.search)": (["hybrid"], one, None),
        "dense only": (["dense"], one, None),
        "bm25 only (ledger stats)": (["bm25"], one, None),
        "lexical only (memory.lexical)": (["lexical"], one, None),
        "rrf dense+coverage k=60": (["dense", "coverage"], rm.rrf, None),
    }
    # The shipped ranking composed step by step, at tuning's values but for one constant.
    beside = rm.write_neighbours()
    shipped = _shipped()

    def ranking(ls, **knobs):
        k = {**shipped, **knobs}
        fused = rm.with_neighbours(
            ls[:2], beside, dense_share=k["dense_share"], share=k["neighbour"], covered=k["covered"]
        )
        ranked = rm.with_cues(
            fused, ls[2], date_share=k["date_share"], subject_share=k["subject_share"]
        )
        return rm.dense_kept(ranked, ls[0], ls[1], keep=k["keep"])

    for knob, values in FAMILIES.items():
        for value in values:
            methods[f"{knob} {value:g} (the rest as in tuning)"] = (
                ["dense_about", "coverage", "question"],
                lambda ls, knob=knob, value=value: ranking(ls, **{knob: value}),
                (knob, value),
            )
    return methods


def _cross_validate(methods: dict, scores: dict, queries: list) -> list[list]:
    """Leave-one-company-out: per family, the weight best on the other companies' queries
    (mean R@5), scored on the left-out company's; the weights picked, in company order."""
    families: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for method, (_, _, family) in methods.items():
        if family:
            families[family[0]].append((family[1], method))
    companies = sorted({q.company for q in queries})
    rows = []
    for family, members in families.items():
        total, picks = 0.0, []
        for held in companies:

            def mean_r5(method: str, inside: bool, held: str = held) -> float:
                values = [
                    s["R@5"]
                    for q, (_, s) in zip(queries, scores[method], strict=True)
                    if (q.company == held) == inside
                ]
                return sum(values) / len(values)

            weight, best = max(members, key=lambda m: mean_r5(m[1], False))
            picks.append(f"{weight:g}")
            total += mean_r5(best, True) * sum(1 for q in queries if q.company == held)
        rows.append([family, f"{total / len(queries):.3f}", " ".join(picks)])
    return rows


def _score(evidence: set[int], ranked: list[int]) -> dict[str, float]:
    first = next((i for i, pk in enumerate(ranked[:TOP], start=1) if pk in evidence), None)
    return {
        "R@1": len(evidence & set(ranked[:1])) / len(evidence),
        "R@5": len(evidence & set(ranked[:5])) / len(evidence),
        "MRR@10": 1 / first if first else 0.0,
        "hit@5": float(bool(evidence & set(ranked[:5]))),
    }


def run(name: str, args: argparse.Namespace) -> None:
    from bench.support import recall_eval_data as rd

    # Only the memory app is migrated: the bench needs nothing else, and another app's
    # migration in progress must not stop it.
    semantic_env.setup(
        ledger=args.ledger,
        collection=f"recall_eval_{name}",
        data_dir="karani-recall-eval",
        apps=("memory",),
    )
    from memory import text as textmod
    from memory.models import Memory

    data = (
        rd.locomo(Path(args.locomo))
        if name == "locomo"
        else rd.jobsearch(background=args.background)
    )
    ids = _load(data)
    company_of = dict(Memory.objects.values_list("id", "company_key"))
    sources = _sources(args.depth, [q.text for q in data.queries], company_of)
    for name in filter(None, args.skip.split(",")):
        sources.pop(name)
    methods = {
        m: spec for m, spec in _methods(sources).items() if all(s in sources for s in spec[0])
    }
    scores: dict[str, list[tuple[str, dict]]] = defaultdict(list)
    times: dict[str, list[float]] = defaultdict(list)
    leaks: dict[str, int] = defaultdict(int)
    for query in data.queries:
        key = textmod.company_key(query.company) if query.company else None
        lists, spent = {}, {}
        for source, fn in sources.items():
            t0 = time.perf_counter()
            lists[source] = fn(query.text, key)
            spent[source] = time.perf_counter() - t0
        evidence = {ids[e] for e in query.evidence}
        for method, (needs, fuse, _) in methods.items():
            t0 = time.perf_counter()
            ranked = [pk for pk, _ in fuse([lists[s] for s in needs])][:TOP]
            times[method].append(1000 * (time.perf_counter() - t0 + sum(spent[s] for s in needs)))
            scores[method].append((query.category, _score(evidence, ranked)))
            if key is not None and any(company_of.get(pk) not in (key, None) for pk in ranked):
                leaks[method] += 1
    metrics = ["R@1", "R@5", "MRR@10", "hit@5"]
    rows = []
    for method in methods:
        values = [s for _, s in scores[method]]
        rows.append(
            [method, len(values)]
            + [f"{sum(v[m] for v in values) / len(values):.3f}" for m in metrics]
            + [leaks[method]]
            + [f"{semantic_env.pct(times[method], p):.1f}" for p in (50, 95)]
        )
    size = f"{len(data.facts)} facts, {len(data.queries)} queries, depth {args.depth}"
    print(f"\n## {data.name}: {size}\n")
    print(semantic_env.table(["method", "n", *metrics, "leaks", "p50 ms", "p95 ms"], rows))
    categories = sorted({c for c, _ in next(iter(scores.values()))})
    for metric in ("R@5", "MRR@10"):
        rows = []
        for method in methods:
            by_cat: dict[str, list[float]] = defaultdict(list)
            for cat, s in scores[method]:
                by_cat[cat].append(s[metric])
            rows.append([method] + [f"{sum(by_cat[c]) / len(by_cat[c]):.3f}" for c in categories])
        counts = [f"{c} ({sum(1 for q in data.queries if q.category == c)})" for c in categories]
        print(f"\n{metric} per category\n")
        print(semantic_env.table(["method", *counts], rows))
    # Fusion must not lose what the dense half finds where the lexical half cannot help.
    words = {f.key: set(textmod.tokens(f.text)) for f in data.facts}
    apart = [
        i
        for i, q in enumerate(data.queries)
        if not set(textmod.tokens(q.text)) & set().union(*(words[e] for e in q.evidence))
    ]
    if apart:
        rows = []
        for method in methods:
            picked = [scores[method][i][1] for i in apart]
            rows.append(
                [method] + [f"{sum(s[m] for s in picked) / len(picked):.3f}" for m in metrics]
            )
        print(f"\nQuestions sharing no content word with their evidence ({len(apart)})\n")
        print(semantic_env.table(["method", *metrics], rows))
    if args.cv and data.name == "locomo":
        print("\nLeave-one-conversation-out R@5 (weight picked on the other four)\n")
        rows = _cross_validate(methods, scores, data.queries)
        print(semantic_env.table(["family", "R@5", "weights picked"], rows))
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", help="the LoCoMo development split's directory")
    parser.add_argument("--jobsearch", action="store_true", help="the project's job-search set")
    parser.add_argument("--ledger", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--depth", type=int, default=30, help="candidates per source")
    parser.add_argument("--background", type=int, default=1000, help="noise facts (job search)")
    parser.add_argument(
        "--skip", default="", help="comma-separated sources to leave out (e.g. mem0,hybrid)"
    )
    parser.add_argument("--cv", action="store_true", help="LoCoMo: leave-one-out weights")
    parser.add_argument("--only", choices=["locomo", "jobsearch"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.only:
        run(args.only, args)
        return
    names = (["jobsearch"] if args.jobsearch or not args.locomo else []) + (
        ["locomo"] if args.locomo else []
    )
    try:
        load = os.getloadavg()
        print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    except OSError:
        pass
    # One process per dataset: each gets a fresh ledger and Django set up on it.
    for name in names:
        subprocess.run(
            [sys.executable, "-m", "bench.recall_eval", *sys.argv[1:], "--only", name], check=True
        )


if __name__ == "__main__":
    main()
