"""The effect, end to end: karani's decision set qualified by a real model under three prompts.

    export KARANI_LLM_BASE_URL=$(scripts/local-llm url)
    .venv/bin/python -m bench.decision_effect [--limit N] [--modes basic,mem0]
        [--versions qualify-v1,qualify-v3-context,qualify-v5-standing] [-v]

Decisions: bench/data/decisions.json (one candidate's facts, 40 postings, the facts that decide
each) and bench/data/decision_verdicts.json (karani's own verdict labels). The candidate's
profile is a short plain summary; their preferences are the unscoped facts in memory. Each
posting is asked under three prompt versions by default, through karani's own code (replay's
path: qualify.preparation.prompt_for, qualify.agent.ask, qualify.verdict.decide):

    qualify-v1           memory off (no block)
    qualify-v3-context   the ranked block alone (qualify.context.select)
    qualify-v5-standing  the standing preferences (qualify.standing), then the ranked block

qualify-v2-memory (the seed's block, qualify.context.select_seed) is asked when named. Per
version: agreement with the labels, verdict counts, prompt size, seconds per posting; for the
memory versions the standing preferences shown (and left out), the deciding facts among all
the facts shown, and "ignored": postings shown a deciding fact that settles a dealbreaker while
the verdict disagrees with the label (listed below the table). Reported, not gated. A fresh
SQLite ledger under the temp dir; mem0 mode also needs PostgreSQL with pgvector (semantic_env),
and indexes facts verbatim (KARANI_MEMORY_EXTRACTION=off) so that set-up asks the model nothing.
"""

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
os.environ.setdefault("KARANI_BENCH_VECTOR_DB", "karani_effect_bench_vectors")
os.environ.setdefault("KARANI_MEMORY_EXTRACTION", "off")
# A 2-core CPU answers a ~1,000-token prompt in well over qualify's default 30 s.
os.environ.setdefault("KARANI_LLM_TIMEOUT", "180")
from bench.support import semantic_env  # noqa: E402

DATA = BENCH_DIR / "data"
VERSIONS = ("qualify-v1", "qualify-v3-context", "qualify-v5-standing")
PROFILE = "Senior software engineer with about ten years of backend and infrastructure work."
# The candidate's dealbreakers (g11, g12, g18 and g22 are wishes, not dealbreakers) and the
# company facts that settle one, either way.
DEALBREAKERS = {f"g{n:02d}" for n in (*range(1, 11), 13, 14, 15, 16, 17, 19, 20, 21)}
SETTLES = {
    *("n1", "n2", "x1", "x2", "i1", "i2", "c1", "c2", "t1", "w1", "f2", "f3"),
    *("l1", "l2", "a1", "p1", "b1"),
}


def setup(modes: list[str]) -> tuple[list, dict[int, str], dict, dict]:
    """Facts into a fresh ledger, the postings and the profile: (postings, key of each fact
    id, the decision set's posting records by id, labels)."""
    from django.conf import settings

    from bench.context_bench import _load
    from qualify import services
    from qualify.models import Posting

    data = json.loads((DATA / "decisions.json").read_text())
    labels = json.loads((DATA / "decision_verdicts.json").read_text())
    facts = data["facts"]
    records = [{"text": f["text"], "kind": f["kind"], "company": f["company"]} for f in facts]
    ids = _load(records, index="mem0" in modes)
    settings.KARANI_MEMORY = modes[0]
    key_of = dict(zip(ids, [f["key"] for f in facts], strict=True))
    # The import reads "Hybrid (2 days)" as boards write it (qualify.remote_policy).
    fields = ("company", "title", "role_category", "location", "remote", "salary", "description")
    rows = [{k: p[k] for k in fields} for p in data["postings"]]
    report = services.import_postings(records=enumerate(rows, start=1))
    assert report.created == len(rows), report.to_dict()
    services.set_profile(summary=PROFILE, preferences="", dealbreakers=[])
    postings = list(Posting.objects.select_related("company").order_by("id"))
    return postings, key_of, {p["id"]: p for p in data["postings"]}, labels


