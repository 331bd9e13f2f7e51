"""System checks for a host project's database: decisions need SQLite's write lock taken at
the start of each transaction (docs/decisions.md)."""

from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import CheckMessage, Warning


def deferred_sqlite(databases: dict[str, dict[str, Any]]) -> list[str]:
    """The aliases of SQLite databases whose transactions do not begin IMMEDIATE."""
    return [
        alias
        for alias, config in databases.items()
        if config.get("ENGINE") == "django.db.backends.sqlite3"
        and (config.get("OPTIONS") or {}).get("transaction_mode") != "IMMEDIATE"
    ]


def check_sqlite_transactions(
    app_configs: list[AppConfig] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """Without IMMEDIATE, a re-judging that read the live verdict can fail to write it
    ("database is locked") when another writer got there first."""
    return [
        Warning(
            f"DATABASES[{alias!r}] is SQLite without OPTIONS['transaction_mode'] = 'IMMEDIATE':"
            " concurrent decisions may fail with 'database is locked' (docs/decisions.md)",
            id="karani.W002",
        )
        for alias in deferred_sqlite(settings.DATABASES)
    ]
