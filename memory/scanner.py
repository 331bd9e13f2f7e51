"""Kingfisher (kingfisher-secret-scanner), the screen's provider-credential half: one small
adapter around its public API, so the next upgrade fails in one place (docs/security.md).

Its rules are compiled once and cached under KARANI_DATA_DIR; scanning is in-process and
never touches the network (validation and revocation are never called).
"""

import os
import re
import threading
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from memory.conf import settings

if TYPE_CHECKING:
    from kingfisher_sdk import Rules, Scanner

# karani's additions to the catalogue, in Kingfisher's own rule format.
CUSTOM_RULES = Path(__file__).with_name("scanner_rules.yml")
# Rule ids carry the catalogue they came from ("betterleaks.github-pat",
# "veles.secrets/gcp-api-key") and, for a provider's second pattern, a ".1" suffix.
_FAMILIES = ("betterleaks.", "veles.secrets/", "kingfisher.", "custom.")
_lock = threading.Lock()


@dataclass(frozen=True)
class Span:
    """Where a credential sits in a text (character offsets) and what kind it is."""

    kind: str
    start: int
    end: int


def cache_dir() -> Path:
    return settings.KARANI_SCANNER_CACHE_DIR


def kind_of(rule_id: str) -> str:
    """The rule's provider and shape, as karani names kinds: ``github-pat``."""
    for family in _FAMILIES:
        if rule_id.startswith(family):
            rule_id = rule_id[len(family) :]
            break
    head, _, tail = rule_id.rpartition(".")
    return head if head and tail.isdigit() else rule_id


@lru_cache(maxsize=1)
def rules() -> "Rules":
    # Kingfisher's native library loads on the first screened text, not on every start-up.
    from kingfisher_sdk import Rules

    path = cache_dir()
    # The library refuses a cache directory others can write to; ours is the owner's alone.
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path, 0o700)
    return Rules([CUSTOM_RULES], cache_dir=path)


@lru_cache(maxsize=1)
def _scanner() -> "Scanner":
    # Kingfisher's native library loads on the first screened text, not on every start-up.
    from kingfisher_sdk import Scanner

    # dedup off: the same token in two texts is two findings, each text judged alone.
    return Scanner(rules(), dedup=False)


def scanner() -> "Scanner":
    # Compiling (or loading) the catalogue takes a second or more: one thread does it once;
    # once built, it is read without the lock.
    if _scanner.cache_info().currsize:
        return _scanner()
    with _lock:
        return _scanner()


# Every provider token sits in a run of 12 or more token characters that is more than one
# word of one letter case ("BUNDLE_GEMS__CONTRIBSYS__COM=cafebabe:deadbeef" is); a text with
# none (and no URI, curl line or PEM block) is not worth loading the catalogue for: a second
# or more in a fresh process.
_RUN = re.compile(r"[\w+/=.~:@|%-]{12,}")
_ONE_WORD = re.compile(r"[a-z-]+|[A-Z-]+")


def _may_hold_token(text: str) -> bool:
    # Credentials in URIs, curl lines and PEM blocks can be all lower case ("root:toor@").
    if ("://" in text and "@" in text) or "-----BEGIN" in text or "curl" in text.lower():
        return True
    return any(not _ONE_WORD.fullmatch(run) for run in _RUN.findall(text))


def scan(text: str) -> list[Span]:
    """Each provider credential in ``text`` (visible findings only), by character offset."""
    return _scanned(text) if _may_hold_token(text) else []


def _scanned(text: str) -> list[Span]:
    data = text.encode("utf-8")
    spans = []
    for finding in scanner().scan(data):
        if not finding.visible:
            continue
        where = finding.location
        start, end = where["start_offset"], where["end_offset"]
        if not text.isascii():  # the library counts bytes; karani counts characters
            start = len(data[:start].decode("utf-8", "ignore"))
            end = len(data[:end].decode("utf-8", "ignore"))
        spans.append(Span(kind_of(finding.rule_id), start, end))
    return spans


# Between texts scanned together: more blank lines than any rule's window reads across (a NUL
# would do it in fewer, but makes the library read the whole input as binary, 1000 times
# slower).
_SEPARATOR = "\n" * 64


def scan_many(texts: list[str]) -> list[list[Span]]:
    """``scan`` of each text, in one call to the library: each call has a fixed cost that a
    few short readings of one text would otherwise pay each."""
    worth = [i for i, text in enumerate(texts) if _may_hold_token(text)]
    found: list[list[Span]] = [[] for _ in texts]
    if len(worth) < 2:
        for i in worth:
            found[i] = _scanned(texts[i])
        return found
    starts, offset = [], 0
    for i in worth:
        starts.append(offset)
        offset += len(texts[i]) + len(_SEPARATOR)
    for span in _scanned(_SEPARATOR.join(texts[i] for i in worth)):
        at = bisect_right(starts, span.start) - 1
        start = span.start - starts[at]
        if span.end - starts[at] <= len(texts[worth[at]]):  # a finding across texts is none
            found[worth[at]].append(Span(span.kind, start, span.end - starts[at]))
    return found


def describe() -> str:
    """One line for `karani doctor`: the library, its version, its rules and their cache."""
    from kingfisher_sdk import __version__  # as rules() and _scanner(): on first use only

    loaded = rules()
    return (
        f"kingfisher {__version__}: {len(loaded)} rules ({loaded.cache_status} from {cache_dir()})"
    )