def ask(client, version, posting, profile, pool) -> dict:
    """One posting under one version, as replay asks it."""
    from qualify import agent, verdict
    from qualify.preparation import prompt_for

    started = time.perf_counter()
    prepared = prompt_for(version, posting=posting, profile=profile, pool=pool)
    chars = sum(len(m["content"]) for m in prepared.messages)
    client.elapsed_ms, calls = 0.0, client.calls
    answer = agent.ask(client, prepared.messages, posting, tools=version.agent)
    decided = verdict.decide(answer.criteria) if answer.criteria is not None else None
    return {
        "verdict": decided.verdict if decided else "error",
        "error": answer.error,
        "criteria": answer.criteria,
        "facts": [f.id for f in prepared.standing] + [f.id for f in prepared.facts],
        "standing": len(prepared.standing),
        "standing_omitted": prepared.standing_omitted,
        "memory_error": prepared.memory_error,
        "chars": chars,
        "calls": client.calls - calls,
        "llm_s": client.elapsed_ms / 1000,
        "wall_s": time.perf_counter() - started,
    }


def counting(client):
    """The client, counting its requests (a retry on an invalid reply is a second one)."""
    complete, client.calls = client.complete, 0

    def counted(*args, **kwargs):
        client.calls += 1
        return complete(*args, **kwargs)

    client.complete = counted
    return client


def run(args) -> None:

    from qualify import llm
    from qualify.few_shot import FewShotPool
    from qualify.models import Profile

    modes = args.modes.split(",")
    postings, key_of, cases, labels = setup(modes)
    ids = list(cases)[: args.limit] if args.limit else list(cases)
    profile = Profile.current()
    pool = FewShotPool(candidates=[])  # no verdicts with outcomes yet: no few-shot examples
    client = counting(llm.ChatClient(llm.LLMConfig.from_settings()))
    config = client.config
    print(f"model: {config.base_url} ({config.model}), timeout {config.timeout:g}s")
    print(f"{len(ids)} postings; labels: {dict(Counter(labels[i]['verdict'] for i in ids))}")
    results: dict[tuple[str, str], dict] = {}
    t0 = time.perf_counter()
    try:
        _ask_all(args, client, modes, cases, postings, ids, profile, pool, key_of, results)
    except KeyboardInterrupt:  # Ctrl-C (or kill -INT): report the postings fully asked
        asked = Counter(k[2] for k in results)
        ids = [i for i in ids if asked[i] == max(asked.values(), default=0)]
        print(f"interrupted: reporting the {len(ids)} postings asked under every version")
    wall = time.perf_counter() - t0
    report(results, ids, cases, labels, args.verbose)
    calls = sum(r["calls"] for r in results.values())
    llm_s = sum(r["llm_s"] for r in results.values())
    print(
        f"\nwall time {wall:.0f} s; {calls} model calls ({len(results)} verdicts asked), "
        f"{llm_s / max(calls, 1):.1f} s per call; slowest call {max_call(results):.1f} s"
    )


def _ask_all(args, client, modes, cases, postings, ids, profile, pool, key_of, results) -> None:
    from django.conf import settings

    from qualify import prompts

    for mode in modes:
        settings.KARANI_MEMORY = mode
        for pid, posting in zip(list(cases), postings, strict=True):
            if pid not in ids:
                continue
            for name in args.versions.split(","):
                if name == prompts.PRE_MEMORY and mode != modes[0]:
                    continue  # no memory: the same prompt in every mode
                key = ("off" if name == prompts.PRE_MEMORY else mode, name)
                r = ask(client, prompts.VERSIONS[name], posting, profile, pool)
                r["keys"] = [key_of.get(i, "?") for i in r["facts"]]
                results[(*key, pid)] = r
                print(
                    f"  {mode:5} {pid} {name:19} {r['verdict']:9} {r['llm_s']:5.1f}s "
                    f"{r['chars']:5} chars  shown {' '.join(r['keys']) or '-'}"
                    + (f"  ERROR {r['error'][:80]}" if r["error"] else ""),
                    file=sys.stderr,
                    flush=True,
                )


