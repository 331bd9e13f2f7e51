"""Extraction on writes against a real local model: indexing, latency, karani's overhead, and
what the model kept of each fact.

    scripts/local-llm start
    .venv/bin/python -m bench.extraction_bench [--url URL] [--ledger sqlite|postgres]

The job-search facts (scripts/demo.jsonl and tests/data/paraphrases.jsonl, 74 in all) are
remembered twice in the same run, each block after an untimed warm-up write:
- ``verbatim`` (no LLM): the baseline, ``remember`` with the index written as-is;
- ``extraction``: KARANI_LLM_BASE_URL set; mem0's LLM call is timed on its own (a wrapper
  round ``generate_response``), so ``remember - LLM`` is karani's part of such a write.
Then the same live rows are reindexed verbatim into a second collection, and the paraphrase
queries run against both indexes (recall@1 / @5), next to word-level measures of what the
extracted statements kept of, and added to, each fact.

Databases: its own (``karani_localmodel_*``); the ledger is SQLite under the temp dir unless
``--ledger postgres``.
"""

import argparse
import io
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("KARANI_BENCH_VECTOR_DB", "karani_localmodel_vec_bench")
os.environ.setdefault("KARANI_BENCH_LEDGER_DB", "karani_localmodel_ledger_bench")

from bench.support import semantic_env

ROOT = Path(__file__).resolve().parent.parent
# Function words left out of the kept/added word counts.
_FUNCTION_WORDS = (
    "the a an and or of to in on at for with by from is are was were be been it its this that "
    "she he her his they them their who which what when where how about after before than "
    "then only also not no any all per into over under more most very"
)
STOP = frozenset(_FUNCTION_WORDS.split())


