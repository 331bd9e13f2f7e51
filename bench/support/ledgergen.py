"""Synthetic but realistic job-search facts and recall queries for the ledger benchmarks.

Deterministic: chunk ``n`` of facts is always the same, so a bench database can grow
10k -> 100k -> 1M by appending chunks. Words follow a Zipf-like law (a few words such as
"remote" or "team" appear in a large share of facts, most words are rare), facts run 10-25
words, about a third are global and the rest belong to one of a few thousand companies.
"""

import itertools
import random
from bisect import bisect
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache

CHUNK = 10_000
# Zipf-Mandelbrot offset: flattens the head so the commonest word is in ~1 in 5 facts.
ZIPF_OFFSET = 8
EPOCH = datetime(2025, 1, 1, tzinfo=UTC)
SPAN_SECONDS = 700 * 24 * 3600

_PREFIXES = [
    "north",
    "south",
    "east",
    "west",
    "blue",
    "red",
    "green",
    "silver",
    "golden",
    "iron",
    "stone",
    "river",
    "lake",
    "harbor",
    "summit",
    "cedar",
    "maple",
    "pine",
    "oak",
    "birch",
    "aspen",
    "willow",
    "quantum",
    "vector",
    "nimbus",
    "stratus",
    "cirrus",
    "polar",
    "solar",
    "lunar",
    "stellar",
    "nova",
    "astra",
    "orbit",
    "pixel",
    "byte",
    "data",
    "cloud",
    "signal",
    "beacon",
    "anchor",
    "bridge",
    "forge",
    "atlas",
    "apex",
    "vertex",
    "zenith",
    "prism",
    "helix",
    "fusion",
    "kinetic",
    "lumen",
    "radiant",
    "swift",
    "rapid",
    "bright",
    "clear",
    "true",
    "open",
    "deep",
    "high",
    "grand",
    "prime",
    "first",
    "alpha",
    "beta",
    "gamma",
    "delta",
    "sigma",
    "omega",
]
_SUFFIXES = [
    "robotics",
    "labs",
    "systems",
    "analytics",
    "health",
    "bank",
    "payments",
    "logistics",
    "energy",
    "foods",
    "games",
    "media",
    "networks",
    "security",
    "software",
    "ai",
    "bio",
    "motors",
    "devices",
    "cloud",
    "data",
    "works",
    "studio",
    "capital",
    "insurance",
    "mobility",
    "learning",
    "retail",
    "markets",
]
_FORMS = ("", "", "", " gmbh", " inc", " ag", " group")

