"""The randomised holdout: which postings are judged without memory.

With ``KARANI_MEMORY_HOLDOUT`` at f (0 to 0.5), a posting falls in the holdout arm when a
hash of its id and this installation's salt, read as a number in [0, 1), is below f. The
same posting always lands in the same arm (a retried error stays where it was), and no one
can steer a posting into an arm without the salt.
"""

import hashlib
import secrets

from django.conf import settings
from django.db import IntegrityError, transaction

from memory import modes
from qualify.models import Arm, InstallationSalt

MAX_HOLDOUT = 0.5

_salt_cache: dict[str, str] = {}


def fraction() -> float:
    return float(getattr(settings, "KARANI_MEMORY_HOLDOUT", 0.0))


def salt() -> str:
    """The installation's salt, created on first use (one row; a racing creator loses)."""
    cached = _salt_cache.get("value")
    if cached is not None:
        return cached
    row = InstallationSalt.objects.filter(pk=1).first()
    if row is None:
        try:
            with transaction.atomic():
                row = InstallationSalt.objects.create(pk=1, value=secrets.token_hex(16))
        except IntegrityError:  # another process created it first: use theirs
            row = InstallationSalt.objects.get(pk=1)
        else:
            # Cached only once committed: a rolled-back salt must not outlive its row.
            value = row.value
            transaction.on_commit(lambda: _salt_cache.setdefault("value", value))
            return value
    _salt_cache["value"] = row.value
    return row.value


def forget_cached_salt() -> None:
    """Tests that roll the salt row back must not keep a salt the database no longer has."""
    _salt_cache.clear()


def position(posting_id: int, *, salt_value: str) -> float:
    """The posting's fixed point in [0, 1): the first 8 bytes of sha256(salt:id)."""
    digest = hashlib.sha256(f"{salt_value}:{posting_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def arm_for(posting_id: int) -> str:
    """The arm of a posting under the current settings.

    Not randomised (``Arm.NONE``) when memory is off or the holdout fraction is 0: those
    decisions are not part of the comparison.
    """
    share = fraction()
    if share <= 0 or modes.current() == modes.OFF:
        return Arm.NONE
    return Arm.HOLDOUT if position(posting_id, salt_value=salt()) < share else Arm.MEMORY