def content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9][a-z0-9'+-]*", text.casefold()) if w not in STOP}


def key_terms(text: str) -> set[str]:
    """Numbers and capitalised names after the first word: what extraction must keep."""
    words = re.findall(r"[\w'+-]+", text)
    return {w.casefold() for w in words[1:] if w[0].isupper() or any(c.isdigit() for c in w)}


def load_facts() -> tuple[list[dict], list[dict]]:
    facts = []
    for line in (ROOT / "scripts" / "demo.jsonl").read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            facts.append({"text": record["text"], "company": record.get("company")})
    queries = []
    for line in (ROOT / "tests" / "data" / "paraphrases.jsonl").read_text().splitlines():
        record = json.loads(line)
        if "distractor" in record:
            facts.append({"text": record["distractor"], "company": None})
        else:
            facts.append({"text": record["fact"], "company": record["company"]})
            queries.append(record)
    return facts, queries


class TimedLLM:
    """Wraps mem0's ``llm.generate_response`` to time the LLM call alone."""

    def __init__(self) -> None:
        self.calls: list[float] = []
        self.replies: list[str] = []

    def install(self, llm) -> None:
        if getattr(llm, "_bench_timed", False):
            return
        inner = llm.generate_response

        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                reply = inner(*args, **kwargs)
            finally:
                self.calls.append(time.perf_counter() - started)
            self.replies.append(reply)
            return reply

        llm.generate_response = timed
        llm._bench_timed = True


def remember_block(facts: list[dict], timer: TimedLLM | None) -> list[dict]:
    from memory import services
    from memory.semantic import client as clientmod

    if timer is not None:
        timer.install(clientmod.get().memory.llm)
    rows = []
    for fact in facts:
        before = len(timer.calls) if timer else 0
        started, cpu_started = time.perf_counter(), time.process_time()
        result = services.remember(text=fact["text"], company=fact["company"])
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        llm = sum(timer.calls[before:]) if timer else 0.0
        replies = timer.replies[before:] if timer else []
        rows.append(
            {"id": result.id, "wall": wall, "cpu": cpu, "llm": llm, "replies": replies, **fact}
        )
    return rows


def forget_all(rows: list[dict]) -> None:
    from memory import services

    for row in rows:
        services.forget(id=row["id"], reason="extraction bench: baseline block done")


def indexed_texts(collection: str) -> dict[int, list[str]]:
    import psycopg
    from django.conf import settings
    from psycopg import sql

    with psycopg.connect(settings.KARANI_VECTOR_DSN) as conn:
        found = conn.execute(
            sql.SQL("SELECT (payload->>'ledger_id')::int, payload->>'data' FROM {}").format(
                sql.Identifier(collection)
            )
        ).fetchall()
    by_row: dict[int, list[str]] = {}
    for ledger_id, text in found:
        by_row.setdefault(ledger_id, []).append(text)
    return by_row


def recall_at(queries: list[dict], ids: dict[str, int]) -> tuple[float, float]:
    from memory import selectors

    top1 = top5 = 0
    for q in queries:
        got = [r.id for r in selectors.recall(query=q["query"], company=q["company"]).results]
        top1 += bool(got[:1] == [ids[q["fact"]]])
        top5 += ids[q["fact"]] in got[:5]
    return top1 / len(queries), top5 / len(queries)


def extraction_code_times(facts: list[dict], replies: list[str]) -> list[float]:
    """Extraction's own CPU per write: prompt, fit check, reply parse and credential check."""
    from memory.semantic import extraction

    plan = extraction.Budget(4096, extraction.MAX_COMPLETION_TOKENS, "bench")
    times = []
    for fact, reply in zip(facts, replies, strict=False):
        started = time.perf_counter()
        extraction.fits(fact["text"], plan)
        extraction.messages_for(fact["text"])
        extraction.clean(extraction.parse(reply))
        times.append(time.perf_counter() - started)
    return times


def _same(a: str, b: str) -> bool:
    return a.casefold().strip().rstrip(".!") == b.casefold().strip().rstrip(".!")


def outcome(row: dict) -> str:
    """What became of one extraction-mode write."""
    from memory.semantic import extraction

    if not row["replies"]:
        return "no LLM call (prompt too large, or LLM skipped after a failure)"
    parsed = extraction.parse(row["replies"][-1])
    if not parsed:
        return "reply unusable (no JSON, cut off, empty) -> verbatim"
    kept = extraction.clean(parsed)
    if not kept:
        return "statements dropped (credential, length) -> verbatim"
    if len(kept) == 1 and _same(kept[0], row["text"]):
        return "model repeated the fact"
    return "distilled"


def ms(values: list[float], p: float) -> str:
    return f"{semantic_env.pct(values, p) * 1000:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=os.environ.get("KARANI_LLM_BASE_URL", ""))
    parser.add_argument("--model", default=os.environ.get("KARANI_LLM_MODEL", "local-model"))
    parser.add_argument("--ledger", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--limit", type=int, help="only the first N facts (a quick look)")
    args = parser.parse_args()
    url = args.url or _script_url()
    if not url:
        sys.exit("extraction_bench: no model: run scripts/local-llm start, or pass --url")

    stamp = time.strftime("%Y%m%d%H%M%S")
    extract_col, verbatim_col = f"lm_extract_{stamp}", f"lm_verbatim_{stamp}"
    semantic_env.setup(ledger=args.ledger, collection=extract_col)
    from django.conf import settings
    from django.core.management import call_command

    from memory import services
    from memory.models import Memory
    from memory.semantic import client as clientmod

    settings.KARANI_LLM_MODEL = args.model
    settings.KARANI_LLM_TIMEOUT = 120.0
    facts, queries = load_facts()
    if args.limit:
        facts = facts[: args.limit]
        queries = [q for q in queries if q["fact"] in {f["text"] for f in facts}]
    load_before = os.getloadavg()

    # Baseline: verbatim writes (no LLM), after one untimed write that loads the embedder.
    settings.KARANI_LLM_BASE_URL = ""
    warm = services.remember(text="Warm-up fact for the verbatim block")
    verbatim = remember_block(facts, None)
    forget_all([*verbatim, {"id": warm.id}])

    settings.KARANI_LLM_BASE_URL = url
    timer = TimedLLM()
    warm = services.remember(text="Warm-up fact for the extraction block")
    timer.install(clientmod.get().memory.llm)
    timer.calls.clear()
    extracted = remember_block(facts, timer)
    load_after = os.getloadavg()
    services.forget(id=warm.id, reason="extraction bench: warm-up")

    ids = {r["text"]: r["id"] for r in extracted}
    pending = Memory.objects.filter(pk__in=ids.values(), indexed_at__isnull=True).count()
    budget = clientmod.get().llm_budget
    by_row = indexed_texts(extract_col)
    recall_extract = recall_at(queries, ids)

    settings.KARANI_VECTOR_COLLECTION = verbatim_col
    call_command("reindex", stdout=io.StringIO(), stderr=io.StringIO())
    recall_verbatim = recall_at(queries, ids)

    outcomes = {r["id"]: outcome(r) for r in extracted}
    went_verbatim = [r for r in extracted if by_row.get(r["id"]) == [r["text"]]]
    distilled = [r for r in extracted if outcomes[r["id"]] == "distilled"]
    kept, added, terms = [], [], []
    statements = []
    for r in distilled:
        source, out = content_words(r["text"]), content_words(" ".join(by_row[r["id"]]))
        kept.append(len(source & out) / max(1, len(source)))
        added.append(len(out - source) / max(1, len(out)))
        wanted = key_terms(r["text"])
        if wanted:
            terms.append(len(wanted & out) / len(wanted))
        statements.append(len(by_row[r["id"]]))

    code = extraction_code_times(facts, timer.replies)
    wall_v = [r["wall"] for r in verbatim]
    wall_e = [r["wall"] for r in extracted]
    # The process's own CPU (all its threads): what karani spends, whatever the load; the
    # server's work happens in another process, so the LLM call adds only its HTTP client.
    cpu_v, cpu_e = [r["cpu"] for r in verbatim], [r["cpu"] for r in extracted]
    llm = [r["llm"] for r in extracted if r["llm"]]
    own = [r["wall"] - r["llm"] for r in extracted]
    own_distilled = [r["wall"] - r["llm"] for r in distilled]
    n = len(extracted)

    print(
        f"extraction bench · {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · "
        f"{os.cpu_count()} cores · load {load_before[0]:.1f} -> {load_after[0]:.1f} · "
        f"{args.ledger} ledger · {n} facts · model {args.model} at {url} · context "
        f"{budget.context} ({budget.source}), completion <= {budget.completion} tokens"
    )
    print()
    print(
        semantic_env.table(
            ["path (ms per remember)", "n", "p50", "p95"],
            [
                ["verbatim remember (baseline, no LLM)", len(wall_v), ms(wall_v, 50),
                 ms(wall_v, 95)],
                ["extraction remember (wall)", n, ms(wall_e, 50), ms(wall_e, 95)],
                ["  of which the LLM call", len(llm), ms(llm, 50), ms(llm, 95)],
                ["  karani's own part (wall - LLM)", n, ms(own, 50), ms(own, 95)],
                ["  karani's own part, distilled rows", len(own_distilled), ms(own_distilled, 50),
                 ms(own_distilled, 95)],
                ["  extraction code alone (prompt, parse, credential check)", len(code),
                 ms(code, 50), ms(code, 95)],
                ["process CPU per verbatim remember", len(cpu_v), ms(cpu_v, 50), ms(cpu_v, 95)],
                ["process CPU per extraction remember", n, ms(cpu_e, 50), ms(cpu_e, 95)],
            ],
        )
    )  # fmt: skip
    print()
    print(
        semantic_env.table(
            ["indexing", "value"],
            [
                ["indexed without reindex", f"{n - pending}/{n} ({(n - pending) / n:.0%})"],
                ["index holds exactly the fact's text", f"{len(went_verbatim)}/{n}"],
                *[[f"  {name}", f"{sum(o == name for o in outcomes.values())}/{n}"]
                  for name in sorted(set(outcomes.values()))],
                ["statements per distilled fact (median)",
                 f"{statistics.median(statements) if statements else 0:g}"],
            ],
        )
    )  # fmt: skip
    print()
    print(
        semantic_env.table(
            ["what extraction kept (distilled facts)", "median", "min"],
            [
                ["fact's content words kept", _share(kept, statistics.median), _share(kept, min)],
                ["names and numbers kept", _share(terms, statistics.median), _share(terms, min)],
                ["statement words not in the fact", _share(added, statistics.median),
                 _share(added, max) + " (max)"],
            ],
        )
    )  # fmt: skip
    print()
    print(
        semantic_env.table(
            [f"paraphrase recall ({len(queries)} queries)", "@1", "@5"],
            [
                ["index of extracted statements", f"{recall_extract[0]:.0%}",
                 f"{recall_extract[1]:.0%}"],
                ["verbatim index, same rows", f"{recall_verbatim[0]:.0%}",
                 f"{recall_verbatim[1]:.0%}"],
            ],
        )
    )  # fmt: skip
    beyond = (semantic_env.pct(own, 50) - semantic_env.pct(wall_v, 50)) * 1000
    beyond_cpu = (semantic_env.pct(cpu_e, 50) - semantic_env.pct(cpu_v, 50)) * 1000
    print(
        f"\nextraction's cost beyond the LLM call, p50: wall {ms(own, 50)} - {ms(wall_v, 50)}"
        f" = {beyond:+.1f} ms; CPU {ms(cpu_e, 50)} - {ms(cpu_v, 50)} = {beyond_cpu:+.1f} ms"
    )
    print()
    print("samples (fact -> indexed statements):")
    for r in distilled[:6]:
        print(f"  {r['text']}\n    -> {' | '.join(by_row[r['id']])}")
    clientmod.discard_all()


def _share(values: list[float], how) -> str:
    return f"{how(values):.0%}" if values else "-"


def _script_url() -> str:
    port = ROOT / "var" / "models" / "llm-server.port"
    return f"http://127.0.0.1:{port.read_text().strip()}/v1" if port.exists() else ""


if __name__ == "__main__":
    main()
