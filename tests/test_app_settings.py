"""Issue 27: a host project's KARANI_* values are checked by `manage.py check`, one line each,
and docs/embedding.md lists every setting with its default."""

import re
from pathlib import Path

import pytest
from django.core.checks import run_checks
from django.test import override_settings

from memory import conf as memory_conf
from memory.checks import check_schema_class
from qualify import conf as qualify_conf
from qualify.conf import settings as app_settings

DECLARED = (*memory_conf.SETTINGS, *qualify_conf.SETTINGS)

EMBEDDING_DOC = Path(__file__).resolve().parent.parent / "docs" / "embedding.md"

BAD = [
    ("KARANI_MEMORY", "on"),
    ("KARANI_MEMORY", "Basic"),
    ("KARANI_MEMORY_TOP_K", 0),
    ("KARANI_MEMORY_TOP_K", "5"),
    ("KARANI_MEMORY_TOP_K", True),
    ("KARANI_MEMORY_HOLDOUT", 0.6),
    ("KARANI_MEMORY_HOLDOUT", -0.1),
    ("KARANI_MEMORY_HOLDOUT", float("nan")),
    ("KARANI_LLM_TIMEOUT", 0),
    ("KARANI_LLM_TIMEOUT", 301),
    ("KARANI_LLM_CONTEXT", 100),
    ("KARANI_LLM_MODEL", ""),
    ("KARANI_LLM_BASE_URL", None),
    ("KARANI_MEMORY_EXTRACTION", "yes"),
    ("KARANI_INDEX_IN_BACKGROUND", "yes"),
    ("KARANI_VECTOR_COLLECTION", "Karani-Memories"),
    ("KARANI_EMBEDDER_DIMS", 0),
    ("KARANI_EMBEDDER_THREADS", -1),
    ("KARANI_EMBEDDER_DTYPE", "float16"),
    ("KARANI_VECTOR_TIMEOUT", 0),
    ("KARANI_VECTOR_COOLDOWN", 3601),
    ("KARANI_ADMIN_LOGIN_ATTEMPTS", 0),
    ("KARANI_ADMIN_LOGIN_WINDOW", 1.5),
    ("KARANI_API_RECALL_RATE", "600 per minute"),
    ("KARANI_API_WRITE_RATE", 120),
    ("KARANI_DATA_DIR", ""),
    ("KARANI_STANDING_BUDGET", 100),
    ("KARANI_STANDING_BUDGET", "2000"),
]


@pytest.mark.parametrize(("name", "value"), BAD)
def test_it_refuses_a_bad_value_in_one_line_naming_the_setting(name, value):
    with override_settings(**{name: value}):
        errors = [e for e in run_checks() if e.id == "karani.E001"]
    assert len(errors) == 1
    message = errors[0].msg
    assert message.startswith(f"{name}={value!r} is not valid; use ")
    assert "\n" not in message


GOOD = [
    ("KARANI_MEMORY", "mem0"),
    ("KARANI_MEMORY_TOP_K", 10),
    ("KARANI_MEMORY_HOLDOUT", 0.5),
    ("KARANI_LLM_TIMEOUT", 1),
    ("KARANI_API_RECALL_RATE", None),
    ("KARANI_API_RECALL_RATE", "off"),
    ("KARANI_API_WRITE_RATE", "5/second"),
    ("KARANI_DATA_DIR", None),
    ("KARANI_VECTOR_COOLDOWN", 0),
    ("KARANI_STANDING_BUDGET", 600),
]


@pytest.mark.parametrize(("name", "value"), GOOD)
def test_it_accepts_values_karani_can_use(name, value):
    with override_settings(**{name: value}):
        assert [e for e in run_checks() if e.id == "karani.E001"] == []


def test_every_default_passes_its_own_check():
    for setting in DECLARED:
        assert setting.rule.valid(setting.default), setting.name


def test_an_unset_setting_reads_its_default(settings):
    del settings.KARANI_MEMORY_TOP_K
    assert app_settings.KARANI_MEMORY_TOP_K == 5
    settings.KARANI_MEMORY_TOP_K = 7
    assert app_settings.KARANI_MEMORY_TOP_K == 7


def test_it_warns_when_the_schema_would_need_drf_spectacular_s_class():
    assert check_schema_class() == []  # karani_site sets it
    with override_settings(REST_FRAMEWORK={}):
        [warning] = check_schema_class()
    assert warning.id == "karani.W001"
    assert "DEFAULT_SCHEMA_CLASS" in warning.msg


def test_the_embedding_page_lists_every_setting_with_its_default():
    text = EMBEDDING_DOC.read_text()
    rows = re.findall(r"^\| `(KARANI_\w+)` \| `([^`]*)` \|", text, flags=re.MULTILINE)
    assert sorted(name for name, _ in rows) == sorted(s.name for s in DECLARED)
    defaults = {s.name: s.default for s in DECLARED}
    for name, default in rows:
        assert default == repr(defaults[name]), name
