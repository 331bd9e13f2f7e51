"""Text into vectors on the embedder's two sides (memory.semantic.sides). The query embedding
is on every semantic recall's critical path: for the local model, the steps ``encode`` runs
for one text without its batch machinery (tests/test_semantic_encoder.py).
"""

import copy
import logging
import threading
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

from memory.semantic import identity
from memory.semantic.client import Client
from memory.semantic.sides import PASSAGE, QUERY, remote, side

# One fast encoder per loaded model object (a reload builds a new one) and query prefix.
_encoders: "weakref.WeakKeyDictionary[Any, dict[str, Callable[[str], Any]]]" = (
    weakref.WeakKeyDictionary()
)
_lock = threading.Lock()
log = logging.getLogger("karani.memory")


def local_model(client: Client) -> Any:
    """The SentenceTransformer behind mem0's embedder, or None for an endpoint."""
    model = getattr(client.memory.embedding_model, "model", None)
    if client.config.embedder_is_remote or model is None:
        return None
    from sentence_transformers import SentenceTransformer  # optional (the memory extra)

    return model if isinstance(model, SentenceTransformer) else None


def _fast_encoder(model: Any, prefix: str) -> Callable[[str], Any]:
    """``SentenceTransformer.encode(text, prompt=prefix)`` for one text, without the batch
    machinery; an empty prefix is the model's default prompt, as ``encode`` resolves it."""
    import torch  # the memory extra's, and seconds to import: only for a local embedder

    # encode() calls eval() on every call; a loaded model is already in eval mode, and
    # nothing here trains it, so once is enough.
    model.eval()
    # An empty prefix is what encode() resolves with no prompt argument: the model's default
    # prompt (none for the bundled model).
    default = model.default_prompt_name
    prompt = prefix or (model.prompts.get(default) if default is not None else None)
    truncate_dim = model.truncate_dim

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


def query_encoder(client: Client) -> Callable[[str], Any]:
    """A callable text -> vector on the query side: the fast local path, or the endpoint."""
    cfg = client.config
    prefix = side(cfg, QUERY).prefix
    model = local_model(client)
    if model is None:
        return lambda text: remote(cfg, QUERY, [text])[0]
    with _lock:
        by_prefix = _encoders.setdefault(model, {})
        encoder = by_prefix.get(prefix)
        if encoder is None:
            encoder = by_prefix[prefix] = _fast_encoder(model, prefix)
    return encoder


def embed_query(client: Client, text: str) -> Any:
    """The question's vector (an array for the local model, a list of floats from an
    endpoint), refused when the index was built by another embedder (memory.semantic.identity)."""
    identity.check(client)
    return query_encoder(client)(text)


# A posting's pieces go through the local model this many at a time, longest first: small
# passes pad short sentences less than one pass padded to the longest (docs/embedders.md has
# the figures).
QUERIES_PER_PASS = 8


# A posting's 20 to 40 pieces go through an int8 copy of a float32 local model (torch's dynamic
# quantisation, weights per output channel): 1.7 to 1.9 times faster on an AVX2 CPU with the
# decision set's quality held. A single question keeps the full model, and bfloat16 weights
# (a CPU computing them natively) are left as they are: an int8 copy of those was faster but
# showed fewer deciding facts (docs/embedders.md).
QUANTIZED_PASSES = True
_quantized: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
_FULL = object()


def _int8(model: Any) -> Any:
    # The memory extra's, and seconds to import: only for a local embedder.
    import torch
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    # Per channel: per tensor moved some vectors to a cosine of 0.86 with their float32 selves,
    # per channel kept every piece of the decision set above 0.93.
    spec = {torch.nn.Linear: per_channel_dynamic_qconfig}
    with warnings.catch_warnings():
        # torch points to torchao, which is not a dependency (docs/embedders.md).
        warnings.simplefilter("ignore")
        return quantize_dynamic(copy.deepcopy(model), spec, inplace=True)


def pass_model(model: Any) -> Any:
    """The model a posting's pieces are encoded with: the int8 copy of a float32 ``model``
    (made once per loaded model), else ``model`` itself."""
    import torch  # the memory extra's, and seconds to import: only for a local embedder

    if not QUANTIZED_PASSES or next(model.parameters()).dtype != torch.float32:
        return model
    with _lock:
        quantized = _quantized.get(model)
        if quantized is None:
            try:
                quantized = _int8(model)
            except Exception as exc:  # a torch without the eager API: slower, never wrong
                log.warning("int8 passes unavailable, using the full model (%s)", exc)
                quantized = _FULL
            _quantized[model] = quantized
    # The marker, not the model: a value holding its own key would never be dropped.
    return model if quantized is _FULL else quantized


