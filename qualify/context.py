"""Working context: the facts that bear on one posting (or an agent's task), each with why it is
there. qualify's prompt, the context API and the MCP ``context`` tool all build it here."""

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory import selectors
from memory.conf import settings
from memory.selectors import modes
from memory.services import company_key
from qualify.models import MAX_FACTS_PER_DECISION, Posting

log = logging.getLogger("karani.qualify")

MAX_QUERY_CHARS = 500
# Recalling "as of" a past moment drops newer facts after ranking, so it asks for more.
AS_OF_OVERFETCH = 4


def fact_cap(limit: int | None = None) -> int:
    """Facts per block: ``limit`` or KARANI_MEMORY_TOP_K, never more than 10 whatever is asked."""
    wanted = settings.KARANI_MEMORY_TOP_K if limit is None else limit
    return max(1, min(wanted, MAX_FACTS_PER_DECISION))


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
    """The block's facts; ``error`` says why it is empty or short when recall failed."""

    facts: list[ContextFact]
    mode: str
    fallback: bool = False
    error: str | None = None

    @classmethod
    def none(cls) -> "Selection":
        """No facts asked for (a held-out posting): the block stays empty."""
        return cls(facts=[], mode=modes.current())


def recall_query(subject: Subject) -> str:
    parts = [subject.company or "", subject.title, subject.role_category, subject.task]
    return " ".join(" ".join(p.split()) for p in parts if p)[:MAX_QUERY_CHARS]


def recall_facts(
    company: str | None, *, query: str, limit: int, before: datetime | None = None
) -> tuple[list[selectors.RecalledFact], bool]:
    """Facts for the company (plus global ones), written before ``before`` if given, and
    whether recall fell back to keywords."""
    asked = limit if before is None else limit * AS_OF_OVERFETCH
    result = selectors.recall(query=query, company=company, limit=asked)
    # Checked again, so a misapplied scope in any index backend never leaks into a prompt.
    own = company_key(company) if company else None
    facts = [
        f
        for f in result.results
        if (f.company is None or (own is not None and company_key(f.company) == own))
        and (before is None or f.created_at < before)
    ]
    return facts[:limit], result.fallback


def _why(fact: selectors.RecalledFact) -> str:
    return "company fact" if fact.company else "your fact"


def select(
    subject: Subject, *, limit: int | None = None, before: datetime | None = None
) -> Selection:
    """The facts for ``subject``, best first. Never raises: a memory outage must never stop
    a decision, so a failure gives an empty block and the reason."""
    mode = modes.current()
    query = recall_query(subject)
    if mode == modes.OFF or not query:
        return Selection.none()
    try:
        found, fallback = recall_facts(
            subject.company, query=query, limit=fact_cap(limit), before=before
        )
    except Exception as exc:
        reason = f"{type(exc).__name__}: {str(exc).strip()[:200]}"
        log.warning("recall failed; empty memory block (%s)", reason)
        return Selection(facts=[], mode=mode, fallback=True, error=reason)
    facts = [
        ContextFact(
            id=f.id,
            text=f.text,
            kind=f.kind,
            company=f.company,
            score=f.score,
            why=_why(f),
            created_at=f.created_at,
        )
        for f in found
    ]
    return Selection(facts=facts, mode=mode, fallback=fallback)
