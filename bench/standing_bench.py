"""Which standing preferences the budget shows, per order, on two data sets, in one run.

    .venv/bin/python -m bench.standing_bench [--prefeval ../shared/data/prefeval-dev]
        [--modes basic,mem0] [--ledger sqlite|postgres]

Decisions: bench/data/decisions.json (karani's own; 67 unscoped preferences, 22 of them
deciding, over 40 postings): deciding facts among what ``POST /api/context`` shows (the
standing part and the 5-fact ranked block) and the postings shown all of theirs.

PrefEval (Zhao et al., ICLR 2025; CC BY-NC 4.0; read from the directory given, never copied
here): nobody on the team wrote it. Each topic's stated preferences (about 50, twice the
budget) become one candidate's unscoped preferences, alone in the ledger; each of its questions
is the posting (``Subject(task=question)``), and it succeeds when its own preference is in the
standing part. ``by chance`` is the share of a topic's preferences the part shows.

Each order runs beside today's (as it was before this bench: a two-line opening, a left-out
line naming the admin's list too, hard constraints first, then the posting's recall score).
"""

import argparse
import json
import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

os.environ.setdefault("KARANI_BENCH_VECTOR_DB", "karani_standing_bench_vectors")
os.environ.setdefault("KARANI_BENCH_LEDGER_DB", "karani_standing_bench_ledger")
from bench.support import semantic_env

DECISIONS = Path(__file__).resolve().parent / "data" / "decisions.json"
FIELDS = ("company", "title", "role_category", "location", "remote", "salary", "description")
# Today's opening and left-out line, as they were before the one-line opening.
TODAY_OPENING = (
    "## Standing preferences: the candidate's own criteria, shown in every decision\n"
    "These are the candidate's standing preferences, in their own words; a correction "
    "replaces what it corrects."
)
TODAY_LEFT_OUT = (
    "- ({} more standing preferences left out here, bearing least on this posting; all of "
    "them: `karani list --kind preference --global` or "
    "/admin/memory/memory/?company=-&kind__exact=preference&status=live)"
)


@contextmanager
def _patched(module: object, name: str, value: object) -> Iterator[None]:
    kept = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, kept)


@contextmanager
def today() -> Iterator[None]:
    """The part as it was: two-line opening, the long left-out line, recall's score, and "No
    adtech" soft (spaCy's parse alone)."""
    from qualify import constraint, context, standing

    constraint.is_hard.cache_clear()
    with ExitStack() as stack:
        stack.callback(constraint.is_hard.cache_clear)
        stack.enter_context(_patched(constraint, "NEGATIVE_DETERMINERS", frozenset()))
        stack.enter_context(_patched(standing, "HEADER", TODAY_OPENING))
        stack.enter_context(_patched(standing, "OPENING_CHARS", len(TODAY_OPENING)))
        stack.enter_context(_patched(standing, "omitted_line", TODAY_LEFT_OUT.format))
        stack.enter_context(_patched(context, "affinity", lambda found, queries: {}))
        yield


@contextmanager
def compact_recall_score() -> Iterator[None]:
    """Today's order (recall's score) in the one-line opening and the short left-out line."""
    from qualify import context

    with _patched(context, "affinity", lambda found, queries: {}):
        yield


@contextmanager
def no_hard_tier() -> Iterator[None]:
    """The landed order without hard constraints first: the posting's score, then shorter."""
    from qualify import standing

    def by_score(found, score_of, budget=None):
        return sorted(found, key=lambda f: (-score_of(f), len(f.text)))

    with _patched(standing, "rank", by_score):
        yield


@contextmanager
def recall_score_no_hard_tier() -> Iterator[None]:
    """Recall's score, then shorter: neither affinity nor hard constraints first."""
    with compact_recall_score(), no_hard_tier():
        yield


@contextmanager
def hard_by_word_list() -> Iterator[None]:
    """The landed order with hard constraints by the word list (as without the memory extra)."""
    from qualify import constraint

    kept = constraint._tried, constraint._nlp
    constraint._tried, constraint._nlp = True, None
    constraint.is_hard.cache_clear()
    try:
        yield
    finally:
        constraint._tried, constraint._nlp = kept
        constraint.is_hard.cache_clear()


@contextmanager
def landed() -> Iterator[None]:
    yield


