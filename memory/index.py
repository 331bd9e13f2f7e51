"""The seam between the ledger and the optional semantic index (KARANI_MEMORY=mem0).

The service calls these after its ledger transaction commits, so an index failure can never
roll back or block a ledger write. In off/basic mode they do nothing.
"""

from collections.abc import Sequence

from memory import modes


def added(memory_ids: Sequence[int]) -> None:
    """New live facts exist: index them (or leave them pending when the index is down)."""
    if modes.current() != modes.MEM0 or not memory_ids:
        return


def removed(memory_ids: Sequence[int]) -> None:
    """Facts were soft-deleted: drop them from the index, best effort."""
    if modes.current() != modes.MEM0 or not memory_ids:
        return
