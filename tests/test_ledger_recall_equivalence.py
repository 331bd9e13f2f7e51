"""Keyword recall from the term bitmaps ranks exactly like a brute-force scan (issue 2).

memory.bitmaps scores every fact at once from per-block bitsets, then picks the newest facts
of each score level either by fetching them (few) or by walking the recency index (many).
Whatever path a query takes, and however the ledger got there (imports, touches, forgets,
corrections, or a rebuild from the facts), the result must be the spec's ranking:
score = distinct query words in the fact + 1 when the query names the fact's company;
scope = the company's facts plus global ones; ties by last_seen_at, then id, newest first.
These tests build a random ledger of a few thousand facts (small vocabulary, coarse
timestamps so ties are common, some facts forgotten, corrected or touched) and compare every
query's ranking with a reference computed in Python from every live fact.
"""

import contextlib
import random
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from django.db.models import F

from memory import bitmaps, keyword, services
from memory import text as textmod
from memory.errors import MemoryInputError
from memory.models import Memory, TermBitmap

COMPANIES = ["Northwind Robotics", "Acme", "Blue Harbor Labs", "Remote First Inc", "Zeta"]
# Skewed on purpose: the first words land in most facts, the last in a handful.
VOCAB = [
    *[
        "remote",
        "python",
        "team",
        "salary",
        "offer",
        "rejected",
        "senior",
        "django",
        "kafka",
        "berlin",
        "onsite",
        "equity",
    ],
    *[
        "startup",
        "recruiter",
        "golang",
        "rust",
        "visa",
        "budget",
        "pager",
        "oncall",
        "harbor",
        "robotics",
        "blue",
        "zeta",
    ],
    *[
        "kubernetes",
        "terraform",
        "mentoring",
        "pension",
        "relocation",
        "bonus",
        "flexible",
        "weekend",
        "commute",
    ],
]
STOP = ["the", "and", "of", "with", "at"]


def _fact_text(rng: random.Random) -> str:
    n = rng.randint(3, 12)
    words = [VOCAB[min(int(rng.expovariate(0.12)), len(VOCAB) - 1)] for _ in range(n)]
    words += rng.sample(STOP, 2)
    rng.shuffle(words)
    text = " ".join(words)
    return text.capitalize() + rng.choice([".", "!", "", " (again)"])


@pytest.fixture
def small_blocks(monkeypatch) -> None:
    """256-fact blocks, so a ledger of a thousand-odd facts spans several blocks."""
    monkeypatch.setattr(bitmaps, "BLOCK_BITS", 256)
    monkeypatch.setattr(bitmaps, "BLOCK_BYTES", 32)


@pytest.fixture
def random_ledger(db) -> random.Random:
    """~1,500 live facts plus forgotten, corrected and touched ones; many recency ties."""
    rng = random.Random(20261202)
    records = []
    for i in range(1600):
        company = rng.choice([None, None, *COMPANIES, rng.choice(COMPANIES).upper()])
        records.append((i + 1, {"text": _fact_text(rng), "company": company}))
    services.import_facts(records=records)
    ids = list(Memory.objects.order_by("id").values_list("id", flat=True))
    base = datetime(2026, 1, 1, tzinfo=UTC)
    stamps = {}
    for mid in ids:
        # A few dozen distinct instants for thousands of facts: the id tie-break matters.
        stamps.setdefault(rng.randrange(40), []).append(mid)
    for hour, mids in stamps.items():
        Memory.objects.filter(pk__in=mids).update(last_seen_at=base + timedelta(hours=hour))
    for mid in rng.sample(ids, 100):
        services.forget(id=mid, reason="equivalence test")
    live = list(Memory.objects.values_list("id", flat=True))
    for mid in rng.sample(live, 40):
        old = Memory.objects.get(pk=mid)
        # The corrected text may already exist as another fact: then nothing changes.
        with contextlib.suppress(MemoryInputError):
            services.correct(id=mid, text=old.text + " golang", reason="equivalence test")
    # One-at-a-time writes take the single-fact path (karani_bits_set on Postgres); with
    # small blocks their rows cross from offset lists to bitsets.
    for _ in range(60):
        services.remember(text=_fact_text(rng), company=rng.choice([None, *COMPANIES]))
    for mid in rng.sample(live, 100):
        fact = Memory.objects.filter(pk=mid).first()
        if fact is not None:
            services.remember(text=fact.text, kind=fact.kind, company=fact.company)
    Memory.objects.filter(pk__in=rng.sample(ids, 50)).update(seen_count=F("seen_count") + 1)
    return rng


