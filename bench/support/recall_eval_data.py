"""Datasets for bench/recall_eval.py, read into one shape: facts to load, queries to score.

- ``jobsearch``: the project's own set. tests/data/paraphrases.jsonl (each fact with a
  paraphrase query sharing no content word and a keyword query, plus distractors) and
  bench/data/jobsearch.jsonl (scope traps: a query scoped to one company whose best word
  match belongs to another company), over ``background`` generated facts
  (bench/support/ledgergen.py) as realistic noise.
- ``locomo``: the LoCoMo development split (Maharana et al., ACL 2024,
  github.com/snap-research/LoCoMo, CC BY-NC 4.0). Read from the directory given on the
  command line, never copied into this repository. Each conversation is its own company;
  there are no global facts.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent.parent
PARAPHRASES = BENCH_DIR.parent / "tests" / "data" / "paraphrases.jsonl"
TRAPS = BENCH_DIR / "data" / "jobsearch.jsonl"


@dataclass(frozen=True)
class Fact:
    key: str  # the dataset's id for the fact (evidence refers to it)
    text: str
    company: str | None = None
    created_at: str | None = None


@dataclass(frozen=True)
class Query:
    qid: str
    text: str
    company: str | None
    evidence: tuple[str, ...]
    category: str


@dataclass
class Dataset:
    name: str
    facts: list[Fact] = field(default_factory=list)
    queries: list[Query] = field(default_factory=list)


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def jobsearch(*, background: int) -> Dataset:
    data = Dataset("jobsearch")
    for n, record in enumerate(_jsonl(PARAPHRASES)):
        if "distractor" in record:
            data.facts.append(Fact(f"distractor-{n}", record["distractor"]))
            continue
        key = f"fact-{n}"
        data.facts.append(Fact(key, record["fact"], record["company"]))
        for style, text in (("paraphrase", record["query"]), ("keyword", record["keyword_query"])):
            data.queries.append(Query(f"{key}:{style}", text, record["company"], (key,), style))
    for n, record in enumerate(_jsonl(TRAPS)):
        key = f"trap-{n}"
        data.facts.append(Fact(key, record["fact"], record["company"]))
        data.facts.append(Fact(f"{key}:decoy", record["decoy"], record["decoy_company"]))
        data.queries.append(
            Query(f"{key}:scope", record["query"], record["company"], (key,), "scope-trap")
        )
    if background:
        from bench.support import ledgergen

        for n, fake in enumerate(ledgergen.chunk(0)[:background]):
            data.facts.append(Fact(f"bg-{n}", fake.text, fake.company))
    return data


def locomo(directory: Path) -> Dataset:
    data = Dataset("locomo")
    for record in _jsonl(directory / "memories.jsonl"):
        data.facts.append(Fact(record["id"], record["text"], record["scope"], record["ts"]))
    for record in _jsonl(directory / "queries.jsonl"):
        data.queries.append(
            Query(
                record["qid"],
                record["question"],
                record["scope"],
                tuple(record["evidence"]),
                record["category_name"],
            )
        )
    return data
