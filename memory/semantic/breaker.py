"""A circuit breaker in front of the semantic index: one timeout and one warning per outage.

The open state is kept in a file under KARANI_DATA_DIR, in wall-clock time, so short CLI
processes share the cool-down (ADR 0009).
"""

import hashlib
import json
import logging
import os
import threading
from pathlib import Path

from memory import clock
from memory.conf import settings

log = logging.getLogger("karani.memory")

STATE_FILE = "semantic-breaker.json"


def _state_path() -> Path:
    return Path(settings.KARANI_DATA_DIR) / STATE_FILE


def _store_id() -> str:
    raw = f"{settings.KARANI_VECTOR_DSN}\x1f{settings.KARANI_VECTOR_COLLECTION}"
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def _read_shared() -> tuple[float, str | None]:
    """(open until, reason) that another process recorded for this store, or (0, None)."""
    try:
        state = json.loads(_state_path().read_text(encoding="utf-8"))
        if state.get("store") != _store_id():
            return 0.0, None
        return float(state["open_until"]), str(state["reason"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return 0.0, None  # no file, or a torn or foreign one: the breaker is closed


def _write_shared(open_until: float, reason: str) -> None:
    path = _state_path()
    state = {"store": _store_id(), "open_until": open_until, "reason": reason}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}")
        partial.write_text(json.dumps(state), encoding="utf-8")
        os.replace(partial, path)  # readers see the old state or the new, never half
    except OSError:
        log.debug("could not record the breaker state in %s", path, exc_info=True)


class Breaker:
    """Skips calls for a cool-down after a failure; ``shared`` keeps the state in STATE_FILE."""

    def __init__(self, warning: str, *, shared: bool) -> None:
        self._lock = threading.Lock()
        self._open_until = 0.0
        # Why the last call failed, while the breaker is open or half-open.
        self.reason: str | None = None
        self._warning = warning  # logged with the cool-down and the reason
        self._shared = shared

    def allow(self) -> bool:
        """May a call go through now? (True again once the cool-down has passed.)"""
        with self._lock:
            now = clock.now()
            if now < self._open_until:
                return False
            shared_until, shared_reason = _read_shared() if self._shared else (0.0, None)
            if now < shared_until:
                self._open_until, self.reason = shared_until, shared_reason
                return False
            return True

    def trip(self, reason: str, *, cooldown: float) -> None:
        with self._lock:
            # Only the first failure of an outage warns: concurrent calls that were already
            # in flight fail too, and one line in the log is the contract.
            now = clock.now()
            already_open = now < self._open_until
            self._open_until = now + cooldown
            self.reason = reason
            if self._shared:
                _write_shared(self._open_until, reason)
        if not already_open:
            log.warning(self._warning, cooldown, reason)

    def succeeded(self) -> None:
        # Checked before taking the lock: the healthy path touches no file.
        if self.reason is not None and self.reset():
            log.info("semantic index is answering again")

    def reset(self) -> bool:
        """Forget any outage (reindex retries at once, whatever the cool-down); was there one?"""
        with self._lock:
            was_failing = self.reason is not None
            self._open_until, self.reason = 0.0, None
            if self._shared:
                try:
                    _state_path().unlink(missing_ok=True)
                except OSError:
                    log.debug("could not clear the breaker state", exc_info=True)
        return was_failing


breaker = Breaker(
    "semantic index unavailable, recall falls back to keyword and writes stay pending (retry "
    "in %gs; `karani doctor` shows why, `karani reindex --pending` catches up): %s",
    shared=True,
)
