"""karani's keyword rules read an ASCII text in its lower case, case-sensitively, because that
costs about half of reading it case-insensitively (memory.prose_rules._Rule). Over every
labelled text, and each again with its letters' case flipped at random, both ways find the
same spans; a text that is not ASCII is read case-insensitively as written."""

import json
import random
from pathlib import Path

import credential_cases as cases
import pytest

from memory import credentials, prose_rules

pytestmark = pytest.mark.one_pass

DATA = Path(__file__).parent / "data" / "credentials"


def _texts() -> list[str]:
    texts = [t for t, _ in cases.CREDENTIALS] + list(cases.ORDINARY)
    for name in ("providers", "prose", "benign"):
        with (DATA / f"{name}.jsonl").open(encoding="utf-8") as lines:
            texts += [json.loads(line)["text"] for line in lines if line.strip()]
    rng = random.Random(43)
    flipped = ["".join(c.swapcase() if rng.random() < 0.3 else c for c in t) for t in texts]
    return [credentials.normalise(t) for t in texts + flipped]


def test_reading_the_lower_case_finds_what_reading_any_case_finds(monkeypatch):
    texts = _texts()
    fast = [prose_rules.find(text) for text in texts]
    assert sum(bool(found) for found in fast) >= 300  # the rules do find things here
    monkeypatch.setattr(prose_rules, "_ascii_lowered", lambda text, lowered: None)
    assert [prose_rules.find(text) for text in texts] == fast


def test_a_text_that_is_not_ascii_is_read_as_written():
    # Its lower case may differ in length ("\u0130" lowers to two characters) or miss a
    # case-insensitive match ("\u017f" matches "s" only so).
    text = "Das Passwort f\u00fcr das Bewerberportal ist Harbor58!qx"
    assert prose_rules._ascii_lowered(text, text.lower()) is None
    assert prose_rules.find(text)
