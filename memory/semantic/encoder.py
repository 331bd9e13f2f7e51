"""Text into vectors, on two sides (docs/embedders.md): a question is embedded as the query
side, every stored text (fact, sentence, extracted statement) as the passage side, each with
its prefix and, on an endpoint, its model name. The query embedding is on every semantic
recall's critical path: for the local model, the steps ``encode`` runs for one text without
its batch machinery (tests/test_semantic_encoder.py).
"""

import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from memory.errors import first_line
from memory.semantic.client import Client
from memory.semantic.config import SemanticConfig, SemanticUnavailable

QUERY, PASSAGE = "query", "passage"
# mem0's own default for an endpoint with no model name, kept so such a setup embeds as before.
DEFAULT_ENDPOINT_MODEL = "nomic-embed-text"
# An endpoint's passage batch may take this long per text on top of the store's timeout: a
# reindex batch of 64 on a busy CPU server takes tens of seconds, a question must not.
SECONDS_PER_PASSAGE = 1.0

# One fast encoder per loaded model object (a reload builds a new one) and query prefix.
_encoders: "weakref.WeakKeyDictionary[Any, dict[str, Callable[[str], Any]]]" = (
    weakref.WeakKeyDictionary()
)
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
            from openai import OpenAI

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


def local_model(client: Client) -> Any:
    """The SentenceTransformer behind mem0's embedder, or None for an endpoint."""
    model = getattr(client.memory.embedding_model, "model", None)
    if client.config.embedder_is_remote or model is None:
        return None
    from sentence_transformers import SentenceTransformer

    return model if isinstance(model, SentenceTransformer) else None


def _fast_encoder(model: Any, prefix: str) -> Callable[[str], Any]:
    """``SentenceTransformer.encode(text, prompt=prefix)`` for one text, without the batch
    machinery; an empty prefix is the model's default prompt, as ``encode`` resolves it."""
    import torch

    # encode() calls eval() on every call; a loaded model is already in eval mode, and
    # nothing here trains it, so once is enough.
    model.eval()
    prompt, truncate_dim = prefix or model._resolve_prompt(None, None), model.truncate_dim

    def encode(text: str) -> Any:
        with torch.inference_mode():
            # Through __call__, as encode() does, so any forward hooks still apply; the
            # model's preprocess adds the prompt and the length prompt-aware pooling needs.
            features = model.preprocess([text], prompt=prompt)
            embedding = model(features)["sentence_embedding"]
            if truncate_dim is not None:
                embedding = embedding[..., :truncate_dim]
            # bfloat16 weights give a bfloat16 vector; encode() upcasts it the same way.
            return embedding[0].float().numpy()

    return encode


def _usable_fast(model: Any) -> bool:
    # Multi-device or distributed inference is encode()'s business, not the fast path's.
    return getattr(model, "_distributed_inference", None) is None


def query_encoder(client: Client) -> Callable[[str], Any]:
    """A callable text -> vector on the query side: the fast local path, or the endpoint."""
    cfg = client.config
    prefix = side(cfg, QUERY).prefix
    model = local_model(client)
    if model is None:
        return lambda text: remote(cfg, QUERY, [text])[0]
    if not _usable_fast(model):
        return lambda text: model.encode(text, prompt=prefix or None, convert_to_numpy=True)
    with _lock:
        by_prefix = _encoders.setdefault(model, {})
        encoder = by_prefix.get(prefix)
        if encoder is None:
            encoder = by_prefix[prefix] = _fast_encoder(model, prefix)
    return encoder


def embed_query(client: Client, text: str) -> Any:
    """The question's vector (an array for the local model, a list of floats from an
    endpoint), refused when the index was built by another embedder (memory.semantic.identity)."""
    from memory.semantic import identity

    identity.check(client)
    return query_encoder(client)(text)


def passages(client: Client, texts: list[str]) -> Any:
    """One passage-side vector per text: a float32 array (local model) or lists (endpoint)."""
    model = local_model(client)
    if model is None:
        return remote(client.config, PASSAGE, texts)
    prefix = side(client.config, PASSAGE).prefix
    # One forward pass per call, as arrays for the store's binary insert.
    return model.encode(texts, prompt=prefix or None, batch_size=len(texts), convert_to_numpy=True)


def embed_passages(client: Client, texts: list[str]) -> Any:
    """``passages``, for a write: refused when the index was built by another embedder, and
    the first write into an empty collection records this one (memory.semantic.identity)."""
    from memory.semantic import identity

    identity.check(client, writing=True)
    return passages(client, texts)


def probe(cfg: SemanticConfig, embedding_model: Any) -> int:
    """The dimension of the configured embedder's query vectors (one embedding)."""
    if cfg.embedder_is_remote:
        return len(remote(cfg, QUERY, ["dimension check"])[0])
    prefix = side(cfg, QUERY).prefix
    return len(embedding_model.model.encode("dimension check", prompt=prefix or None))
