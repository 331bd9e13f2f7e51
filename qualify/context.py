"""Working context: the facts that bear on one posting (or an agent's task), each with why it is
there. qualify's prompt, the context API and the MCP ``context`` tool all build it here.

Two parts. The candidate's standing preferences (every live unscoped preference) are shown
whatever the posting says, within a character budget (qualify.standing). The ranked block holds
everything else: every field and sentence of the posting is its own recall query
(qualify.pieces); a fact's score is its best score over them. The company's facts and the
candidate's other unscoped facts are ranked apart and each side gets its share of the block
(KARANI_CONTEXT_COMPANY_SHARE); a share one side leaves empty goes to the other.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from memory import modes, selectors
from memory.services import Kind
from memory.text import company_key
from qualify import standing as standing_part
from qualify.conf import settings
from qualify.models import MAX_FACTS_PER_DECISION, Posting
from qualify.pieces import Piece, excerpt, matched_words, pieces

log = logging.getLogger("karani.qualify")

MAX_QUERY_CHARS = 500
# Facts each piece's recall returns: enough that both sides of the block find candidates.
PER_PIECE = 10
# A fact close to two parts of the posting outranks one close to a single part by this share
# of its second-best score (a cosine); a keyword count only breaks ties with it, since one
# common word in every boilerplate sentence must not add up past two words in one sentence.
SECOND_SHARE = {"dense": 0.5, "keyword": 0.01}
# The company's own query makes every one of its facts a candidate for its share; a fact only
# it found scores at this weight, and a fact the posting's own words bring ignores it.
COMPANY_PIECE_WEIGHT = 0.5
# Recalling "as of" a past moment drops newer facts after ranking, so it asks for more.
AS_OF_OVERFETCH = 4
# The refs of the facts qualify writes after a verdict and an outcome.
PIPELINE_REFS = ("qualification:", "outcome:")


def fact_cap(limit: int | None = None) -> int:
    """Facts per block: ``limit`` or KARANI_MEMORY_TOP_K, never more than 10 whatever is asked."""
    wanted = settings.KARANI_MEMORY_TOP_K if limit is None else limit
    return max(1, min(wanted, MAX_FACTS_PER_DECISION))


def company_slots(cap: int) -> int:
    """How many of ``cap`` facts are kept for the company's own facts."""
    return round(cap * float(settings.KARANI_CONTEXT_COMPANY_SHARE))


def memory_enabled() -> bool:
    return modes.current() != modes.OFF


@dataclass(frozen=True)
class Subject:
    """What the block is about: a posting's fields, or an agent's free-text task."""

    company: str | None = None
    title: str = ""
    role_category: str = ""
    location: str = ""
    remote: str = ""
    salary: str = ""
    description: str = ""
    task: str = ""

    @classmethod
    def of(cls, posting: Posting) -> "Subject":
        return cls(
            company=posting.company.name,
            title=posting.title,
            role_category=posting.role_category,
            location=posting.location,
            remote=posting.remote,
            salary=posting.salary,
            description=posting.description,
        )


@dataclass(frozen=True)
class ContextFact:
    id: int
    text: str
    kind: str
    company: str | None
    score: float
    why: str
    created_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text,
            "kind": self.kind,
            "company": self.company,
            "score": round(self.score, 6),
            "why": self.why,
        }


@dataclass(frozen=True)
class Selection:
    """The ranked block's facts and the standing preferences shown beside them (with how many
    the budget left out); ``error`` says why it is empty or short when recall failed."""

    facts: list[ContextFact]
    mode: str
    fallback: bool = False
    error: str | None = None
    standing: list[ContextFact] = field(default_factory=list)
    standing_omitted: int = 0

    @classmethod
    def none(cls) -> "Selection":
        """No facts asked for (a held-out posting): the block stays empty."""
        return cls(facts=[], mode=modes.current())

    @property
    def shown(self) -> list[ContextFact]:
        """Every fact the model is shown: the standing part's, then the ranked block's."""
        return [*self.standing, *self.facts]


def recall_query(subject: Subject) -> str:
    """The seed's one query (company, title, role category, task): the agent's tool and the
    benches' baseline."""
    parts = [subject.company or "", subject.title, subject.role_category, subject.task]
    return " ".join(" ".join(p.split()) for p in parts if p)[:MAX_QUERY_CHARS]


def in_scope(fact: selectors.RecalledFact, own: str | None, before: datetime | None) -> bool:
    # Checked again, so a misapplied scope in any index backend never leaks into a prompt.
    return (fact.company is None or (own is not None and company_key(fact.company) == own)) and (
        before is None or fact.created_at < before
    )


def recall_facts(
    company: str | None, *, query: str, limit: int, before: datetime | None = None
) -> tuple[list[selectors.RecalledFact], bool]:
    """Facts for one query, the company's plus global ones, written before ``before`` if
    given, and whether recall fell back to keywords (the agent's recall tool)."""
    asked = limit if before is None else limit * AS_OF_OVERFETCH
    result = selectors.recall(query=query, company=company, limit=asked)
    own = company_key(company) if company else None
    return [f for f in result.results if in_scope(f, own, before)][:limit], result.fallback


