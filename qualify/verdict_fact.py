"""The verdict fact, from structured fields only: the model's own words never reach memory,
so one mistaken judgement cannot become a remembered "fact" (docs/qualify.md)."""

from qualify.models import Posting, Profile, Verdict
from qualify.pieces import plain

CRITERIA = ("remote_ok", "salary_ok", "on_call_ok")
MAX_FACT_CHARS = 400


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def quoted_dealbreakers(hits: list[str], *, posting: Posting, profile: Profile | None) -> list[str]:
    """Each hit as the posting or profile words it: a stated dealbreaker it names (or that
    names it), else the hit itself when the posting's text contains it; other hits drop."""
    stated = [*posting.dealbreakers, *(profile.dealbreakers if profile else [])]
    description = plain(posting.description)
    fields = (posting.title, posting.location, posting.salary, description, posting.remote)
    posting_text = _norm(" ".join(fields))
    quotes: list[str] = []
    for hit in hits:
        wanted = _norm(hit)
        if not wanted:
            continue
        match = next(
            (s for s in stated if _norm(s) and (_norm(s) in wanted or wanted in _norm(s))), None
        )
        if match is None and wanted in posting_text:
            match = " ".join(hit.split())
        if match is not None and match not in quotes:
            quotes.append(match)
    return quotes


def compose(
    *,
    verdict: str,
    fit_score: int,
    criteria: dict,
    posting: Posting,
    profile: Profile | None,
) -> str:
    """E.g. 'Rejected Senior SRE at Globex, fit 20; failed: remote_ok=no; dealbreakers hit:
    "24/7 pager duty"'. Whole items only: a quote that does not fit is left out, and says so."""
    word = "Qualified" if verdict == Verdict.QUALIFIED else "Rejected"
    text = f"{word} {posting.title} at {posting.company.name}, fit {fit_score}"
    failed = [f"{name}=no" for name in CRITERIA if criteria.get(name) == "no"]
    if failed:
        text += f"; failed: {', '.join(failed)}"
    quotes = quoted_dealbreakers(
        list(criteria.get("dealbreakers_hit") or []), posting=posting, profile=profile
    )
    kept: list[str] = []
    for quote in quotes:
        candidate = "; dealbreakers hit: " + ", ".join(f'"{q}"' for q in [*kept, quote])
        if len(text) + len(candidate) + len("; +9 more") > MAX_FACT_CHARS:
            break
        kept.append(quote)
    if kept:
        text += "; dealbreakers hit: " + ", ".join(f'"{q}"' for q in kept)
    if len(kept) < len(quotes):
        text += f"; +{len(quotes) - len(kept)} more"
    return text
