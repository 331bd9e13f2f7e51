"""The texts `karani secrets` screens in qualify: its provider for memory.stored_texts (memory
never imports qualify): postings, companies, the profile, and the events' free text (verdict
reasons and criteria, errors, outcome notes, replay answers)."""

from typing import Any

from memory.stored_texts import ModelTexts
from memory.text import company_key
from qualify.models import (
    Company,
    Outcome,
    Posting,
    Profile,
    Qualification,
    ReplayAnswer,
    ReplayRun,
)


def _company_key(values: dict[str, Any]) -> dict[str, Any]:
    return {"name_key": company_key(values["name"])}


provider = ModelTexts(
    "qualify",
    [
        (Company, ("name",)),
        (
            Posting,
            ("title", "role_category", "location", "salary", "description", "url", "source",
             "dealbreakers"),
        ),
        (Profile, ("summary", "preferences", "dealbreakers")),
        (Qualification, ("reasons", "criteria", "model_name", "error")),
        (Outcome, ("note",)),
        (ReplayRun, ("versions", "stopped")),
        (ReplayAnswer, ("criteria", "memory_error", "error")),
    ],
    derived={Company: _company_key},
)  # fmt: skip