@dataclass(frozen=True)
class Scored:
    """A fact's score against the posting and the piece that gave it."""

    score: float
    piece: Piece


@dataclass
class Candidate:
    """A recalled fact, its score over the pieces and the piece that matched it best."""

    fact: selectors.RecalledFact
    score: float
    piece: Piece


def gather(
    subject: Subject,
    queries: list[Piece],
    *,
    per_piece: int = PER_PIECE,
    before: datetime | None = None,
) -> tuple[dict[int, Candidate], bool]:
    """Every fact any of ``queries`` (``subject``'s pieces) recalls (the company's and global
    ones, written before ``before`` if given), scored by its best piece plus a share of its
    next best (SECOND_SHARE), and whether recall fell back to keywords."""
    asked = per_piece if before is None else per_piece * AS_OF_OVERFETCH
    own = company_key(subject.company) if subject.company else None
    # Each side's own candidates: a ledger of many unscoped facts must not leave the company's
    # share without any, nor the other way round.
    lists, fallback = selectors.recall_many(
        queries=[p.query for p in queries], company=subject.company, limit=asked, per_side=True
    )
    share = SECOND_SHARE["keyword" if fallback or modes.current() != modes.MEM0 else "dense"]
    scored: dict[int, list[tuple[float, int]]] = {}
    facts: dict[int, selectors.RecalledFact] = {}
    for n, found in enumerate(lists):
        kept = [f for f in found if in_scope(f, own, before)]
        for fact in _each_side(kept, per_piece):
            facts[fact.id] = fact
            weight = COMPANY_PIECE_WEIGHT if queries[n].field == "company" else 1.0
            scored.setdefault(fact.id, []).append((fact.score * weight, n))
    for marks in scored.values():
        own_words = [m for m in marks if queries[m[1]].field != "company"]
        marks[:] = own_words or marks
    candidates = {}
    for pk, marks in scored.items():
        marks.sort(reverse=True)
        second = marks[1][0] if len(marks) > 1 else 0.0
        score = marks[0][0] + share * second
        candidates[pk] = Candidate(fact=facts[pk], score=score, piece=queries[marks[0][1]])
    return candidates, fallback


def _each_side(found: list[selectors.RecalledFact], most: int) -> list[selectors.RecalledFact]:
    """The first ``most`` of the company's facts and the first ``most`` unscoped ones."""
    company = [f for f in found if f.company is not None][:most]
    return company + [f for f in found if f.company is None][:most]


def _ranked(candidates: list[Candidate]) -> list[Candidate]:
    # Best score first; ties go to the newer fact, as recall's own ties do.
    return sorted(candidates, key=lambda c: (-c.score, -c.fact.id))


def pipeline_own(fact: selectors.RecalledFact) -> bool:
    """A verdict or outcome fact qualify wrote itself (its ref names the row it came from)."""
    return (fact.ref or "").startswith(PIPELINE_REFS)


def _company_ranked(candidates: list[Candidate]) -> list[Candidate]:
    # What people taught about the company comes before the pipeline's own verdict and outcome
    # facts, which match a posting on its title words alone and which the few-shot block
    # carries already; those fill only the places nothing else would.
    ranked = _ranked(candidates)
    return [c for c in ranked if not pipeline_own(c.fact)] + [
        c for c in ranked if pipeline_own(c.fact)
    ]


def split_shares(candidates: dict[int, Candidate], cap: int) -> list[Candidate]:
    """The block: the company's best facts in its share, the candidate's own in the rest, a
    share one side cannot fill given to the other; best first."""
    company = _company_ranked([c for c in candidates.values() if c.fact.company is not None])
    own = _ranked([c for c in candidates.values() if c.fact.company is None])
    take_company = min(company_slots(cap), len(company))
    take_own = min(cap - take_company, len(own))
    take_company = min(cap - take_own, len(company))
    return _ranked(company[:take_company] + own[:take_own])


STANDING_WHY = "your standing preference"


def why(candidate: Candidate, *, standing: bool = False) -> str:
    """A short phrase a person can read: whose fact it is and what in the posting brought it."""
    fact, piece = candidate.fact, candidate.piece
    if standing:
        side = STANDING_WHY
    elif fact.company is not None:
        side = "company fact"
    else:
        side = "your preference" if fact.kind == Kind.PREFERENCE else "your fact"
    if piece.field == "standing":  # nothing in the posting recalled it
        return f"{side}; applies to every posting"
    words = matched_words(fact.text, piece)
    shared = ", ".join(f"'{w}'" for w in words)
    if piece.field == "company":
        return f"{side}; about {piece.source}" + (f" ({shared})" if shared else "")
    if piece.field in ("location", "pay", "title"):
        reason = f"bears on the {piece.field} '{excerpt(piece.source)}'"
        return f"{side}; {reason}" + (f" ({shared})" if shared else "")
    if shared:
        return f"{side}; matches {shared}"
    return f"{side}; close to '{excerpt(piece.source)}'"


