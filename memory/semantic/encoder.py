"""The query embedding, on every semantic recall's critical path: for the local model, the
steps ``encode`` runs for one text without its batch machinery (tests/test_semantic_encoder.py)."""

import threading
import weakref
from collections.abc import Callable
from typing import Any

from memory.semantic.client import Client

# One fast encoder per loaded model object (a reload builds a new one).
_encoders: "weakref.WeakKeyDictionary[Any, Callable[[str], Any]]" = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def _fast_encoder(model: Any) -> Callable[[str], Any]:
    """``SentenceTransformer.encode(text)`` for one text, without the batch machinery."""
    import torch

    # encode() calls eval() on every call; a loaded model is already in eval mode, and
    # nothing here trains it, so once is enough.
    model.eval()
    # What encode() resolves per call with no prompt arguments: the model's default prompt
    # (none for the bundled model) and its truncation dimension.
    default = model.default_prompt_name
    prompt = model.prompts.get(default) if default is not None else None
    truncate_dim = model.truncate_dim

    def encode(text: str) -> Any:
        with torch.inference_mode():
            # Through __call__, as encode() does, so any forward hooks still apply.
            embedding = model(model.preprocess([text], prompt=prompt))["sentence_embedding"]
            if truncate_dim is not None:
                embedding = embedding[..., :truncate_dim]
            # bfloat16 weights give a bfloat16 vector; encode() upcasts it the same way.
            return embedding[0].float().numpy()

    return encode


def _local_model(client: Client) -> Any:
    """The SentenceTransformer behind mem0's embedder, or None when this path does not apply."""
    embedder = client.memory.embedding_model
    model = getattr(embedder, "model", None)  # mem0's remote (OpenAI-style) embedder has none
    if model is None or getattr(embedder.config, "huggingface_base_url", None):
        return None
    from sentence_transformers import SentenceTransformer  # optional (the memory extra)

    if not isinstance(model, SentenceTransformer):
        return None
    return model


def query_encoder(client: Client) -> Any:
    """A callable text -> vector: the fast local path, or mem0's embed for everything else."""
    model = _local_model(client)
    if model is None:
        embedder = client.memory.embedding_model
        return lambda text: embedder.embed(text, "search")
    with _lock:
        encoder = _encoders.get(model)
        if encoder is None:
            encoder = _encoders[model] = _fast_encoder(model)
    return encoder


def embed_query(client: Client, text: str) -> Any:
    """The vector mem0's ``embedding_model.embed(text, "search")`` returns (an array for the
    local model, a list of floats from a remote endpoint), cheaper for the local model."""
    return query_encoder(client)(text)