ROLES = [
    "backend engineer",
    "frontend engineer",
    "platform engineer",
    "data engineer",
    "ml engineer",
    "site reliability engineer",
    "engineering manager",
    "staff engineer",
    "principal engineer",
    "security engineer",
    "mobile developer",
    "data scientist",
    "devops engineer",
    "solutions architect",
    "product engineer",
    "qa engineer",
    "embedded developer",
    "analytics engineer",
    "tech lead",
    "cto",
]
TECH = [
    "python",
    "django",
    "flask",
    "fastapi",
    "postgres",
    "postgresql",
    "mysql",
    "redis",
    "kafka",
    "rabbitmq",
    "kubernetes",
    "docker",
    "terraform",
    "ansible",
    "aws",
    "gcp",
    "azure",
    "react",
    "vue",
    "angular",
    "typescript",
    "javascript",
    "golang",
    "rust",
    "java",
    "kotlin",
    "scala",
    "spark",
    "airflow",
    "dbt",
    "snowflake",
    "bigquery",
    "pytorch",
    "tensorflow",
    "llm",
    "elasticsearch",
    "graphql",
    "grpc",
    "linux",
    "nginx",
    "celery",
    "pandas",
    "numpy",
    "swift",
    "ios",
    "android",
    "flutter",
    "ruby",
    "rails",
    "php",
    "laravel",
    "elixir",
    "erlang",
    "haskell",
    "clojure",
    "c",
    "cpp",
    "cuda",
    "opencv",
    "ros",
    "embedded",
    "fpga",
    "verilog",
    "matlab",
    "sas",
    "tableau",
    "looker",
    "powerbi",
    "salesforce",
    "sap",
    "oracle",
    "mongodb",
    "cassandra",
    "dynamodb",
    "clickhouse",
    "duckdb",
    "prometheus",
    "grafana",
    "datadog",
    "sentry",
    "jenkins",
    "gitlab",
    "github",
    "circleci",
    "helm",
    "istio",
    "envoy",
    "vault",
    "consul",
    "nomad",
    "pulumi",
    "cdk",
    "lambda",
    "serverless",
    "webassembly",
]
LOCATIONS = [
    "berlin",
    "munich",
    "hamburg",
    "cologne",
    "frankfurt",
    "stuttgart",
    "vienna",
    "zurich",
    "geneva",
    "basel",
    "amsterdam",
    "rotterdam",
    "london",
    "manchester",
    "dublin",
    "paris",
    "lyon",
    "madrid",
    "barcelona",
    "lisbon",
    "porto",
    "milan",
    "rome",
    "warsaw",
    "krakow",
    "prague",
    "budapest",
    "copenhagen",
    "stockholm",
    "oslo",
    "helsinki",
    "tallinn",
    "riga",
    "vilnius",
    "brussels",
    "antwerp",
    "luxembourg",
    "leipzig",
    "dresden",
    "hannover",
    "nuremberg",
    "bremen",
]
# Ordered roughly by how often a job-search note would use them: the head of the Zipf curve.
COMMON = [
    "remote",
    "role",
    "team",
    "salary",
    "company",
    "interview",
    "position",
    "engineer",
    "senior",
    "hybrid",
    "office",
    "offer",
    "rejected",
    "applied",
    "recruiter",
    "manager",
    "onsite",
    "contract",
    "startup",
    "equity",
    "benefits",
    "relocation",
    "visa",
    "culture",
    "stack",
    "experience",
    "hiring",
    "process",
    "screen",
    "call",
    "technical",
    "product",
    "growth",
    "scale",
    "junior",
    "lead",
    "budget",
    "timezone",
    "days",
    "week",
    "travel",
    "flexible",
    "preference",
    "prefers",
    "avoid",
    "likes",
    "dislikes",
    "wants",
    "requires",
    "pay",
    "range",
    "base",
    "bonus",
    "parental",
    "leave",
    "vacation",
    "pension",
    "learning",
    "conference",
    "mentoring",
    "oncall",
    "pager",
    "night",
    "shifts",
    "weekend",
    "overtime",
    "commute",
    "train",
    "bike",
    "parking",
    "kitchen",
    "dog",
    "friendly",
    "german",
    "english",
    "language",
    "fluent",
    "required",
    "optional",
    "nice",
    "plus",
    "must",
]
RARE_PARTS = [
    "bra",
    "cor",
    "dal",
    "fen",
    "gar",
    "hol",
    "jin",
    "kel",
    "lor",
    "mar",
    "nep",
    "qui",
    "ros",
    "sul",
    "tav",
    "vel",
    "wyn",
    "xan",
    "yor",
    "zel",
    "ark",
    "bel",
    "cim",
    "dor",
    "eth",
    "fal",
    "gil",
    "har",
    "isk",
    "jor",
    "kal",
    "lum",
    "mor",
    "nor",
    "orv",
    "pel",
    "rin",
    "sar",
    "tor",
    "ulm",
    "vor",
    "wal",
]
OUTCOMES = [
    "got an offer",
    "was rejected after the onsite",
    "ghosted after the recruiter call",
    "withdrew after the salary talk",
    "passed the technical screen",
    "failed the take-home",
    "accepted the offer",
    "declined the offer",
    "moved to final round",
    "no reply after applying",
]
PREFERENCES = [
    "prefers fully remote roles",
    "wants at least four days remote",
    "avoids companies with on-call",
    "likes small teams",
    "wants equity",
    "avoids agencies",
    "prefers product companies",
    "needs visa sponsorship",
    "likes open source work",
    "avoids crypto",
    "prefers english speaking teams",
    "wants a four day week",
    "avoids relocation",
    "prefers hybrid near home",
]
KINDS = ("preference", "outcome", "question", "note")
KIND_WEIGHTS = (30, 30, 10, 30)


@lru_cache(maxsize=1)
def companies() -> list[str]:
    """A few thousand generated company names ("Northwind Robotics" style), fixed order."""
    names = sorted(
        f"{p.capitalize()} {s.capitalize()}{f.title()}"
        for p, s, f in itertools.product(_PREFIXES, _SUFFIXES, _FORMS)
    )
    names = sorted(set(names))
    random.Random(7).shuffle(names)
    return names[:3000]


