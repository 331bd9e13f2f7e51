import os

import pytest
from django.db import connection


def _on_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Postgres-only tests skip on a SQLite ledger, with the way to run them.

    scripts/test runs the suite twice (SQLite, then Postgres), so in CI every postgres test
    runs once; if Postgres is missing in CI, scripts/test fails before pytest starts.
    """
    if connection.vendor == "postgresql":
        return
    skip = pytest.mark.skip(
        reason="needs a PostgreSQL ledger: DATABASE_URL=postgresql://... (scripts/test does this)"
    )
    for item in items:
        if "postgres" in item.keywords:
            item.add_marker(skip)