def mean(got: list[dict], field: str) -> float:
    return sum(r[field] for r in got) / len(got)


def max_call(results: dict) -> float:
    return max((r["llm_s"] / max(r["calls"], 1) for r in results.values()), default=0.0)


def report(results, ids, cases, labels, verbose) -> None:
    groups = list(dict.fromkeys(k[:2] for k in results))
    rows, ignored = [], []
    for mode, name in groups:
        got = [results[(mode, name, pid)] for pid in ids]
        agree = sum(r["verdict"] == labels[pid]["verdict"] for pid, r in zip(ids, got, strict=True))
        counts = Counter(r["verdict"] for r in got)
        found = total = complete = wrong = 0
        for pid, r in zip(ids, got, strict=True):
            deciding = cases[pid]["deciding"]
            hit = [k for k in deciding if k in r["keys"]]
            found, total = found + len(hit), total + len(deciding)
            complete += len(hit) == len(deciding)
            held = [k for k in hit if k in DEALBREAKERS or k in SETTLES]
            if name != "qualify-v1" and held and r["verdict"] != labels[pid]["verdict"]:
                wrong += 1
                ignored.append((mode, name, pid, held, r["verdict"], labels[pid]["verdict"]))
        memory = name != "qualify-v1"
        rows.append(
            [
                mode,
                name,
                f"{agree}/{len(ids)}",
                f"{agree / len(ids):.2f}",
                f"{counts['qualified']}/{counts['rejected']}/{counts['error']}",
                f"{sum(r['chars'] for r in got) / len(got):.0f}",
                f"{sum(r['llm_s'] for r in got) / len(got):.1f}",
                f"{mean(got, 'standing'):.1f} / {mean(got, 'standing_omitted'):.1f}"
                if memory
                else "-",
                f"{found}/{total}" if memory else "-",
                f"{complete}/{len(ids)}" if memory else "-",
                str(wrong) if memory else "-",
            ]
        )
    headers = ["memory", "prompt version", "agree", "share", "Q/R/err", "prompt chars"]
    headers += ["LLM s/posting", "standing shown / left out", "deciding shown", "all deciding"]
    headers += ["ignored"]
    print(semantic_env.table(headers, rows))
    print("\nignored: shown a deciding dealbreaker fact, the verdict disagrees")
    for mode, name, pid, held, got, want in ignored:
        print(f"  {mode:5} {name:19} {pid}  facts {','.join(held):8} verdict {got} (label {want})")
    if not ignored:
        print("  (none)")
    print("\nper posting (label, then each version's verdict: Q, R or E)")
    for pid in ids:
        marks = [results[(m, v, pid)]["verdict"][0].upper() for m, v in groups]
        print(f"  {pid} {labels[pid]['verdict'][0].upper()}  {' '.join(marks)}")
    if verbose:
        for (mode, name, pid), r in sorted(results.items(), key=lambda kv: kv[0][2]):
            print(f"{pid} {mode} {name}: {json.dumps(r['criteria'])} {r['error']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, help="only the first N postings")
    parser.add_argument("--modes", default="basic", help="basic, mem0 or basic,mem0")
    parser.add_argument("--versions", default=",".join(VERSIONS), help="prompt versions to ask")
    parser.add_argument("-v", "--verbose", action="store_true", help="each reply's criteria")
    args = parser.parse_args()
    semantic_env.setup(ledger="sqlite", collection="karani_effect_decisions")
    run(args)


if __name__ == "__main__":
    main()
