"""The query embedding's fast path: the same vector as mem0's embed, real model, real pgvector."""

import pytest
from semantic_support import *  # noqa: F403  (fixtures)
from semantic_support import FakeOpenAIServer, load_paraphrases

from memory import services

pytestmark = [pytest.mark.pgvector, pytest.mark.django_db(transaction=True), pytest.mark.one_pass]


def _texts() -> list[str]:
    items, distractors = load_paraphrases()
    return [
        *(item["query"] for item in items[:8]),
        distractors[0],
        "x",
        "Zürich, São Paulo — remote-first? 100% ✓",
        # Past the model's 256-token limit: encode() truncates, so must the fast path.
        " ".join(["documentation-driven remote employers respond within 48 hours"] * 60),
    ]


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_it_embeds_a_query_exactly_as_mem0_does(mem0_mode, settings, dtype):
    import numpy as np

    from memory.semantic import client, encoder

    settings.KARANI_EMBEDDER_DTYPE = dtype
    loaded = client.get()
    assert encoder.local_model(loaded) is not None  # the fast path is the one under test

    for text in _texts():
        fast = encoder.embed_query(loaded, text)
        mem0 = np.asarray(loaded.memory.embedding_model.embed(text, "search"), dtype=np.float32)
        assert fast.dtype == np.float32 and fast.shape == mem0.shape == (384,)
        np.testing.assert_allclose(fast, mem0, rtol=0, atol=1e-6, err_msg=text[:40])
        cosine = float(fast @ mem0) / float(np.linalg.norm(fast) * np.linalg.norm(mem0))
        assert cosine >= 0.9999, (text[:40], cosine)


def test_it_finds_the_same_neighbours_with_either_vector(mem0_mode):
    import numpy as np

    from memory.semantic import client, encoder, search

    items, distractors = load_paraphrases()
    for item in items:
        services.remember(text=item["fact"], company=item["company"])
    for text in distractors:
        services.remember(text=text)
    loaded = client.get()

    for item in items[:12]:
        filters = search.scope_filters(item["company"].casefold() if item["company"] else None)
        as_array = loaded.store.search(
            query=item["query"],
            vectors=encoder.embed_query(loaded, item["query"]),
            top_k=20,
            filters=filters,
        )
        as_list = loaded.store.search(
            query=item["query"],
            vectors=loaded.memory.embedding_model.embed(item["query"], "search"),
            top_k=20,
            filters=filters,
        )
        assert [r.id for r in as_array] == [r.id for r in as_list]
        np.testing.assert_allclose(
            [r.score for r in as_array], [r.score for r in as_list], rtol=0, atol=1e-6
        )


def test_it_keeps_mem0s_embed_for_a_remote_embedder(mem0_mode, settings):
    from memory.semantic import client, encoder

    server = FakeOpenAIServer()
    settings.KARANI_EMBEDDER = server.url
    settings.KARANI_EMBEDDER_MODEL = "all-minilm"
    try:
        loaded = client.get()
        assert encoder.local_model(loaded) is None
        before = server.paths().count("/v1/embeddings")
        vector = encoder.embed_query(loaded, "remote python role")
        assert server.paths().count("/v1/embeddings") == before + 1
    finally:
        server.close()
    assert isinstance(vector, list) and len(vector) == 384


def test_it_builds_one_fast_encoder_per_loaded_model(mem0_mode, settings):
    from memory.semantic import client, encoder

    settings.KARANI_EMBEDDER_DTYPE = "bfloat16"
    first = client.get()
    assert encoder.query_encoder(first) is encoder.query_encoder(client.get())

    settings.KARANI_EMBEDDER_DTYPE = "float32"  # a new model_key: the model is reloaded
    reloaded = client.get()
    assert reloaded.memory is not first.memory
    assert encoder.query_encoder(reloaded) is not encoder.query_encoder(first)
