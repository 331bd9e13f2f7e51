"""Fixtures for qualify's specs (the doubles themselves live in qualify_fakes)."""

from collections.abc import Iterator
from typing import Any

import pytest
from api_helpers import client_with, token_for
from qualify_fakes import FakeLLM
from rest_framework.test import APIClient

from qualify import holdout, services
from qualify.models import Profile


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    server = FakeLLM()
    yield server
    server.close()


@pytest.fixture
def llm_settings(settings: Any, fake_llm: FakeLLM) -> Any:
    """Django settings pointed at the fake server, memory in basic mode, top-k 5."""
    settings.KARANI_LLM_BASE_URL = fake_llm.url
    settings.KARANI_LLM_MODEL = "fake-model"
    settings.KARANI_LLM_TIMEOUT = 5.0
    settings.KARANI_MEMORY = "basic"
    settings.KARANI_MEMORY_TOP_K = 5
    return settings


@pytest.fixture
def profile(db: Any) -> Profile:
    return services.set_profile(
        summary="Senior platform engineer, Python and Kubernetes",
        preferences="remote in Europe, light on-call, at least 90k EUR",
        dealbreakers=["24/7 pager duty", "relocation"],
    )


@pytest.fixture
def fresh_salt() -> Iterator[None]:
    """An empty holdout salt cache before and after: each test's database has its own salt."""
    holdout._salt_cache.clear()
    yield
    holdout._salt_cache.clear()


@pytest.fixture
def writer(db: Any, settings: Any) -> APIClient:
    """An API client for the `pipeline` user with write rights, memory in basic mode."""
    settings.KARANI_MEMORY = "basic"
    return client_with(token_for("pipeline", writer=True))
