"""No field qualify stores holds a credential (docs/security.md). What people give it (postings,
the profile, outcome notes) is refused with one line; what the model or a failure wrote (its
reasons, an error message) is withheld instead, since the event itself must still be recorded.
"""

from typing import Any

from django.core.exceptions import ValidationError
from django.db import models

from memory.errors import SecretRefused
from memory.services import find_secrets, refuse_secrets
from qualify.errors import QualifySecretRefused

WITHHELD = "[withheld: it looked like a credential]"


def refusal(name: str, value: str | list[str]) -> str | None:
    """Memory's one-line refusal when ``value`` (a text, or a list of texts) looks like it
    holds a credential, naming the field and the kind found, never the value; else None."""
    try:
        refuse_secrets("\n".join(value) if isinstance(value, list) else value, what=name)
    except SecretRefused as exc:
        return str(exc)
    return None


def refuse(name: str, value: str | list[str]) -> None:
    """Raise the field-named ``secret_refused`` when ``value`` looks like it holds a credential."""
    try:
        refuse_secrets("\n".join(value) if isinstance(value, list) else value, what=name)
    except SecretRefused as exc:
        raise QualifySecretRefused(str(exc), field=name, kinds=exc.kinds) from None


def first_refusal(fields: dict[str, Any]) -> str | None:
    """The refusal of the first of ``fields`` (name: value) that holds a credential."""
    return next(filter(None, (refusal(name, value) for name, value in fields.items())), None)


def withheld(value: Any) -> Any:
    """``value`` with each text in it that looks like it holds a credential replaced by
    WITHHELD (lists and dicts walked)."""
    if isinstance(value, str):
        return WITHHELD if find_secrets(value) else value
    if isinstance(value, list):
        return [withheld(v) for v in value]
    if isinstance(value, dict):
        return {k: withheld(v) for k, v in value.items()}
    return value


def withheld_error(text: str) -> str:
    """An error message as stored: whole, or when it holds a credential, its first clause (what
    failed, in karani's words, which ``llm.endpoint_failed`` reads) and WITHHELD."""
    if not find_secrets(text):
        return text
    head = text.split(":", 1)[0]
    return f"{head}: {WITHHELD}" if head != text and not find_secrets(head) else WITHHELD


def check_model(instance: models.Model, names: tuple[str, ...]) -> None:
    """Model.clean for the admin's forms: a ValidationError on each field holding a credential."""
    errors = {
        name: message
        for name in names
        if (message := refusal(name, getattr(instance, name))) is not None
    }
    if errors:
        raise ValidationError(errors)
