"""Which decisions a fact steered, told by the providers its callers (qualify) register,
since memory never imports them; with none registered the admin and API show nothing."""

import operator
from functools import reduce
from typing import Any, Protocol

USE_COUNT = "use_count"  # the attribute the admin sets on each listed fact


class Provider(Protocol):
    def summary_for(self, memory_id: int) -> dict[str, Any]:
        """What the provider knows about one fact, JSON-ready: a one-line ``text`` and
        ``items``, one line per recent use, for pages that show it."""

    def use_count(self) -> Any:
        """A query expression counting a fact's uses, evaluated against the memories table."""

    def use_counts(self, memory_ids: list[int]) -> dict[int, int]:
        """Uses per fact for a page of facts, in one query (facts never used may be absent)."""


_providers: list[Provider] = []


def register(provider: Provider) -> None:
    """Idempotent by identity: an app's ready() may run twice in tests."""
    if provider not in _providers:
        _providers.append(provider)


def unregister(provider: Provider) -> None:
    if provider in _providers:
        _providers.remove(provider)


def enabled() -> bool:
    return bool(_providers)


def summary_for(memory_id: int) -> dict[str, Any] | None:
    """Each provider's summary, keyed by the provider's ``name``; None with none registered."""
    if not _providers:
        return None
    return {getattr(p, "name", type(p).__name__): p.summary_for(memory_id) for p in _providers}


def use_expression() -> Any:
    """The sum over providers of their use-count expressions (for ordering a facts list)."""
    return reduce(operator.add, (provider.use_count() for provider in _providers))


def use_counts(memory_ids: list[int]) -> dict[int, int]:
    """Uses per fact id, summed over providers; every id present (0 when unused or none)."""
    counts = dict.fromkeys(memory_ids, 0)
    for provider in _providers:
        for memory_id, n in provider.use_counts(memory_ids).items():
            counts[memory_id] = counts.get(memory_id, 0) + n
    return counts