def _batch(client: Client, which: str, texts: list[str], per_pass: int = 0) -> Any:
    """One vector per text on the given side, in one call: a float32 array (local model, in
    passes of ``per_pass`` texts, or one pass) or lists (endpoint). Query-side passes (a
    posting's pieces) run on ``pass_model``."""
    model = local_model(client)
    if model is None:
        return remote(client.config, which, texts)
    if which == QUERY:
        model = pass_model(model)
    prefix = side(client.config, which).prefix
    size = per_pass or len(texts)
    return model.encode(texts, prompt=prefix or None, batch_size=size, convert_to_numpy=True)


def passages(client: Client, texts: list[str]) -> Any:
    """One passage-side vector per text, as arrays for the store's binary insert."""
    return _batch(client, PASSAGE, texts)


# A posting's sentences recur: its company's "About us", benefits and equal-opportunity text in
# each of its postings, and the whole posting when its block is asked for again. The local
# model's query vectors are kept for the most recent texts (an endpoint's are not: its model
# may change behind the same name).
KEPT_QUERY_VECTORS = 4096
_kept: "weakref.WeakKeyDictionary[Any, OrderedDict[tuple[str, str], Any]]" = (
    weakref.WeakKeyDictionary()
)
_kept_lock = threading.Lock()


def embed_queries(client: Client, texts: list[str]) -> list[Any]:
    """Several questions at once on the query side (a posting's pieces), refused like
    ``embed_query`` when the index was built by another embedder. The local model encodes
    only the texts whose vectors are not kept from an earlier call."""
    vectors: list[Any] = [None] * len(texts)
    for positions, found in queries_in_passes(client, texts):
        for n, vector in zip(positions, found, strict=True):
            vectors[n] = vector
    return vectors


def queries_in_passes(client: Client, texts: list[str]) -> Iterator[tuple[list[int], list[Any]]]:
    """``embed_queries`` a pass at a time: each pass's positions in ``texts`` and their
    vectors as soon as it is encoded (the kept ones first), so that a caller may search with
    one pass's vectors while the next is encoded."""
    identity.check(client)
    model = local_model(client)
    if model is None:
        yield list(range(len(texts))), list(_batch(client, QUERY, texts, QUERIES_PER_PASS))
        return
    prefix = side(client.config, QUERY).prefix
    # Kept per model that made them: the int8 copy's vectors are not the full model's.
    maker = pass_model(model)
    with _kept_lock:
        kept = _kept.setdefault(maker, OrderedDict())
        found = {t: kept[(prefix, t)] for t in texts if (prefix, t) in kept}
        for text in found:
            kept.move_to_end((prefix, text))
    if found:
        yield _positions(texts, found)
    # Longest first, as encode() sorts them, so each pass pads its texts to near their length.
    missing = sorted((t for t in dict.fromkeys(texts) if t not in found), key=len, reverse=True)
    for start in range(0, len(missing), QUERIES_PER_PASS):
        chunk = missing[start : start + QUERIES_PER_PASS]
        made = {}
        vectors = _batch(client, QUERY, chunk)
        with _kept_lock:
            for text, vector in zip(chunk, vectors, strict=True):
                # A row of its own (not a view keeping the batch alive), shared by callers, so
                # none may change it.
                own = vector.copy()
                own.setflags(write=False)
                made[text] = kept[(prefix, text)] = own
            while len(kept) > KEPT_QUERY_VECTORS:
                kept.popitem(last=False)
        yield _positions(texts, made)


def _positions(texts: list[str], vectors: dict[str, Any]) -> tuple[list[int], list[Any]]:
    at = [n for n, t in enumerate(texts) if t in vectors]
    return at, [vectors[texts[n]] for n in at]


def forget_queries() -> None:
    """Drop every kept query vector (tests and benches measure a cold start with it)."""
    with _kept_lock:
        _kept.clear()


def embed_passages(client: Client, texts: list[str]) -> Any:
    """``passages``, for a write: refused when the index was built by another embedder, and
    the first write into an empty collection records this one (memory.semantic.identity)."""
    identity.check(client, writing=True)
    return passages(client, texts)