ORDERS: dict[str, Callable[[], object]] = {
    "today (two-line opening, recall's score)": today,
    "one-line opening, recall's score": compact_recall_score,
    "one-line opening, recall's score, no hard tier": recall_score_no_hard_tier,
    "one-line opening, affinity, no hard tier": no_hard_tier,
    "one-line opening, hard by word list, affinity": hard_by_word_list,
    "one-line opening, hard, affinity (landed)": landed,
}


def _load(records: list[dict]) -> list[int]:
    """An empty ledger and index holding ``records`` alone; their ids in order."""
    from bench.context_bench import _load as load
    from memory import services
    from memory.models import Memory

    for pk in Memory.objects.values_list("id", flat=True):
        services.forget(id=pk, reason="the next data set")
    return load(records)


def decisions(modes: list[str], rows: list[list[str]]) -> None:
    from django.conf import settings

    from qualify import context

    data = json.loads(DECISIONS.read_text())
    facts = data["facts"]
    ids = _load([{"text": f["text"], "kind": f["kind"], "company": f["company"]} for f in facts])
    key_of = dict(zip(ids, [f["key"] for f in facts], strict=True))
    postings = data["postings"]
    subjects = [context.Subject(**{k: p[k] for k in FIELDS}) for p in postings]
    for mode in modes:
        settings.KARANI_MEMORY = mode
        for name, order in ORDERS.items():
            found = total = complete = shown = 0
            with order():
                for p, subject in zip(postings, subjects, strict=True):
                    selection = context.select(subject)
                    keys = {key_of.get(f.id) for f in selection.shown}
                    hit = sum(k in keys for k in p["deciding"])
                    found += hit
                    total += len(p["deciding"])
                    complete += hit == len(p["deciding"])
                    shown += len(selection.standing)
            n = len(postings)
            rows.append(
                [
                    "decisions",
                    mode,
                    name,
                    f"{found / total:.2f}",
                    f"{complete}/{n}",
                    f"{shown / n:.1f}",
                ]
            )
            print(*rows[-1], sep=" | ", flush=True)


def prefeval(directory: Path, modes: list[str], rows: list[list[str]]) -> None:
    from django.conf import settings

    from qualify import context

    prefs = [json.loads(line) for line in (directory / "memories.jsonl").open()]
    questions = [json.loads(line) for line in (directory / "queries.jsonl").open()]
    topics = sorted({p["scope"] for p in prefs})
    hits = {(m, n): 0 for m in modes for n in ORDERS}
    shown = {(m, n): 0.0 for m in modes for n in ORDERS}
    for topic in topics:
        own = [p for p in prefs if p["scope"] == topic]
        # A preference stated twice in a topic is one fact.
        texts = list(dict.fromkeys(p["text"] for p in own))
        ids = _load([{"text": t, "kind": "preference", "company": None} for t in texts])
        id_of = dict(zip(texts, ids, strict=True))
        wanted = {p["id"]: id_of[p["text"]] for p in own}
        for mode in modes:
            settings.KARANI_MEMORY = mode
            for name, order in ORDERS.items():
                with order():
                    for q in (q for q in questions if q["scope"] == topic):
                        selection = context.select(context.Subject(task=q["question"]))
                        standing = {f.id for f in selection.standing}
                        hits[mode, name] += all(wanted[e] in standing for e in q["evidence"])
                        shown[mode, name] += len(standing) / (
                            len(standing) + selection.standing_omitted
                        )
    n = len(questions)
    for mode in modes:
        for name in ORDERS:
            rows.append(
                [
                    f"PrefEval ({len(topics)} topics)",
                    mode,
                    name,
                    f"{hits[mode, name] / n:.2f}",
                    "",
                    f"by chance {shown[mode, name] / n:.2f}",
                ]
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefeval", help="PrefEval's development directory (CC BY-NC)")
    parser.add_argument("--ledger", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--modes", default="basic,mem0")
    args = parser.parse_args()
    semantic_env.setup(ledger=args.ledger, collection="karani_standing_bench")
    modes = args.modes.split(",")
    rows: list[list[str]] = []
    decisions(modes, rows)
    if args.prefeval:
        prefeval(Path(args.prefeval), modes, rows)
    headers = ["data", "mode", "standing order", "deciding / own shown", "complete", "shown"]
    print(semantic_env.table(headers, rows))


if __name__ == "__main__":
    main()
