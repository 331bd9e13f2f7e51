"""DRF's scoped throttle on memory's clock, so tests move time instead of waiting out a window."""

from rest_framework import throttling

from memory import clock


class ScopedRateThrottle(throttling.ScopedRateThrottle):
    @staticmethod
    def timer() -> float:
        return clock.now()
