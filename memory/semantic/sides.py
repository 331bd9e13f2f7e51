"""The embedder's two sides (docs/embedders.md): a question is embedded as the query side,
every stored text (fact, sentence, extracted statement) as the passage side, each with its
prefix and, on an endpoint, its model name; and the endpoint's own embeddings call."""

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from openai import OpenAI

from memory.errors import first_line
from memory.semantic.config import SemanticConfig, SemanticUnavailable

QUERY, PASSAGE = "query", "passage"
# mem0's own default for an endpoint with no model name, kept so such a setup embeds as before.
DEFAULT_ENDPOINT_MODEL = "nomic-embed-text"
# An endpoint's passage batch may take this long per text on top of the store's timeout: a
# reindex batch of 64 on a busy CPU server takes tens of seconds, a question must not.
SECONDS_PER_PASSAGE = 1.0

_lock = threading.Lock()
_endpoints: dict[tuple[str, float], Any] = {}


@dataclass(frozen=True)
class Side:
    prefix: str  # put before each text ("" : none, or a local model's default prompt)
    model: str  # the model name sent to an endpoint ("" for a local model)


def side(cfg: SemanticConfig, which: str) -> Side:
    """The query or the passage side of the configured embedder."""
    prefix, model = (
        (cfg.query_prefix, cfg.query_model)
        if which == QUERY
        else (cfg.passage_prefix, cfg.passage_model)
    )
    if cfg.embedder_is_remote:
        return Side(prefix, model or cfg.embedder_model or DEFAULT_ENDPOINT_MODEL)
    return Side(prefix, "")


def _endpoint(cfg: SemanticConfig) -> Any:
    """An OpenAI client for the embeddings endpoint: bounded, and never retried (the breaker
    decides when to try again), unlike mem0's own client with its 600 s default."""
    key = (cfg.embedder, cfg.timeout)
    with _lock:
        found = _endpoints.get(key)
        if found is None:
            found = _endpoints[key] = OpenAI(
                base_url=cfg.embedder, api_key="local", timeout=cfg.timeout, max_retries=0
            )
    return found


def remote(cfg: SemanticConfig, which: str, texts: Sequence[str]) -> list[list[float]]:
    """One vector per text from the endpoint, on the given side. Raises SemanticUnavailable."""
    chosen = side(cfg, which)
    timeout = cfg.timeout + (SECONDS_PER_PASSAGE * len(texts) if which == PASSAGE else 0)
    try:
        response = _endpoint(cfg).embeddings.create(
            model=chosen.model,
            input=[chosen.prefix + t for t in texts],
            encoding_format="float",
            timeout=timeout,
        )
    except Exception as exc:  # connection refused, timeout, an HTTP error, a bad body
        raise SemanticUnavailable(
            f"the embeddings endpoint {cfg.embedder} (KARANI_EMBEDDER) failed: {first_line(exc)}"
        ) from exc
    data = sorted(response.data, key=lambda item: item.index)
    if len(data) != len(texts):
        raise SemanticUnavailable(
            f"the embeddings endpoint {cfg.embedder} returned {len(data)} vectors for "
            f"{len(texts)} texts"
        )
    return [item.embedding for item in data]


def probe(cfg: SemanticConfig, embedding_model: Any) -> int:
    """The dimension of the configured embedder's query vectors (one embedding)."""
    if cfg.embedder_is_remote:
        return len(remote(cfg, QUERY, ["dimension check"])[0])
    prefix = side(cfg, QUERY).prefix
    return len(embedding_model.model.encode("dimension check", prompt=prefix or None))
