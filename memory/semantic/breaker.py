"""A circuit breaker in front of the semantic index.

A dead or hung store costs one timeout (~KARANI_VECTOR_TIMEOUT); after that every call is
skipped until KARANI_VECTOR_COOLDOWN passes, so a batch of 1,000 writes or recalls pays
once. Each outage logs exactly one warning, when the breaker opens.
"""

import logging
import threading
import time

log = logging.getLogger("karani.memory")


class Breaker:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open_until = 0.0
        self._reason: str | None = None

    def allow(self) -> bool:
        """May a call go to the index now? (True again once the cool-down has passed.)"""
        with self._lock:
            return time.monotonic() >= self._open_until

    @property
    def reason(self) -> str | None:
        """Why the index last failed, while the breaker is open or half-open."""
        return self._reason

    def trip(self, reason: str, *, cooldown: float) -> None:
        with self._lock:
            # Only the first failure of an outage warns: concurrent calls that were already
            # in flight fail too, and one line in the log is the contract.
            already_open = time.monotonic() < self._open_until
            self._open_until = time.monotonic() + cooldown
            self._reason = reason
        if not already_open:
            log.warning(
                "semantic index unavailable, recall falls back to keyword and writes stay "
                "pending (retry in %gs; `karani doctor` shows why, `karani reindex --pending` "
                "catches up): %s",
                cooldown,
                reason,
            )

    def succeeded(self) -> None:
        with self._lock:
            was_failing = self._reason is not None
            self._open_until = 0.0
            self._reason = None
        if was_failing:
            log.info("semantic index is answering again")

    def reset(self) -> None:
        """Forget any outage (an operator command such as reindex retries at once)."""
        with self._lock:
            self._open_until = 0.0
            self._reason = None


breaker = Breaker()
