"""karani's version, from the installed package's metadata (pyproject.toml's version)."""

from importlib import metadata

try:
    VERSION = metadata.version("karani")
except metadata.PackageNotFoundError:  # a source tree that was never installed
    VERSION = "0+unknown"
