"""The working-context block, beside the seed's builder in the same run, in both modes.

    .venv/bin/python -m bench.context_bench [--prefeval ../shared/data/prefeval-dev]
        [--ledger sqlite|postgres] [--background 0] [--modes basic,mem0] [--shares 0.4]
        [--late CHARS] [--markup plain|html|escaped] [--builders "NAME;NAME"]

Decisions: bench/data/decisions.json (karani's own: one candidate's 71 unscoped facts, 67 of
them preferences and most deciding nothing, and facts on a dozen companies; 40 postings, each
labelled with the facts that decide it). Per mode and
builder: the share of deciding facts in the 5-fact block and in the 10-fact block (the most a
reranker of its ten candidates could bring into five), the postings whose block holds all of
theirs, the block size, and the latency (p50/p95 ms) of building the block.

PrefEval (Zhao et al., ICLR 2025; github.com/amazon-science/PrefEval; CC BY-NC 4.0) is read
from the directory given, never copied here: each preference is a fact of its topic (company =
topic), each question is sent as Subject(task=question, company=topic); R@1, R@5 (the
preference in the 5-fact block), R@10 (a reranker's ceiling) and MRR@10, beside keyword-only
and dense-only ranking.

--late CHARS puts other postings' descriptions before each one's until it is CHARS long, so
its deciding sentences come late. --markup html|escaped sends each description as job boards'
APIs deliver it (bench/support/posting_shapes.py).

--background N adds N ledgergen facts (a third unscoped) before timing, and a second latency
table with each description grown past 3,000 characters. Each dataset gets a fresh ledger
(``karani_context_bench_ledger`` on PostgreSQL, or SQLite under the temp dir) and its own
pgvector collection in ``karani_context_bench_vectors``.

--builders "NAME;NAME" runs only the builders named (the seed's always): the pass options are
what ``encoder.pass_model`` chooses, int8, bfloat16 and float32 copies, and one search after
encoding.
"""

import argparse
import copy
import json
import os
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
os.environ.setdefault("KARANI_BENCH_VECTOR_DB", "karani_context_bench_vectors")
os.environ.setdefault("KARANI_BENCH_LEDGER_DB", "karani_context_bench_ledger")
from bench.support import posting_shapes, semantic_env  # noqa: E402

DECISIONS = BENCH_DIR / "data" / "decisions.json"
BLOCK = 5
WARMUP = 3


def _load(records: list[dict], *, index: bool = True) -> list[int]:
    """Import the records in basic mode, index them in one reindex; their ledger ids."""
    from django.conf import settings

    from memory import services
    from memory.models import Memory
    from memory.semantic import reindex

    settings.KARANI_MEMORY = "basic"
    before = set(Memory.objects.values_list("id", flat=True))
    report = services.import_facts(records=enumerate(records, start=1), batch_size=1000)
    assert not report.rejected, report.rejected[:3]
    settings.KARANI_MEMORY = "mem0"
    if index:
        reindex.reindex()
    return sorted(set(Memory.objects.values_list("id", flat=True)) - before)


