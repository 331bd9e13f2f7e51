"""Tools other apps add to karani's MCP server. memory never imports them: an app registers a
dotted path from its ``AppConfig.ready()``, and only ``karani mcp`` imports it, when it
builds the server, so no other command loads the MCP SDK."""

from collections.abc import Callable
from typing import Any

from django.utils.module_loading import import_string

_adders: list[str] = []


def register(path: str) -> None:
    """``path`` names a function ``add(server)`` that adds the app's tools; idempotent."""
    if path not in _adders:
        _adders.append(path)


def adders() -> list[Callable[[Any], None]]:
    return [import_string(path) for path in _adders]
