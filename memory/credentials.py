"""The secrets guard: text carrying a credential is refused before anything is written.

detect-secrets does the heavy lifting. Its scanners are tuned for source files, so a few
shapes that appear in plain prose slip past it; the extra patterns below cover exactly the
misses that tests/test_ledger_secrets.py demonstrates.
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
_KEYWORDS = (
    r"pass(?:word|wd|phrase)?|pwd|secret|api[_ -]?key|access[_ -]?key|auth[_ -]?token"
    r"|token|client[_ -]?secret"
)
_EXTRA: list[tuple[str, re.Pattern[str]]] = [
    # "password=hunter2", "api_key: abc123...": the keyword scanner only catches these in
    # code-like assignments with quotes.
    (
        "Secret Keyword",
        re.compile(rf"\b(?:{_KEYWORDS})\b\s*[:=]\s*[\"']?[^\s\"']{{6,}}", re.IGNORECASE),
    ),
    # scheme://user:password@host — any scheme, not only the ones BasicAuthDetector knows, and
    # an empty user too (redis://:password@host).
    ("Connection String Password", re.compile(r"\b[a-z][a-z0-9+.\-]*://[^\s:/@]*:[^\s@/]+@", re.I)),
    # detect-secrets knows RSA/EC/OPENSSH/PGP blocks but not PKCS#8 "ENCRYPTED PRIVATE KEY".
    ("Private Key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY( BLOCK)?-----")),
    ("Bearer Token", re.compile(r"\bbearer\s+[A-Za-z0-9\-._~+/]{16,}=*", re.I)),
    (
        "API Key",
        re.compile(
            # OpenAI/Anthropic, GitHub fine-grained, Google, npm: no detect-secrets plugin.
            r"\b(sk-(proj-|ant-)?[A-Za-z0-9_\-]{20,}|github_pat_[A-Za-z0-9_]{30,}"
            r"|AIza[0-9A-Za-z_\-]{35}|npm_[A-Za-z0-9]{36})\b"
        ),
    ),
]
# "my password is hunter22", "the password for the portal is Sunshine99": prose, so the value
# must look like a credential (a digit, a symbol or a lower-to-upper hump); "a password is
# required" and "their secret is teamwork" are ordinary sentences.
_PROSE_SECRET = re.compile(
    rf"\b(?:{_KEYWORDS})\b(?:\s+for\s+[^.,;:!?\n]{{1,40}}?)?\s+is\s+[\"']?([^\s\"']{{6,}})",
    re.IGNORECASE,
)
_CREDENTIAL_SHAPE = re.compile(r"\d|[a-z][A-Z]|[^\w]")
_TRAILING_PUNCT = ".,;:!?)"


def _prose_secret(text: str) -> bool:
    for match in _PROSE_SECRET.finditer(text):
        value = match.group(1).rstrip(_TRAILING_PUNCT)
        if len(value) >= 6 and _CREDENTIAL_SHAPE.search(value):
            return True
    return False


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
    if "Secret Keyword" not in found and _prose_secret(text):
        found["Secret Keyword"] = None
    for line in text.splitlines() or [text]:
        for plugin in _plugins():
            for secret in plugin.analyze_line(filename=_AS_FILE, line=line, line_number=0):
                found[secret.type] = None
    return [Finding(kind) for kind in found]
