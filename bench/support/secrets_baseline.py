"""Today's screen before issue 30 (detect-secrets 1.5.0 plus hand patterns), kept as the
baseline that bench/secrets_bench.py measures the new screen against. Not used by karani."""

import re
import unicodedata
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from detect_secrets.plugins.base import BasePlugin

# Entropy scanners are left out on purpose: they flag ordinary quoted words and ids.
# "Public IP" is not a credential.
_SKIPPED_TYPES = {"Base64 High Entropy String", "Hex High Entropy String", "Public IP (ipv4)"}
# The keyword scanner picks its grammar from the file name; the config-file grammar is the
# one that understands both "password: x" and "password=x" in free text.
_AS_FILE = "memory.cfg"
_KEYWORDS = (
    r"pass(?:word|wd|phrase|code)?|pwd|pw|pin(?:[ _-]?code)?|passwort|kennwort"
    r"|mot de passe|contrase[nñ]a|secret|api[_ -]?key|access[_ -]?key|auth[_ -]?token"
    r"|token|client[_ -]?secret"
)
# Keywords that name nothing but a credential: after "=" or ":=" their value is refused
# whatever it looks like ("password=hunter"); "secret = sauce" is left to the shape rule.
_STRONG = re.compile(
    r"pass(?:word|wd|phrase|code)?|pwd|pw|passwort|kennwort|api[_ -]?key|client[_ -]?secret",
    re.IGNORECASE,
)
_EXTRA: list[tuple[str, re.Pattern[str]]] = [
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
    # A classic GitHub token split after its prefix ("ghp_ 1234..."), which detect-secrets'
    # exact-shape pattern no longer matches.
    ("GitHub Token", re.compile(r"\bgh[pousr]_\s+[A-Za-z0-9]{36}\b")),
    # 40 hex digits: a GitHub/GitLab classic token, an SHA-1 HMAC key, a webhook secret. Both
    # letters and digits are required so that a run of one character class is not counted.
    (
        "Hex Token",
        re.compile(r"\b(?=[0-9a-f]{0,39}[a-f])(?=[0-9a-f]{0,39}[0-9])[0-9a-f]{40}\b", re.I),
    ),
]
# "password=hunter2", "api_key: abc123", "password := Hunter22!", "my pw is hunter22", "the
# password was hunter22", "the password for the portal is Sunshine99", "Passwort ist X": a
# keyword, an optional "for/to/of/on <something>", then a connector and the value.
_ASSIGNED = re.compile(
    rf"\b(?P<key>{_KEYWORDS})\b(?:\s+(?:for|to|of|on)\s+[^.,;:!?=\n]{{1,40}}?)?"
    r"\s*(?P<op>:=|=|:|\s(?:is|was|ist|war|lautet|est|es)\s)\s*"
    r"(?P<quote>[\"'])?(?P<value>[^\s\"']{4,})",
    re.IGNORECASE,
)
# A value looks like a credential when it has a digit, a symbol or a lower-to-upper hump;
# "their secret is teamwork" and "secret: they prefer Go over Rust" are ordinary sentences.
_CREDENTIAL_SHAPE = re.compile(r"\d|[a-z][A-Z]|[^\w]")
_TRAILING_PUNCT = ".,;:!?)"
_ZERO_WIDTH = dict.fromkeys(
    ord(ch) for ch in "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e\u2061\u2062\u2063\u2064"
)


@lru_cache(maxsize=1)
def _look_alikes() -> dict[int, str]:
    """Each non-ASCII character Unicode lists as confusable with one printable ASCII one."""
    # Imported on first use, like detect-secrets below: every process that starts Django
    # loads this module (the admin's forms), and most never check a secret.
    from confusable_homoglyphs.confusables import confusables_data

    table: dict[int, str] = {}
    for char, glyphs in confusables_data.items():
        if len(char) != 1 or char.isascii():
            continue
        for glyph in glyphs:
            if len(glyph["c"]) == 1 and glyph["c"].isascii() and glyph["c"].isprintable():
                table[ord(char)] = glyph["c"]
                break
    return table


def normalise(text: str) -> str:
    """``text`` as the detectors see it: NFKC, zero-width characters dropped, look-alikes
    replaced by the ASCII letters they imitate (Cyrillic "\u0440" becomes "p")."""
    if text.isascii():
        return text
    folded = unicodedata.normalize("NFKC", text).translate(_ZERO_WIDTH)
    return folded.translate(_look_alikes())


def _looks_like_credential(value: str) -> bool:
    value = value.rstrip(_TRAILING_PUNCT)
    return len(value) >= 4 and bool(_CREDENTIAL_SHAPE.search(value))


def _assigned_secret(text: str) -> bool:
    for match in _ASSIGNED.finditer(text):
        value = match.group("value").rstrip(_TRAILING_PUNCT)
        if len(value) < 4:
            continue
        op = match.group("op").strip()
        code_like = op in {"=", ":="} and _STRONG.fullmatch(match.group("key"))
        if code_like or match.group("quote") or _looks_like_credential(value):
            return True
    return False


@lru_cache(maxsize=1)
def _plugins() -> tuple["BasePlugin", ...]:
    # Built once, on first use: calling the plugins directly skips detect-secrets' settings
    # machinery on every call.
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    return tuple(
        cls()
        for secret_type, cls in sorted(get_mapping_from_secret_type_to_class().items())
        if secret_type not in _SKIPPED_TYPES
    )


def _plugin_findings(line: str) -> set[str]:
    found = set()
    for plugin in _plugins():
        for secret in plugin.analyze_line(filename=_AS_FILE, line=line, line_number=0):
            # The keyword scanner takes the rest of the line as the value, so "secret: they
            # prefer Go over Rust" would be a secret; judge its first word as prose is judged.
            if secret.type == "Secret Keyword":
                first = (secret.secret_value or "").split(maxsplit=1)
                if not first or not _looks_like_credential(first[0]):
                    continue
            found.add(secret.type)
    return found


def find_secrets(text: str) -> list[str]:
    """Every credential type found in ``text``, deduplicated, in a stable order."""
    text = normalise(text)
    found = [label for label, pattern in _EXTRA if pattern.search(text)]
    if _assigned_secret(text):
        found.append("Secret Keyword")
    for line in text.splitlines() or [text]:
        found += sorted(_plugin_findings(line))
    return list(dict.fromkeys(found))