def _background(n: int, *, index: bool) -> None:
    from bench.support import ledgergen

    records = []
    for c in range(max(1, n // ledgergen.CHUNK)):
        for f in ledgergen.chunk(c)[: n - c * ledgergen.CHUNK]:
            records.append({"text": f.text, "kind": f.kind, "company": f.company})
    _load(records, index=index)


def seed_block(subject, limit: int = BLOCK) -> list:
    """The seed's builder: one query of company, title and role category (and task)."""
    from qualify import context

    found, _ = context.recall_facts(
        subject.company, query=context.recall_query(subject), limit=limit
    )
    return [f.id for f in found]


def new_block(subject, limit: int = BLOCK) -> list:
    """The ranked block alone, with every fact in it (qualify-v3-context's builder)."""
    from qualify import context

    return [f.id for f in context.select(subject, limit=limit, with_standing=False).facts]


# The standing part's size per call of standing_block (characters, preferences left out).
STANDING_SIZES: list[tuple[int, int]] = []


def standing_block(subject, limit: int = BLOCK) -> list:
    """What the model is shown today: the standing preferences, then the ranked block."""
    from qualify import context, standing

    selection = context.select(subject, limit=limit)
    part = standing.StandingPart(selection.standing, selection.standing_omitted, budget=0)
    STANDING_SIZES.append((len(standing.render(part)), selection.standing_omitted))
    return [f.id for f in selection.shown]


def standing_posting_order(subject, limit: int = BLOCK) -> list:
    """``standing_block`` with the standing part in the posting's order alone (before hard
    constraints came first), newest first among equals."""
    from qualify import standing

    ranked = standing.rank
    standing.rank = lambda found, score_of: sorted(found, key=lambda f: -score_of(f))
    try:
        return standing_block(subject, limit)
    finally:
        standing.rank = ranked


def standing_word_list(subject, limit: int = BLOCK) -> list:
    """``standing_block`` as without the memory extra: hard constraints by the word list."""
    from qualify import constraint

    kept = constraint._tried, constraint._nlp
    constraint._tried, constraint._nlp = True, None
    constraint.is_hard.cache_clear()
    try:
        return standing_block(subject, limit)
    finally:
        constraint._tried, constraint._nlp = kept
        constraint.is_hard.cache_clear()


def cold_block(subject, limit: int = BLOCK) -> list:
    """The new block with no query vector kept from an earlier posting (semantic mode)."""
    from memory.semantic import encoder

    encoder.forget_queries()
    return new_block(subject, limit)


# The loaded model's copies in other weights, made once, for the pass options compared.
_COPIES: dict = {}


def in_weights(build, weights: str):
    """``build`` with a posting's pieces encoded by a copy of the loaded model in ``weights``
    (``int8``, ``bfloat16`` or ``float32``), whatever ``encoder.pass_model`` chooses."""

    def copied(model):
        import torch

        from memory.semantic import encoder

        key = (id(model), weights)
        if key not in _COPIES:
            if weights == "int8":  # quantisation reads float32 weights; bfloat16 widens exactly
                _COPIES[key] = encoder._int8(copy.deepcopy(model).float())
            else:
                _COPIES[key] = copy.deepcopy(model).to(getattr(torch, weights))
        return _COPIES[key]

    def built(subject, limit: int = BLOCK) -> list:
        from memory.semantic import encoder

        chosen = encoder.pass_model
        encoder.pass_model = copied
        try:
            return build(subject, limit)
        finally:
            encoder.pass_model = chosen

    return built


def searched_after(build):
    """``build`` searching once every piece is encoded, as before the searches overlapped
    the encoding pass by pass."""

    def built(subject, limit: int = BLOCK) -> list:
        from memory.semantic import encoder

        passes = encoder.queries_in_passes

        def one_pass(client, texts):
            vectors = [None] * len(texts)
            for at, found in passes(client, texts):
                for n, vector in zip(at, found, strict=True):
                    vectors[n] = vector
            yield list(range(len(texts))), vectors

        encoder.queries_in_passes = one_pass
        try:
            return build(subject, limit)
        finally:
            encoder.queries_in_passes = passes

    return built


def standing_cold(subject, limit: int = BLOCK) -> list:
    """``standing_block`` with no query vector kept (semantic mode)."""
    from memory.semantic import encoder

    encoder.forget_queries()
    return standing_block(subject, limit)


def per_piece_block(subject, limit: int = BLOCK) -> list:
    """The new block with one ranking read per piece, as before the batched reads: a keyword
    read each (keyword mode), or a vector search each (semantic mode), no vector kept."""
    from memory import keyword
    from memory.semantic import encoder, search

    encoder.forget_queries()

    batched = keyword.search_many, search.nearest_many

    def one_by_one_words(*, queries, **scope):
        return [batched[0](queries=[q], **scope)[0] for q in queries]

    def one_by_one_vectors(client, vectors, **scope):
        return [batched[1](client, [v], **scope)[0] for v in vectors]

    keyword.search_many, search.nearest_many = one_by_one_words, one_by_one_vectors
    try:
        return new_block(subject, limit)
    finally:
        keyword.search_many, search.nearest_many = batched


BUILDERS = {
    "seed (company+title+role, one list)": seed_block,
    "new (pieces + shares)": new_block,
    "standing + ranked block": standing_block,
    "standing in the posting's order + ranked block": standing_posting_order,
    "standing, hard by word list + ranked block": standing_word_list,
    "new, none kept": cold_block,
    "new, int8 passes, none kept": in_weights(cold_block, "int8"),
    "new, bfloat16 passes, none kept": in_weights(cold_block, "bfloat16"),
    "new, float32 passes, none kept": in_weights(cold_block, "float32"),
    "new, a query per piece": per_piece_block,
    "standing + ranked block, none kept": standing_cold,
    "standing + ranked block, int8 passes, none kept": in_weights(standing_cold, "int8"),
    "standing + ranked block, bfloat16 passes, none kept": in_weights(standing_cold, "bfloat16"),
    "standing + ranked block, float32 passes, none kept": in_weights(standing_cold, "float32"),
    "standing + ranked block, one search after encoding, none kept": searched_after(standing_cold),
}


def _builders(mode: str, only: str = "") -> dict:
    # Only semantic mode keeps query vectors; keyword mode encodes nothing.
    found = {n: b for n, b in BUILDERS.items() if mode == "mem0" or "none kept" not in n}
    # The seed's builder always, as every figure's baseline.
    asked = [w for w in only.split(";") if w]
    return {n: b for n, b in found.items() if not asked or n.startswith("seed") or n in asked}


def _timed(build, subjects: list) -> tuple[list[list[int]], list[float]]:
    """Blocks and times for the postings in order, as a batch runs: the new builder keeps the
    query vectors of the sentences it meets, so it starts with none kept."""
    from memory.semantic import encoder

    encoder.forget_queries()
    blocks, times = [], []
    for i, subject in enumerate(subjects * 2 if len(subjects) < 30 else subjects):
        t0 = time.perf_counter()
        block = build(subject)
        elapsed = (time.perf_counter() - t0) * 1000
        if i < len(subjects):
            blocks.append(block)
        if i >= WARMUP:
            times.append(elapsed)
    return blocks, times


def _interleaved(builders: dict, subjects: list) -> dict[str, list[float]]:
    """Each builder's times, the builders taking turns on each posting (twice over), so that a
    shared machine's load falls on all of them alike."""
    from memory.semantic import encoder

    encoder.forget_queries()
    times: dict[str, list[float]] = {name: [] for name in builders}
    for i, subject in enumerate(subjects * 2):
        for name, build in builders.items():
            t0 = time.perf_counter()
            build(subject)
            if i >= WARMUP:
                times[name].append((time.perf_counter() - t0) * 1000)
    return times


def decisions(args) -> None:
    from django.conf import settings

    from qualify.context import Subject

    data = json.loads(DECISIONS.read_text())
    facts = data["facts"]
    index = "mem0" in args.modes
    records = [{"text": f["text"], "kind": f["kind"], "company": f["company"]} for f in facts]
    ids = _load(records, index=index)
    key_of = dict(zip(ids, [f["key"] for f in facts], strict=True))
    postings = data["postings"]
    fields = ("company", "title", "role_category", "location", "remote", "salary", "description")
    subjects = [Subject(**{k: p[k] for k in fields}) for p in postings]
    if args.late:
        subjects = posting_shapes.late(subjects, args.late)
    if args.markup != "plain":
        from dataclasses import replace

        escaped = args.markup == "escaped"
        shaped = [posting_shapes.as_html(s.description, escaped=escaped) for s in subjects]
        subjects = [replace(s, description=d) for s, d in zip(subjects, shaped, strict=True)]
    print(
        f"decision set: {len(facts)} facts ({sum(f['company'] is None for f in facts)} "
        f"unscoped), {len(postings)} postings, {sum(len(p['deciding']) for p in postings)} "
        f"deciding facts; descriptions as {args.markup}"
        + (f", each after others' to {args.late} characters" if args.late else ""),
        flush=True,
    )
    if args.background:
        _background(args.background, index=index)
        print(f"+ {args.background} ledgergen facts in the ledger", flush=True)
    rows = []
    for mode in args.modes.split(","):
        settings.KARANI_MEMORY = mode
        for share in [float(s) for s in args.shares.split(",")]:
            settings.KARANI_CONTEXT_COMPANY_SHARE = share
            for name, build in _builders(mode, args.builders).items():
                if name.startswith("seed") and share != float(args.shares.split(",")[0]):
                    continue
                blocks, times = _timed(build, subjects)
                # What a reranker of the 10-fact block's candidates could put in 5 at most.
                ceiling = [build(s, 10) for s in subjects]
                found = total = complete = in_ten = 0
                misses = []
                for p, block, ten in zip(postings, blocks, ceiling, strict=True):
                    keys = {key_of.get(i) for i in block}
                    hit = [k for k in p["deciding"] if k in keys]
                    found += len(hit)
                    total += len(p["deciding"])
                    complete += len(hit) == len(p["deciding"])
                    in_ten += sum(key_of.get(i) in p["deciding"] for i in ten)
                    misses += [f"{p['id']}:{k}" for k in p["deciding"] if k not in keys]
                label = name if name.startswith("seed") else f"{name}, share {share:g}"
                if build in (standing_block, standing_posting_order, standing_word_list):
                    sizes = STANDING_SIZES[-len(subjects) :]
                    left_out = [o for _, o in sizes]
                    print(
                        f"{mode}, {label}: standing part at most {max(c for c, _ in sizes)} "
                        f"characters; {sum(o > 0 for o in left_out)}/{len(sizes)} blocks say "
                        f"how many they left out (mean {sum(left_out) / len(sizes):.1f})",
                        flush=True,
                    )
                rows.append(
                    [
                        mode,
                        label,
                        f"{found / total:.2f}",
                        f"{in_ten / total:.2f}",
                        f"{complete}/{len(postings)}",
                        f"{sum(map(len, blocks)) / len(blocks):.1f}",
                        f"{semantic_env.pct(times, 50):.1f}",
                        f"{semantic_env.pct(times, 95):.1f}",
                    ]
                )
                if args.verbose:
                    print(mode, label, "missed:", " ".join(misses), file=sys.stderr)
    print(
        semantic_env.table(
            [
                "mode",
                "builder",
                "deciding shown",
                "in 10",
                "complete",
                "size",
                "p50 ms",
                "p95 ms",
            ],
            rows,
        )
    )
    if args.background:
        _long_latency(args, subjects)


def _long_latency(args, subjects: list) -> None:
    """Each posting's description grown past 3,000 characters with the next one's."""
    from dataclasses import replace

    from django.conf import settings

    long = []
    for i, s in enumerate(subjects):
        grown = s.description
        j = i + 1
        while len(grown) < 3000:
            grown += "\n\n" + subjects[j % len(subjects)].description
            j += 1
        long.append(replace(s, description=grown[:3200]))
    rows = []
    for mode in args.modes.split(","):
        settings.KARANI_MEMORY = mode
        builders = _builders(mode, args.builders)
        # The builder that keeps vectors runs alone: the others' cold starts would drop them.
        timed = {n: _timed(b, long)[1] for n, b in builders.items() if b is new_block}
        timed |= _interleaved({n: b for n, b in builders.items() if b is not new_block}, long)
        for name, times in timed.items():
            rows.append(
                [
                    mode,
                    name,
                    f"{semantic_env.pct(times, 50):.1f}",
                    f"{semantic_env.pct(times, 95):.1f}",
                ]
            )
    print(f"\nlatency, 3,000-3,200-character descriptions, {args.background} background facts")
    print(semantic_env.table(["mode", "builder", "p50 ms", "p95 ms"], rows))


def prefeval(args) -> None:
    from django.conf import settings

    from memory import keyword
    from memory import text as textmod
    from memory.semantic import client as clientmod
    from memory.semantic import search
    from memory.semantic.encoder import embed_query
    from qualify.context import Subject

    directory = Path(args.prefeval)
    prefs = [json.loads(line) for line in (directory / "memories.jsonl").open()]
    questions = [json.loads(line) for line in (directory / "queries.jsonl").open()]
    from memory.models import Memory

    _load([{"text": p["text"], "kind": "preference", "company": p["scope"]} for p in prefs])
    # A preference stated twice in one topic is one fact: score by (topic, text).
    key_of = {
        m.id: (m.company_key, m.text) for m in Memory.objects.only("id", "company_key", "text")
    }
    evidence_of = {p["id"]: (textmod.company_key(p["scope"]), p["text"]) for p in prefs}
    print(f"\nPrefEval ({directory}): {len(prefs)} preferences, {len(questions)} tasks", flush=True)

    def keyword_only(q, topic):
        hits = keyword.search(query=q, company_key=textmod.company_key(topic), limit=10)
        return [h.memory_id for h in hits]

    def dense_only(q, topic):
        client = clientmod.get()
        found = client.store.search(
            query=q,
            vectors=embed_query(client, q),
            top_k=30,
            filters=search.scope_filters(textmod.company_key(topic)),
        )
        order = []
        for r in sorted(found, key=lambda r: -float(r.score)):
            pk = (r.payload or {}).get("ledger_id")
            if isinstance(pk, int) and pk not in order:
                order.append(pk)
        return order[:10]

    methods = {"keyword only (keyword.search)": (keyword_only, None)}
    for mode in args.modes.split(","):
        methods[f"{mode}: seed builder"] = (
            lambda q, t: seed_block(Subject(task=q, company=t), limit=10),
            mode,
        )
        methods[f"{mode}: new builder"] = (
            lambda q, t: new_block(Subject(task=q, company=t), limit=10),
            mode,
        )
    if "mem0" in args.modes:
        methods["dense only (bundled MiniLM)"] = (dense_only, "mem0")
    rows = []
    for name, (rank, mode) in methods.items():
        settings.KARANI_MEMORY = mode or "basic"
        r1 = r5 = r10 = mrr = 0.0
        times = []
        for q in questions:
            t0 = time.perf_counter()
            order = [key_of.get(i) for i in rank(q["question"], q["scope"])]
            times.append((time.perf_counter() - t0) * 1000)
            want = {evidence_of[e] for e in q["evidence"]}
            r1 += bool(want & set(order[:1]))
            r5 += len(want & set(order[:BLOCK])) / len(want)
            r10 += len(want & set(order[:10])) / len(want)
            mrr += next((1 / (i + 1) for i, k in enumerate(order[:10]) if k in want), 0.0)
        n = len(questions)
        rows.append(
            [
                name,
                f"{r1 / n:.3f}",
                f"{r5 / n:.3f}",
                f"{r10 / n:.3f}",
                f"{mrr / n:.3f}",
                f"{semantic_env.pct(times, 50):.1f}",
                f"{semantic_env.pct(times, 95):.1f}",
            ]
        )
    print(semantic_env.table(["ranking", "R@1", "R@5", "R@10", "MRR@10", "p50 ms", "p95 ms"], rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefeval", help="PrefEval's development directory (CC BY-NC)")
    parser.add_argument("--ledger", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--background", type=int, default=0)
    parser.add_argument("--modes", default="basic,mem0")
    parser.add_argument("--shares", default="0.4", help="company shares to compare, e.g. 0.2,0.4")
    parser.add_argument("--part", choices=("all", "decisions", "prefeval"), default="all")
    parser.add_argument(
        "--late",
        type=int,
        default=0,
        metavar="CHARS",
        help="put other postings' descriptions before each one's until it is CHARS long",
    )
    parser.add_argument(
        "--markup",
        choices=("plain", "html", "escaped"),
        default="plain",
        help="descriptions as written, as one line of HTML, or as entity-escaped HTML",
    )
    parser.add_argument(
        "--builders", default="", help="builder names to run, separated by ; (the seed's always)"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="list the misses")
    args = parser.parse_args()
    if args.part == "all":
        # One process per dataset: each needs a ledger of its own facts only.
        argv = [a for a in sys.argv[1:] if a != "--part"]
        run = [sys.executable, "-m", "bench.context_bench", *argv, "--part"]
        subprocess.run([*run, "decisions"], check=True)
        if args.prefeval:
            subprocess.run([*run, "prefeval"], check=True)
        return
    semantic_env.setup(ledger=args.ledger, collection=f"karani_context_{args.part}")
    decisions(args) if args.part == "decisions" else prefeval(args)


if __name__ == "__main__":
    main()
