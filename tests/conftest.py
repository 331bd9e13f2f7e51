import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connection

# The suite indexes a mem0-mode write before the write returns, so a test may read the index
# right after it; tests/test_semantic_background.py tests the default, the background worker.
os.environ.setdefault("KARANI_INDEX_IN_BACKGROUND", "0")


@pytest.fixture(autouse=True)
def _index_inline(settings: "SettingsWrapper") -> None:  # noqa: F821
    settings.KARANI_INDEX_IN_BACKGROUND = False


class MovableClock:
    """memory.clock as a test sees it: real time plus however far the test moved it."""

    def __init__(self) -> None:
        self.moved = 0.0

    def now(self) -> float:
        return time.time() + self.moved

    def monotonic(self) -> float:
        return time.monotonic() + self.moved

    def advance(self, seconds: float) -> None:
        self.moved += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> MovableClock:
    """Move time forward (cool-downs, throttle windows, cache lifetimes) instead of sleeping."""
    from memory import clock as clockmod

    moved = MovableClock()
    monkeypatch.setattr(clockmod, "now", moved.now)
    monkeypatch.setattr(clockmod, "monotonic", moved.monotonic)
    return moved


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
    # scripts/test sets this when a PostgreSQL pass runs beside this one.
    beside = os.environ.get("KARANI_PG_PASS") == "1"
    once = pytest.mark.skip(reason="does not depend on the ledger: runs in the PostgreSQL pass")
    for item in items:
        if "postgres" in item.keywords:
            item.add_marker(skip)
        elif beside and "one_pass" in item.keywords:
            item.add_marker(once)


# The flags that work on these machines (no GPU, no sandbox for root, no network chatter).
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--window-size=1400,1000",
)


def _chromium_binaries() -> tuple[str, str]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if chromium and driver:
        return chromium, driver
    missing = "chromium" if not chromium else "chromedriver"
    message = f"{missing} is not installed: run scripts/ensure-chromium (scripts/test does)"
    if _on_ci():
        pytest.fail(f"CI=true and {message}")
    pytest.skip(message)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator["WebDriver"]:  # noqa: F821
    """Headless Debian Chromium via Selenium; skips on a laptop without it, fails in CI."""
    chromium, driver_path = _chromium_binaries()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    # A fresh profile per test: no cookies or cache leak between runs.
    options.add_argument(f"--user-data-dir={tmp_path / 'chromium-profile'}")
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    driver.implicitly_wait(0)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="session")
def migrated_ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite data dir migrated once by a real `karani migrate`; specs copy it."""
    from ledger_helpers import child_env, karani

    data = tmp_path_factory.mktemp("template") / "data"
    env = child_env(DATABASE_URL=None, KARANI_DATA_DIR=str(data), KARANI_MEMORY=None)
    proc = karani("migrate", "-v0", cwd=data.parent, env=env)
    assert proc.returncode == 0, proc.stderr
    assert (data / "karani.sqlite3").is_file()
    return data


@pytest.fixture
def through_wsgi(db: None, settings: "SettingsWrapper") -> Iterator[None]:  # noqa: F821
    """What the schemathesis specs drive: Django's real WSGI handler, no throttling, a clean
    cache."""
    from django.core.cache import cache
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    # Like Django's test client, keep the handler from closing the test's connection (and its
    # transaction) after each request.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    # Throttling would turn the fuzzing into a stream of 429s; it has its own test.
    settings.KARANI_API_RECALL_RATE = settings.KARANI_API_WRITE_RATE = "off"
    cache.clear()
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


class Migrator:
    """Moves the test database to a migration state; what a data-migration spec steps through."""

    def __init__(self) -> None:
        from django.db.migrations.executor import MigrationExecutor

        self.executor = MigrationExecutor(connection)

    def to(self, targets: list[tuple[str, str]]) -> "StateApps":  # noqa: F821
        """Migrate to ``targets`` (the graph read afresh, as the last step changed it) and
        return the historical models there."""
        self.executor.loader.build_graph()
        self.executor.migrate(targets)
        return self.executor.loader.project_state(targets).apps

    def managers(self, targets: list[tuple[str, str]], *models: str) -> list["Manager"]:  # noqa: F821
        """Migrate to ``targets`` and return each named historical model's manager
        (``"qualify.Posting"``): what a spec creates its old rows and reads its new ones with."""
        apps = self.to(targets)
        return [apps.get_model(model)._default_manager for model in models]


@pytest.fixture
def migrator(transactional_db: None) -> Iterator[Migrator]:
    """A Migrator; afterwards the whole schema is back at the leaf nodes, since going back also
    unapplied every later migration that depends on the target (other apps' too)."""
    steps = Migrator()
    yield steps
    steps.executor.loader.build_graph()
    steps.executor.migrate(steps.executor.loader.graph.leaf_nodes())
