"""Reads for outside pipelines (the API and MCP doors): a posting's working context and the
funnel, each through the same code qualify's own commands use."""

from typing import Any

from qualify import funnel, holdout, inputs, preparation
from qualify.models import Posting


def working_context(
    *, external_id: str | None = None, limit: int | None = None, **fields: Any
) -> preparation.WorkingContext:
    """The block for a posting (``fields``: company, title, role_category, ... or task).

    With ``external_id`` the holdout arm is the one the posting has, or will have once its
    decision is recorded: drawn from the same key (``holdout.key_of``)."""
    subject = inputs.clean_subject(fields)
    limit = inputs.clean_limit(limit)
    key = None
    if external_id is not None and external_id != "":
        external_id = inputs.clean_external_id(external_id)
        posting = Posting.objects.filter(external_id=external_id).first()
        key = holdout.key_of(posting) if posting is not None else external_id
    return preparation.working_context(subject, key=key, limit=limit)


def funnel_report() -> dict[str, Any]:
    """What ``karani funnel --json`` prints: every prompt version recorded, the arms compared."""
    return funnel.to_dict(funnel.compute())
