"""The secrets guard: text carrying a credential is refused before anything is written.

detect-secrets does the heavy lifting. Its scanners are tuned for source files, so a few
shapes that appear in plain prose slip past it; the extra patterns below cover exactly the
misses that tests/test_secrets.py demonstrates.
"""

import re
from dataclasses import dataclass
from functools import lru_cache

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.base import BasePlugin

# Entropy scanners are left out on purpose: they flag ordinary quoted words and ids.
# "Public IP" is not a credential.
_SKIPPED_TYPES = {"Base64 High Entropy String", "Hex High Entropy String", "Public IP (ipv4)"}
# The keyword scanner picks its grammar from the file name; the config-file grammar is the
# one that understands both "password: x" and "password=x" in free text.
_AS_FILE = "memory.cfg"
_EXTRA: list[tuple[str, re.Pattern[str]]] = [
    # "password: hunter2", "passwd=...", "api key is abc123..." in prose, which the keyword
    # scanner only catches in code-like assignments with quotes.
    (
        "Secret Keyword",
        re.compile(
            r"\b(pass(word|wd|phrase)?|pwd|secret|api[_ -]?key|access[_ -]?key|auth[_ -]?token"
            r"|token|client[_ -]?secret)\b\s*(is\s*|[:=]\s*)[\"']?[^\s\"']{6,}",
            re.IGNORECASE,
        ),
    ),
    # scheme://user:password@host — any scheme, not only the ones BasicAuthDetector knows.
    ("Connection String Password", re.compile(r"\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:[^\s@/]+@", re.I)),
    ("Private Key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY( BLOCK)?-----")),
    (
        "JSON Web Token",
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ),
    ("Bearer Token", re.compile(r"\bbearer\s+[A-Za-z0-9\-._~+/]{16,}=*", re.I)),
    (
        "API Key",
        re.compile(
            r"\b(sk-(proj-|ant-)?[A-Za-z0-9_\-]{20,}|gh[pousr]_[A-Za-z0-9]{30,}"
            r"|github_pat_[A-Za-z0-9_]{30,}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_\-]{35}"
            r"|glpat-[A-Za-z0-9_\-]{20})\b"
        ),
    ),
]


@lru_cache(maxsize=1)
def _plugins() -> tuple[BasePlugin, ...]:
    # Built once: going through detect-secrets' settings machinery per call costs ~2 ms,
    # calling the plugins directly ~0.1 ms.
    return tuple(
        cls()
        for secret_type, cls in sorted(get_mapping_from_secret_type_to_class().items())
        if secret_type not in _SKIPPED_TYPES
    )


@dataclass(frozen=True)
class Finding:
    kind: str


def find_secrets(text: str) -> list[Finding]:
    """Every credential type found in ``text``, deduplicated, in a stable order."""
    found: dict[str, None] = {}
    for label, pattern in _EXTRA:
        if pattern.search(text):
            found[label] = None
    for line in text.splitlines() or [text]:
        for plugin in _plugins():
            for secret in plugin.analyze_line(filename=_AS_FILE, line=line, line_number=0):
                found[secret.type] = None
    return [Finding(kind) for kind in found]