@lru_cache(maxsize=1)
def vocabulary() -> tuple[list[str], list[float]]:
    """Ranked content words with cumulative Zipf weights (s = 1.0)."""
    rare = [a + b + c for a, b, c in itertools.product(RARE_PARTS, RARE_PARTS, ("", "a", "o"))]
    words = [*COMMON, *TECH, *LOCATIONS, *(r.split()[0] for r in ROLES), *rare]
    seen: dict[str, None] = dict.fromkeys(words)
    ranked = list(seen)
    cum = list(itertools.accumulate(1.0 / (rank + ZIPF_OFFSET) for rank in range(len(ranked))))
    return ranked, cum


def _zipf_word(rng: random.Random) -> str:
    words, cum = vocabulary()
    return words[bisect(cum, rng.random() * cum[-1])]


def _company_index(rng: random.Random) -> int:
    # Company popularity is itself skewed: some companies collect many notes.
    return (
        min(int(rng.paretovariate(1.2)) - 1, len(companies()) - 1)
        if rng.random() < 0.3
        else rng.randrange(len(companies()))
    )


@dataclass(frozen=True)
class FakeFact:
    text: str
    kind: str
    company: str | None
    created_at: datetime
    last_seen_at: datetime


def _sentence(rng: random.Random, kind: str, company: str | None) -> str:
    parts: list[str] = []
    if kind == "outcome":
        role = rng.choice(ROLES)
        parts += [f"{rng.choice(ROLES if rng.random() < 0.5 else [role])}:", rng.choice(OUTCOMES)]
    elif kind == "preference":
        parts.append(rng.choice(PREFERENCES))
    elif kind == "question":
        parts.append(f"ask whether the {rng.choice(ROLES)} role")
    else:
        parts.append(f"{rng.choice(ROLES)} in {rng.choice(LOCATIONS)}")
    if company and rng.random() < 0.35:
        parts.append(f"at {company}")
    parts.append(f"uses {rng.choice(TECH)} and {rng.choice(TECH)}")
    target = rng.randint(10, 25)
    words = sum(len(p.split()) for p in parts)
    # At least five free words: with them, two generated facts are (practically) never the
    # same fact, so bulk loading never has to resolve duplicates.
    filler = [_zipf_word(rng) for _ in range(max(5, target - words))]
    return " ".join(parts + filler)


def chunk(n: int, *, seed: int = 2026) -> list[FakeFact]:
    """The ``n``-th block of CHUNK facts (identical on every call)."""
    rng = random.Random(seed * 1_000_003 + n)
    names = companies()
    out: list[FakeFact] = []
    seen: set[tuple[str, str, str | None]] = set()
    while len(out) < CHUNK:
        kind = rng.choices(KINDS, KIND_WEIGHTS)[0]
        company = None if rng.random() < 0.35 else names[_company_index(rng)]
        created = EPOCH + timedelta(seconds=rng.randrange(SPAN_SECONDS))
        last_seen = created
        if rng.random() < 0.2:  # touched again later
            last_seen = created + timedelta(seconds=rng.randrange(30 * 24 * 3600))
        text = _sentence(rng, kind, company)
        if (text, kind, company) in seen:
            continue
        seen.add((text, kind, company))
        out.append(FakeFact(text, kind, company, created, last_seen))
    return out


@dataclass(frozen=True)
class FakeQuery:
    label: str
    query: str
    company: str | None


def queries(count: int, *, seed: int = 99) -> list[FakeQuery]:
    """A mixed set like qualify and people send: 2-6 content words, some scoped."""
    rng = random.Random(seed)
    names = companies()
    words, _ = vocabulary()
    out = []
    for i in range(count):
        mix = i % 5
        n = rng.randint(2, 6)
        if mix == 0:  # common words only: the slow case for an inverted index
            q = [rng.choice(COMMON[:30]) for _ in range(n)]
            out.append(FakeQuery("common", " ".join(q), None))
        elif mix == 1:  # scoped posting-style query
            company = names[_company_index(rng)]
            q = [rng.choice(ROLES), *(_zipf_word(rng) for _ in range(n - 2))]
            out.append(FakeQuery("scoped", " ".join(q), company))
        elif mix == 2:  # names a company in the text
            company = names[_company_index(rng)]
            q = [company, rng.choice(TECH), *(_zipf_word(rng) for _ in range(n - 2))]
            out.append(FakeQuery("names-co", " ".join(q), None))
        elif mix == 3:  # rare words
            q = [rng.choice(words[-3000:]) for _ in range(n)]
            out.append(FakeQuery("rare", " ".join(q), None))
        else:  # Zipf mix, the typical case
            q = [_zipf_word(rng) for _ in range(n)]
            out.append(
                FakeQuery("zipf", " ".join(q), rng.choice([None, names[_company_index(rng)]]))
            )
    return out
