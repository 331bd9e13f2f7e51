"""The randomised holdout: which postings are judged without memory (see docs/qualify.md)."""

import hashlib
import secrets

from django.db import transaction

from memory import modes
from qualify.conf import settings
from qualify.models import Arm, InstallationSalt, Posting

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


def position(key: int | str, *, salt_value: str) -> float:
    """The posting's fixed point in [0, 1): the first 8 bytes of sha256(salt:key)."""
    digest = hashlib.sha256(f"{salt_value}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def key_of(posting: Posting) -> int | str:
    """What a posting's arm is drawn from: the caller's external id when it has one (so the
    context API can tell the arm before the posting is recorded), else its id."""
    return posting.external_id or posting.pk


def arm_for(key: int | str) -> str:
    """The arm of the posting with this key (``key_of``); ``Arm.NONE`` (not randomised) when
    memory or the holdout is off."""
    share = settings.KARANI_MEMORY_HOLDOUT
    if share <= 0 or modes.current() == modes.OFF:
        return Arm.NONE
    return Arm.HOLDOUT if position(key, salt_value=salt()) < share else Arm.MEMORY
