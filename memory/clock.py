"""The clock that timers read (the semantic index's breaker, the API's throttles, the lexical
caches): tests move it through this seam instead of sleeping (tests/conftest.py ``clock``).

Timestamps stored in the ledger use Django's ``timezone.now``, which is already such a seam.
"""

import time


def now() -> float:
    """Wall-clock seconds since the epoch: for state that other processes read (the breaker
    file) and for DRF's throttle histories, which every worker shares."""
    return time.time()


def monotonic() -> float:
    """Seconds on a clock that never goes back: for in-process cache lifetimes."""
    return time.monotonic()
