"""The model answers one question per criterion (small models judge far better that way);
the verdict and fit score are computed here from those answers, deterministically."""

import json
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator

from qualify.credentials import withheld
from qualify.models import Verdict

TRISTATE = {"type": "string", "enum": ["yes", "no", "unknown"]}
_PROPERTIES = {
    "remote_ok": TRISTATE,
    "salary_ok": TRISTATE,
    "on_call_ok": TRISTATE,
    "dealbreakers_hit": {
        "type": "array",
        "items": {"type": "string", "minLength": 1, "maxLength": 200},
        "maxItems": 10,
    },
    "role_fit": {"type": "integer", "minimum": 0, "maximum": 100},
    "reasons": {"type": "string", "minLength": 1, "maxLength": 300},
}
# Sent as response_format's schema, and validated here whatever the server did with it.
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": _PROPERTIES,
    "required": list(_PROPERTIES),
    "additionalProperties": False,
}
_VALIDATOR = Draft202012Validator(VERDICT_SCHEMA)

QUALIFY_THRESHOLD = 60  # fit score at or above which a posting with no "no" is qualified
PENALTY_PER_NO = 25  # each criterion the posting fails costs this much fit
DEALBREAKER_CAP = 20  # a dealbreaker hit caps the fit score here
MAX_REASON_CHARS = 200


class InvalidOutput(ValueError):
    """The model's reply is not a verdict object matching VERDICT_SCHEMA."""


def parse(content: str | None) -> dict[str, Any]:
    """The criteria object from a reply, or InvalidOutput with a one-line reason."""
    if not content or not content.strip():
        raise InvalidOutput("the reply was empty")
    text = content.strip()
    # Some servers wrap JSON in a Markdown fence even in JSON mode.
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidOutput(f"the reply is not JSON ({exc.msg} at char {exc.pos})") from None
    error = next(iter(sorted(_VALIDATOR.iter_errors(data), key=lambda e: e.path)), None)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the object"
        raise InvalidOutput(f"schema violation at {where}: {error.message}"[:300])
    # The model's words are stored with the verdict: none may carry a credential.
    return withheld(data)


@dataclass(frozen=True)
class Decision:
    verdict: str
    fit_score: int
    reasons: str


def decide(criteria: dict[str, Any]) -> Decision:
    """Verdict and fit score from validated criteria (see docs/qualify.md)."""
    failed = [name for name in ("remote_ok", "salary_ok", "on_call_ok") if criteria[name] == "no"]
    fit = criteria["role_fit"] - PENALTY_PER_NO * len(failed)
    if criteria["dealbreakers_hit"]:
        fit = min(fit, DEALBREAKER_CAP)
    fit = max(0, min(100, fit))
    qualified = not criteria["dealbreakers_hit"] and not failed and fit >= QUALIFY_THRESHOLD
    reasons = " ".join(str(criteria["reasons"]).split())[:MAX_REASON_CHARS]
    return Decision(
        verdict=Verdict.QUALIFIED if qualified else Verdict.REJECTED, fit_score=fit, reasons=reasons
    )