@pytest.fixture
def reference(random_ledger) -> Callable[[str, str | None, int], list[tuple[int, float]]]:
    """The spec, computed in Python from a snapshot of every live fact."""
    facts = [
        (m.pk, m.company_key, m.last_seen_at, frozenset(textmod.tokens(m.text)))
        for m in Memory.objects.all()
    ]

    def rank(query: str, company: str | None, limit: int) -> list[tuple[int, float]]:
        qtokens = set(textmod.tokens(query)[: textmod.MAX_QUERY_TOKENS])
        scope = None if company is None else textmod.company_key(company)
        named = set(keyword.named_company_keys(query, scope))
        ranked = []
        for pk, company_key, last_seen, tokens in facts:
            if scope is not None and company_key not in (scope, None):
                continue
            score = len(qtokens & tokens)
            if company_key is not None and company_key in named:
                score += keyword.COMPANY_BOOST
            if score:
                ranked.append((score, last_seen, pk))
        ranked.sort(reverse=True)
        return [(pk, float(score)) for score, _, pk in ranked[:limit]]

    return rank


def _queries(rng: random.Random, count: int) -> list[tuple[str, str | None, int]]:
    out = []
    for _ in range(count):
        pool = VOCAB[: rng.choice([4, 8, 16, len(VOCAB)])]
        words = [rng.choice(pool) for _ in range(rng.randint(1, 6))]
        if rng.random() < 0.3:
            words.insert(rng.randrange(len(words) + 1), rng.choice(COMPANIES))
        if rng.random() < 0.2:
            words.append(rng.choice(STOP))
        scope = rng.choice([None, None, None, *COMPANIES, "Nobody Knows Ltd"])
        out.append((" ".join(words), scope, rng.choice([1, 3, 5, 5, 10, 40, 100])))
    return out


def _ranking(query: str, company: str | None, limit: int) -> list[tuple[int, float]]:
    result = services.recall(query=query, company=company, limit=limit)
    # Each path reads the winners' rows its own way (on Postgres, inside the tie-break):
    # what recall shows must be the stored row of the fact it ranked.
    shown = {
        f.id: (f.id, f.text, f.kind, f.company, f.ref, f.created_at, f.last_seen_at)
        for f in result.results
    }
    stored = Memory.objects.filter(pk__in=shown).values_list(*keyword.ROW_FIELDS)
    assert shown == {row[0]: row for row in stored}
    return [(f.id, f.score) for f in result.results]


@pytest.fixture
def paths(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """Counts which way each score level's newest facts were found."""
    seen: Counter = Counter()
    for name in ("_fetch_newest", "_walk_newest", "_walk_newest_pg"):
        original = getattr(bitmaps, name)

        def spy(*args, _original=original, _name=name, **kwargs):
            seen[_name] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(bitmaps, name, spy)
    return seen


def _check_every_path(rng: random.Random, reference, paths: Counter, monkeypatch) -> None:
    # DIRECT_MIN moves the line between fetching a score level's facts and walking the
    # recency index for them: each setting must give the reference ranking. A one-row
    # first window makes the Postgres walk widen its window again and again.
    for direct_min, window in ((256, 256), (0, 256), (0, 1), (10**9, 256)):
        monkeypatch.setattr(bitmaps, "DIRECT_MIN", direct_min)
        monkeypatch.setattr(bitmaps, "WALK_MIN_WINDOW", window)
        monkeypatch.setattr(bitmaps, "WALK_SPREAD", 2 if window > 1 else 0)
        for query, company, limit in _queries(rng, 120):
            assert _ranking(query, company, limit) == reference(query, company, limit), (
                direct_min,
                window,
                query,
                company,
                limit,
            )
    assert paths["_walk_newest"] + paths["_walk_newest_pg"] > 0
    assert paths["_fetch_newest"] > 0


def test_it_ranks_like_a_full_scan(random_ledger, reference, paths, monkeypatch):
    _check_every_path(random_ledger, reference, paths, monkeypatch)


def test_it_ranks_like_a_full_scan_across_many_id_blocks(
    small_blocks, random_ledger, reference, paths, monkeypatch
):
    _check_every_path(random_ledger, reference, paths, monkeypatch)


def _bitset(stored: bytes) -> bytes:
    return bytes(bitmaps.decode(bytes(stored))).rstrip(b"\0")


def test_it_rebuilds_the_same_bitmaps_the_writes_maintained(small_blocks, random_ledger):
    # Compared as bitsets: the writes keep offsets in arrival order, a rebuild sorts them.
    maintained = {(b.term, b.block): _bitset(b.bits) for b in TermBitmap.objects.all()}
    TermBitmap.objects.all().delete()
    bitmaps.rebuild()
    rebuilt = {(b.term, b.block): _bitset(b.bits) for b in TermBitmap.objects.all()}
    # Maintained rows whose bits were all cleared by forgets are simply absent after a rebuild.
    assert {k: v for k, v in maintained.items() if v} == rebuilt


def test_it_keeps_other_companies_out_of_a_scope(random_ledger, reference):
    ranking = _ranking("remote python Acme", "Nobody Knows Ltd", 100)
    assert ranking == reference("remote python Acme", "Nobody Knows Ltd", 100)
    assert ranking  # global facts still answer
    assert {Memory.objects.get(pk=pk).company_key for pk, _ in ranking} == {None}
    assert keyword.search(query="zzz unknownword", company_key=None, limit=5) == []
