"""karani's version (memory.version reads the installed package's metadata)."""

from memory.version import VERSION

__all__ = ["VERSION"]
