"""The randomised holdout: which postings are judged without memory (see docs/qualify.md)."""

import hashlib
import secrets

from django.conf import settings
from django.db import transaction

from memory.selectors import modes
from qualify.models import Arm, InstallationSalt

_salt_cache: dict[str, str] = {}


def salt() -> str:
    """The installation's salt, created on first use (one row; a racing creator loses)."""
    if "value" not in _salt_cache:
        row = InstallationSalt.objects.get_or_create(
            pk=1, defaults={"value": secrets.token_hex(16)}
        )[0]
        # Cached only once committed: a rolled-back salt must not outlive its row.
        transaction.on_commit(lambda: _salt_cache.setdefault("value", row.value))
        return row.value
    return _salt_cache["value"]


def position(posting_id: int, *, salt_value: str) -> float:
    """The posting's fixed point in [0, 1): the first 8 bytes of sha256(salt:id)."""
    digest = hashlib.sha256(f"{salt_value}:{posting_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def arm_for(posting_id: int) -> str:
    """The posting's arm; ``Arm.NONE`` (not randomised) when memory or the holdout is off."""
    share = settings.KARANI_MEMORY_HOLDOUT
    if share <= 0 or modes.current() == modes.OFF:
        return Arm.NONE
    return Arm.HOLDOUT if position(posting_id, salt_value=salt()) < share else Arm.MEMORY