def _shown(candidate: Candidate, *, standing: bool = False) -> ContextFact:
    c = candidate
    return ContextFact(
        id=c.fact.id,
        text=c.fact.text,
        kind=c.fact.kind,
        company=c.fact.company,
        score=c.score,
        why=why(c, standing=standing),
        created_at=c.fact.created_at,
    )


Gathered = tuple[list[Candidate], bool, standing_part.StandingPart | None]


def _recall_safely(mode: str, gather_facts: Callable[[], Gathered]) -> Selection:
    try:
        found, fallback, part = gather_facts()
    except Exception as exc:
        reason = f"{type(exc).__name__}: {str(exc).strip()[:200]}"
        log.warning("recall failed; empty memory block (%s)", reason)
        return Selection(facts=[], mode=mode, fallback=True, error=reason)
    return Selection(
        facts=[_shown(c) for c in found],
        mode=mode,
        fallback=fallback,
        standing=part.facts if part else [],
        standing_omitted=part.omitted if part else 0,
    )


def affinity(found: list[selectors.Preference], queries: list[Piece]) -> dict[int, Scored]:
    """In semantic mode, each standing preference's score against the posting: how far its
    cosine with its closest piece stands above its mean cosine with the posting's other pieces
    (the cosine itself for a one-piece posting), with that piece. A preference close to every
    sentence (a team or culture wish) says little about this posting; one close to a single
    sentence ("never contract" beside "paid hourly on a 1099 basis") bears on it. Empty
    outside semantic mode or with the index down."""
    cosines = selectors.similarities(queries=[q.query for q in queries], ids=[f.id for f in found])
    if cosines is None:
        return {}
    best = cosines.argmax(axis=0)
    top = cosines.max(axis=0)
    # The mean of the other pieces' cosines; none (0) for a one-piece posting.
    rest = (cosines.sum(axis=0) - top) / max(len(queries) - 1, 1)
    return {
        f.id: Scored(score=float(top[i] - rest[i]), piece=queries[int(best[i])])
        for i, f in enumerate(found)
    }


def standing(
    candidates: dict[int, Candidate],
    queries: list[Piece] | None = None,
    *,
    fallback: bool = False,
    before: datetime | None = None,
) -> tuple[standing_part.StandingPart, set[int]]:
    """The standing part: every live unscoped preference (written before ``before`` if given),
    ranked (hard constraints first, then the posting's score for it, then the shorter:
    qualify.standing.rank) and fitted to the budget; and the ids of all of them, shown or not,
    which the ranked block leaves out. The posting's score is ``affinity`` to ``queries`` (the
    posting's pieces) in semantic mode when they do not all fit, else what recall gave it."""
    found = selectors.standing_preferences(before=before)
    scored: dict[int, Scored] = {pk: Scored(c.score, c.piece) for pk, c in candidates.items()}
    if queries and not fallback and not standing_part.fits_whole(found):
        scored |= affinity(found, queries)
    ranked = standing_part.rank(found, lambda f: s.score if (s := scored.get(f.id)) else 0.0)
    # Fitted first, and only the shown read whole: a ledger of a thousand preferences shows
    # a score of them.
    part = standing_part.fit(ranked)
    everywhere = Scored(0.0, Piece("", "standing", ""))
    shown = []
    for fact in selectors.facts([f.id for f in part.facts]):
        s = scored.get(fact.id, everywhere)
        shown.append(_shown(Candidate(fact=fact, score=s.score, piece=s.piece), standing=True))
    return replace(part, facts=shown), {f.id for f in found}


def select_seed(
    subject: Subject, *, limit: int | None = None, before: datetime | None = None
) -> Selection:
    """The seed's block (one query of company, title and role category, one ranked list), for
    the prompt version that recorded it and for replay's comparison."""
    mode = modes.current()
    query = recall_query(subject)
    if mode == modes.OFF or not query:
        return Selection.none()
    piece = Piece(query, "title", query)

    def gather_facts() -> Gathered:
        found, fallback = recall_facts(
            subject.company, query=query, limit=fact_cap(limit), before=before
        )
        return [Candidate(fact=f, score=f.score, piece=piece) for f in found], fallback, None

    return _recall_safely(mode, gather_facts)


def select(
    subject: Subject,
    *,
    limit: int | None = None,
    before: datetime | None = None,
    with_standing: bool = True,
) -> Selection:
    """The standing preferences and the ranked block for ``subject``, best first (without
    ``with_standing``: one ranked block of every fact, as ``qualify-v3-context`` had it).
    Never raises: a memory outage must never stop a decision, so a failure gives an empty
    block and the reason."""
    mode = modes.current()
    queries = pieces(subject) if mode != modes.OFF else []
    if not queries:
        return Selection.none()

    def gather_facts() -> Gathered:
        found, fallback = gather(subject, queries, before=before)
        if not with_standing:
            return split_shares(found, fact_cap(limit)), fallback, None
        part, standing_ids = standing(found, queries, fallback=fallback, before=before)
        rest = {pk: c for pk, c in found.items() if pk not in standing_ids}
        return split_shares(rest, fact_cap(limit)), fallback, part

    return _recall_safely(mode, gather_facts)
