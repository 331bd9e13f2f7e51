"""Term bitmaps: the keyword index in the shape exact top-k ranking needs.

For each *term* — a content word ("w:remote"), a company scope ("c:northwind robotics") or
the global scope ("g") — and each block of 8,192 consecutive fact ids, one row holds the set
of live facts in that block that carry the term. Maintained in the same transaction as every
write, and cleared on soft delete; ``rebuild`` derives them all again from the facts.

Two encodings share the ``bits`` column, told apart by length: a 1 KiB bitset (bit i = fact
block * 8192 + i), or, for up to ``SPARSE_MAX`` facts, their offsets in the block as
little-endian uint16 (2 bytes each). Most rows are rare words with a handful of facts: at a
million facts 95% of rows hold under 32, and the sparse form shrinks the table from 1.5 GB
to about 160 MB, so a recall's rows come from shared buffers instead of the disk cache.

Why: the score is "distinct query words in the fact (+1 for a named company)", so the exact
top-k needs, for every fact, how many query words it holds. Summing postings row by row costs
as much as the commonest word (half a million rows for "engineer" at a million facts); adding
bitsets costs one byte per fact per query word, in numpy, whatever the words. At a million
facts a six-word query reads ~6 x 123 rows and does ~10 M byte additions.
"""

import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np
from django.db import connection, transaction

from memory import text as textmod
from memory.models import TermBitmap

if TYPE_CHECKING:
    import psycopg

BLOCK_BITS = 8192
BLOCK_BYTES = BLOCK_BITS // 8
GLOBAL_TERM = "g"
# Offsets a row holds before it turns into a bitset (128 bytes, an eighth of one).
SPARSE_MAX = 64
_REBUILD_BATCH = 500


def encode(bitset: bytes | bytearray) -> bytes:
    """The stored form of one block's bitset: its offsets when few, else the bitset itself."""
    bits = np.frombuffer(bytes(bitset), dtype=np.uint8)
    if int(np.bitwise_count(bits).sum()) > sparse_max():
        return bytes(bitset)
    offsets = np.flatnonzero(np.unpackbits(bits, bitorder="little"))
    return offsets.astype("<u2").tobytes()


def sparse_max() -> int:
    # An offset list must stay shorter than a bitset: the length tells them apart.
    return min(SPARSE_MAX, (BLOCK_BYTES - 1) // 2)


def decode(stored: bytes) -> bytearray:
    """A stored row back to its 1 KiB bitset."""
    if len(stored) == BLOCK_BYTES:
        return bytearray(stored)
    bits = np.zeros(BLOCK_BITS, dtype=np.uint8)
    bits[np.frombuffer(stored, dtype="<u2")] = 1
    return bytearray(np.packbits(bits, bitorder="little").tobytes())


def word_term(token: str) -> str:
    return f"w:{token}"


def scope_term(company_key: str | None) -> str:
    return GLOBAL_TERM if company_key is None else f"c:{company_key}"


def fact_terms(tokens: Iterable[str], company_key: str | None) -> list[str]:
    return [*(word_term(t) for t in tokens), scope_term(company_key)]


def add(facts: Iterable[tuple[int, list[str]]]) -> None:
    """Set the bits of ``(memory_id, terms)`` pairs: new live facts."""
    _apply(facts, on=True)


def remove(facts: Iterable[tuple[int, list[str]]]) -> None:
    """Clear the bits of ``(memory_id, terms)`` pairs: facts leaving the live set."""
    _apply(facts, on=False)


def _apply(facts: Iterable[tuple[int, list[str]]], *, on: bool) -> None:
    facts = list(facts)
    if len(facts) == 1 and connection.vendor == "postgresql":
        _apply_one_pg(*facts[0], on=on)
        return
    changes: dict[tuple[str, int], list[int]] = defaultdict(list)
    for memory_id, terms in facts:
        block, pos = divmod(memory_id, BLOCK_BITS)
        for term in terms:
            changes[(term, block)].append(pos)
    if not changes:
        return
    terms = sorted({t for t, _ in changes})
    blocks = sorted({b for _, b in changes})
    # Raw SQL: this runs inside every remember(), and the ORM's bulk_update costs ~10x more.
    # Callers hold lock_writes(), so nobody else changes these rows until we commit.
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT id, term, block, bits FROM {_TABLE}"
            f" WHERE term IN ({_marks(terms)}) AND block IN ({_marks(blocks)})",
            [*terms, *blocks],
        )
        existing = {(t, b): (pk, bits) for pk, t, b, bits in cur.fetchall()}
        updates, inserts = [], []
        for key in sorted(changes):
            pk, bits = existing.get(key, (None, None))
            if pk is None and not on:  # clearing a bit that was never set
                continue
            buf = decode(bits) if pk is not None else bytearray(BLOCK_BYTES)
            for pos in changes[key]:
                if on:
                    buf[pos >> 3] |= 1 << (pos & 7)
                else:
                    buf[pos >> 3] &= ~(1 << (pos & 7)) & 0xFF
            if pk is None:
                inserts.append((key[0], key[1], encode(buf)))
            else:
                updates.append((encode(buf), pk))
        if updates:
            cur.executemany(f"UPDATE {_TABLE} SET bits = %s WHERE id = %s", updates)
        if inserts:
            cur.executemany(
                f"INSERT INTO {_TABLE} (term, block, bits) VALUES (%s, %s, %s)", inserts
            )


def _apply_one_pg(memory_id: int, terms: list[str], *, on: bool) -> None:
    """One fact, one statement: its terms share a block and an offset.

    remember() runs this; the read-modify-write path above would cost three round trips.
    karani_bits_set() (migration 0006) edits either encoding in the database: bitsets
    through set_bit(), which numbers bits like this module (bit n is byte n // 8, bit n % 8
    from the least significant end), offset lists by appending or dropping 2 bytes.
    """
    block, pos = divmod(memory_id, BLOCK_BITS)
    with connection.cursor() as cur:
        if on:
            cur.execute(
                f"INSERT INTO {_TABLE} AS b (term, block, bits)"
                " SELECT t, %s, %s FROM unnest(%s::text[]) AS t"
                " ON CONFLICT (term, block) DO UPDATE"
                " SET bits = karani_bits_set(b.bits, %s, 1, %s, %s)",
                # A new row starts as an offset list of one: pos as 2 little-endian bytes.
                [
                    block,
                    pos.to_bytes(2, "little"),
                    sorted(set(terms)),
                    pos,
                    sparse_max(),
                    BLOCK_BYTES,
                ],
            )
        else:
            cur.execute(
                f"UPDATE {_TABLE} SET bits = karani_bits_set(bits, %s, 0, %s, %s)"
                " WHERE term = ANY(%s::text[]) AND block = %s",
                [pos, sparse_max(), BLOCK_BYTES, sorted(set(terms)), block],
            )


# Created by migration 0006 (Postgres only). Offsets stay in insertion order: readers do not
# need them sorted, and appending keeps the common case (a new, highest id) one concatenation.
BITS_SET_FUNCTION = """
CREATE OR REPLACE FUNCTION karani_bits_set(bits bytea, pos integer, val integer,
                                           sparse_max integer, dense_bytes integer)
RETURNS bytea LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    n integer := length(bits) / 2;
    dense bytea;
BEGIN
    IF length(bits) = dense_bytes THEN
        RETURN set_bit(bits, pos, val);
    END IF;
    FOR i IN 0 .. n - 1 LOOP
        IF get_byte(bits, 2 * i) + 256 * get_byte(bits, 2 * i + 1) = pos THEN
            IF val = 1 THEN
                RETURN bits;
            END IF;
            RETURN substring(bits FROM 1 FOR 2 * i) || substring(bits FROM 2 * i + 3);
        END IF;
    END LOOP;
    IF val = 0 THEN
        RETURN bits;
    END IF;
    IF n < sparse_max THEN
        RETURN bits || set_byte(set_byte('\\x0000'::bytea, 0, mod(pos, 256)), 1, pos / 256);
    END IF;
    dense := set_bit(decode(repeat('00', dense_bytes), 'hex'), pos, 1);
    FOR i IN 0 .. n - 1 LOOP
        dense := set_bit(dense, get_byte(bits, 2 * i) + 256 * get_byte(bits, 2 * i + 1), 1);
    END LOOP;
    RETURN dense;
END
$$
"""


def _marks(values: list) -> str:
    return ", ".join(["%s"] * len(values))


_TABLE = TermBitmap._meta.db_table


def terms_of(memory_id: int) -> set[str]:
    """The terms whose bitmaps hold this fact: what recall can find it by (for audits, tests)."""
    block, pos = divmod(memory_id, BLOCK_BITS)
    rows = TermBitmap.objects.filter(block=block).values_list("term", "bits")
    return {term for term, bits in rows if decode(bytes(bits))[pos >> 3] >> (pos & 7) & 1}


def rebuild(*, model: type = TermBitmap) -> int:
    """Build every bitmap from the ledger into the empty bitmap table; returns blocks done.

    The facts are the source of truth (their text tokenised as remember() does): this is
    how a ledger from before the bitmaps (migration 0004) gets them. One block at a time, so
    memory stays flat however large the ledger.
    """
    if model.objects.exists():
        raise RuntimeError("rebuild() fills an empty bitmap table")
    with connection.cursor() as cur:
        cur.execute("SELECT MIN(id), MAX(id) FROM memories WHERE deleted_at IS NULL")
        lo, hi = cur.fetchone()
    if lo is None:
        return 0
    done = 0
    for block in range(lo // BLOCK_BITS, hi // BLOCK_BITS + 1):
        _rebuild_block(block, model)
        done += 1
    return done


def _rebuild_block(block: int, model: type) -> None:
    start, end = block * BLOCK_BITS, (block + 1) * BLOCK_BITS
    bits: dict[str, bytearray] = defaultdict(lambda: bytearray(BLOCK_BYTES))

    def mark(term: str, memory_id: int) -> None:
        pos = memory_id - start
        bits[term][pos >> 3] |= 1 << (pos & 7)

    with connection.cursor() as cur:
        cur.execute(
            "SELECT id, text, company_key FROM memories WHERE deleted_at IS NULL"
            " AND id >= %s AND id < %s",
            [start, end],
        )
        for memory_id, text, company_key in cur.fetchall():
            for term in fact_terms(textmod.tokens(text), company_key):
                mark(term, memory_id)
    model.objects.bulk_create(
        [model(term=t, block=block, bits=encode(b)) for t, b in sorted(bits.items())],
        batch_size=_REBUILD_BATCH,
    )


def compact() -> dict[str, float | int | bool]:
    """Store each term's rows next to each other (Postgres: CLUSTER on (term, block)).

    Recall reads every row of a few terms. Rows are born a block at a time, so in insertion
    order one term's rows lie a row per heap page apart: a common word at a million facts
    is 123 page visits. Clustered, they are a few consecutive pages, and the read costs about
    a third less (bench/bitmap_layout.py, README). New blocks keep being appended at the end,
    a row per term every 8,192 facts, so the order decays slowly; run this after a bulk
    import, or now and then. CLUSTER locks the table while it rewrites it: recall and writes
    wait (seconds at a million facts). SQLite has nothing to do: its rows stay in id order.
    """
    if connection.vendor != "postgresql":
        return {"clustered": False, "rows": TermBitmap.objects.count(), "seconds": 0.0}
    started = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cur:
        # Writers first, as every write path does, so none waits on the table lock while
        # holding the write lock (lock_writes is always taken before any table or row).
        lock_writes()
        cur.execute(f"CLUSTER {_TABLE} USING memory_term_bitmaps_unique")
        cur.execute(f"ANALYZE {_TABLE}")
        cur.execute(f"SELECT count(*), pg_total_relation_size('{_TABLE}') FROM {_TABLE}")
        rows, size = cur.fetchone()
    return {
        "clustered": True,
        "rows": rows,
        "bytes": size,
        "seconds": round(time.perf_counter() - started, 2),
    }


def layout() -> dict[str, float | int | None]:
    """How many rows the keyword index holds and, on Postgres, how close they are to term
    order: the planner statistics' correlation of ``term`` with the physical order (1.0
    right after compact(), lower as new blocks append; None before the first ANALYZE,
    which autovacuum runs)."""
    rows = TermBitmap.objects.count()
    if connection.vendor != "postgresql":
        return {"rows": rows, "term_order": None}
    with connection.cursor() as cur:
        cur.execute(
            "SELECT correlation FROM pg_stats WHERE schemaname = current_schema()"
            " AND tablename = %s AND attname = 'term'",
            [_TABLE],
        )
        found = cur.fetchone()
    return {"rows": rows, "term_order": None if found is None else float(found[0])}


# --- ranking ------------------------------------------------------------------------------


def top_k(
    *,
    tokens: list[str],
    named: list[str],
    scope: str | None,
    limit: int,
    columns: tuple[str, ...],
) -> list[tuple[int, int, tuple | None]]:
    """[(memory_id, score, row)] best first: score, then last_seen_at, then id, descending.

    ``named`` holds the company keys the query may name. A key with no live fact has no
    bits, so callers may pass every candidate and let the bitmaps sort them out: that saves
    a query against the memories table per recall.

    ``row`` is the fact's ``columns`` (the first must be id) when the tie-break could bring
    them along: on Postgres it does, in the statement that orders the winners, which saves
    the caller a round trip to fetch them. Elsewhere it is None.
    """
    if not tokens and not named:
        return []
    words = {word_term(t) for t in tokens}
    named_terms = {scope_term(k) for k in named}
    scope_terms = {scope_term(scope), GLOBAL_TERM} if scope is not None else set()
    rows = _fetch(sorted(words | named_terms | scope_terms))
    if not rows:
        return []
    blocks = np.unique(np.concatenate([r.blocks for r in rows]))
    size = len(blocks) * BLOCK_BYTES
    # One dense buffer per role (words are summed; scope and named-company terms are OR-ed),
    # so numpy sees a few long arrays instead of hundreds of 1 KiB ones.
    word_bufs: dict[str, np.ndarray] = {}
    named_buf = np.zeros(size, np.uint8)
    scope_buf = np.zeros(size, np.uint8)
    any_named = False
    for row in rows:
        targets = []
        if row.term in words:
            targets.append(word_bufs.setdefault(row.term, np.zeros(size, np.uint8)))
        if row.term in named_terms:
            targets.append(named_buf)
            any_named = True
        if row.term in scope_terms:
            targets.append(scope_buf)
        for buf in targets:
            row.or_into(buf, blocks)
    # Bit-sliced counters: planes[i] holds bit i of every fact's score, 64 facts per word,
    # so adding a term costs a few passes over n/64 words instead of n bytes.
    top = len(word_bufs) + (1 if any_named else 0)
    if not top:
        return []
    planes = [
        np.zeros(len(blocks) * BLOCK_BYTES // 8, dtype=np.uint64) for _ in range(top.bit_length())
    ]
    for buf in word_bufs.values():
        _add(planes, buf.view(np.uint64))
    if any_named:
        _add(planes, named_buf.view(np.uint64))
    if scope is not None:
        in_scope = scope_buf.view(np.uint64)
        for plane in planes:
            plane &= in_scope
    return _newest_by_level(planes, top, blocks, limit, columns)


class _TermRows:
    """All stored rows of one term, bitsets and offset lists apart, ready for numpy."""

    __slots__ = ("dense", "dense_blocks", "sparse", "sparse_blocks", "sparse_lens", "term")

    def __init__(
        self,
        term: str,
        dense_blocks: list[int],
        dense: bytes,
        sparse_blocks: list[int],
        sparse_lens: list[int],
        sparse: bytes,
    ) -> None:
        self.term = term
        self.dense_blocks = np.asarray(dense_blocks, dtype=np.int64)
        self.dense = dense
        self.sparse_blocks = np.asarray(sparse_blocks, dtype=np.int64)
        self.sparse_lens = np.asarray(sparse_lens, dtype=np.int64)
        self.sparse = sparse

    @property
    def blocks(self) -> np.ndarray:
        return np.concatenate([self.dense_blocks, self.sparse_blocks])

    def or_into(self, buf: np.ndarray, blocks: np.ndarray) -> None:
        """buf |= this term's bits, buf laid out block after block as ``blocks`` lists them."""
        if len(self.dense_blocks):
            slots = np.searchsorted(blocks, self.dense_blocks)
            rows = buf.reshape(len(blocks), BLOCK_BYTES)
            rows[slots] |= np.frombuffer(self.dense, np.uint8).reshape(-1, BLOCK_BYTES)
        if len(self.sparse):
            offsets = np.frombuffer(self.sparse, dtype="<u2").astype(np.int64)
            starts = np.searchsorted(blocks, self.sparse_blocks) * BLOCK_BITS
            offsets += np.repeat(starts, self.sparse_lens // 2)
            np.bitwise_or.at(buf, offsets >> 3, (1 << (offsets & 7)).astype(np.uint8))


def _fetch(terms: list[str]) -> list[_TermRows]:
    """The stored rows of ``terms``, one _TermRows per term that has any."""
    sql = f"SELECT term, block, bits FROM {_TABLE} WHERE term "
    if connection.vendor == "postgresql":
        # Binary results carry bytea as raw bytes instead of hex text: about 1 MB for six
        # common words at a million facts. Django's cursor wrapper has no way to ask for
        # binary rows, so this statement uses a plain psycopg cursor on Django's own
        # connection (same transaction, same settings). Grouping
        # by term in SQL was tried: the server's sorts cost more than the loop below.
        with _raw_cursor() as cur:
            cur.execute(sql + "= ANY(%s)", [terms], binary=True)
            rows = cur.fetchall()
    else:
        with connection.cursor() as cur:
            cur.execute(sql + f"IN ({_marks(terms)})", terms)
            rows = cur.fetchall()
    grouped: dict[str, tuple[list, list, list, list]] = {}
    for term, block, bits in rows:
        group = grouped.get(term)
        if group is None:
            group = grouped[term] = ([], [], [], [])
        if len(bits) == BLOCK_BYTES:
            group[0].append(block)
            group[1].append(bits)
        else:
            group[2].append(block)
            group[3].append(bits)
    return [
        _TermRows(
            term,
            dense_blocks,
            b"".join(dense),
            sparse_blocks,
            [len(b) for b in sparse],
            b"".join(sparse),
        )
        for term, (dense_blocks, dense, sparse_blocks, sparse) in grouped.items()
    ]


@contextmanager
def _raw_cursor() -> Iterator["psycopg.Cursor"]:
    """A plain psycopg cursor (binary results), with what Django's own ``cursor()`` adds:
    the per-request health check of a kept connection first, and driver errors re-raised as
    Django's (a DatabaseError, the API's 503; the broken connection is discarded after the
    request) instead of escaping as psycopg's."""
    # Imported here: psycopg is only needed, and only sure to be installed, on Postgres.
    import psycopg

    connection.close_if_health_check_failed()
    connection.ensure_connection()
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cur:
        yield cur


def _add(planes: list[np.ndarray], bits: np.ndarray) -> None:
    """planes += bits, one ripple-carry step per plane (each fact's counter gains 0 or 1)."""
    carry = bits.copy()
    for plane in planes:
        next_carry = plane & carry
        plane ^= carry
        carry = next_carry
        if not carry.any():
            break


def _level_mask(planes: list[np.ndarray], level: int) -> np.ndarray:
    mask = np.full_like(planes[0], np.iinfo(np.uint64).max)
    for i, plane in enumerate(planes):
        mask &= plane if (level >> i) & 1 else ~plane
    return mask


def _newest_by_level(
    planes: list[np.ndarray], top: int, blocks: np.ndarray, limit: int, columns: tuple[str, ...]
) -> list[tuple[int, int, tuple | None]]:
    out: list[tuple[int, int, tuple | None]] = []
    for level in range(top, 0, -1):
        mask = _level_mask(planes, level)
        count = int(np.bitwise_count(mask).sum())
        if not count:
            continue
        newest = _newest(mask, count, limit - len(out), blocks, columns)
        out += [(mid, level, row) for mid, row in newest]
        if len(out) >= limit:
            break
    return out


def _newest(
    mask: np.ndarray, count: int, want: int, blocks: np.ndarray, columns: tuple[str, ...]
) -> list[tuple[int, tuple | None]]:
    """The ``want`` most recently seen of the ``count`` facts in ``mask``, with their rows
    where the database brought them (Postgres).

    Two ways: fetch every candidate by primary key and sort (cost ~ count), or read live
    facts newest first and keep the candidates (cost ~ want * universe / count, as the
    candidates are spread through the ledger). Fetch while that is cheaper.
    """
    universe = int(blocks[-1] + 1) * BLOCK_BITS
    ratio = _WALK_RATIO_PG if connection.vendor == "postgresql" else _WALK_RATIO_SQLITE
    if count * count <= max(DIRECT_MIN**2, want * universe // ratio):
        return _fetch_newest(_ids(mask, blocks), want, columns)
    if connection.vendor == "postgresql":
        return _walk_newest_pg(mask, blocks, want, count, columns)
    return [(mid, None) for mid in _walk_newest(_ids(mask, blocks), want)]


def _ids(mask: np.ndarray, blocks: np.ndarray) -> np.ndarray:
    # Unpack only the 64-bit words that hold a candidate: a few hundred, not the whole ledger.
    words = np.flatnonzero(mask)
    bits = np.unpackbits(mask[words].view(np.uint8), bitorder="little").reshape(len(words), 64)
    word_at, bit_at = np.nonzero(bits)
    positions = words[word_at] * 64 + bit_at
    return blocks[positions // BLOCK_BITS] * BLOCK_BITS + positions % BLOCK_BITS


def _fetch_newest(
    ids: np.ndarray, want: int, columns: tuple[str, ...]
) -> list[tuple[int, tuple | None]]:
    if connection.vendor == "postgresql":
        # The database sorts (an index-only scan of memories_live_seen), then reads the
        # winners' rows: nothing to sort in Python, no second query for the rows.
        with _raw_cursor() as cur:
            cur.execute(_FETCH_PG.format(columns=_cols(columns)), [ids.tolist(), want], binary=True)
            return [(row[0], row) for row in cur.fetchall()]
    found: list[tuple] = []
    id_list = ids.tolist()
    with connection.cursor() as cur:
        for i in range(0, len(id_list), _IN_CHUNK):
            part = id_list[i : i + _IN_CHUNK]
            cur.execute(
                "SELECT last_seen_at, id FROM memories WHERE deleted_at IS NULL"
                f" AND id IN ({', '.join(['%s'] * len(part))})",
                part,
            )
            found += cur.fetchall()
    found.sort(reverse=True)
    return [(mid, None) for _, mid in found[:want]]


def _walk_newest_pg(
    mask: np.ndarray, blocks: np.ndarray, want: int, count: int, columns: tuple[str, ...]
) -> list[tuple[int, tuple | None]]:
    """Postgres reads live facts newest first and tests each id against the mask itself.

    The mask goes over as one dense bytea from the first candidate block to the last, and
    get_bit() tests an id in O(1), so only the winners come back, in order. The inner LIMIT
    keeps the plan an ordered walk of memories_live_recent however the planner guesses the
    bit test's selectivity. The window is sized for candidates spread evenly through time;
    if it held too few winners (recency and the candidates need not be independent), a
    four times larger one is read. The winners' rows come back with them (one result row
    per winner, the walk's answer repeated on each).
    """
    lo, hi = int(blocks[0]), int(blocks[-1]) + 1
    dense = np.zeros((hi - lo, BLOCK_BYTES), dtype=np.uint8)
    dense[blocks - lo] = mask.view(np.uint8).reshape(len(blocks), BLOCK_BYTES)
    first, end = lo * BLOCK_BITS, hi * BLOCK_BITS
    window = max(WALK_MIN_WINDOW, WALK_SPREAD * want * (end - first) // count)
    candidates = dense.tobytes()
    sql = _WALK_PG.format(columns=_cols(columns))
    with _raw_cursor() as cur:
        while True:
            cur.execute(sql, [first, end, candidates, first, window, want], binary=True)
            result = cur.fetchall()
            found, scanned = result[0][0] or [], result[0][1]
            if len(found) >= want or scanned < window:  # enough, or no more live facts
                rows = {r[2]: tuple(r[2:]) for r in result if r[2] is not None}
                return [(mid, rows[mid]) for mid in found[:want]]
            window *= 4


def _walk_newest(ids: np.ndarray, want: int) -> list[int]:
    """Read live facts newest first (memories_live_recent) and keep those in ``ids``.

    Used when ``ids`` is dense: about want * live / len(ids) rows give the answer.
    """
    universe = int(ids[-1]) + 1
    batch = min(max(256, int(2 * want * universe / len(ids))), 50_000)
    out: list[int] = []
    after: tuple | None = None
    with connection.cursor() as cur:
        while len(out) < want:
            if after is None:
                cur.execute(_WALK_FIRST, [batch])
            else:
                cur.execute(_WALK_NEXT, [after[0], after[1], batch])
            rows = cur.fetchall()
            if not rows:
                break
            got = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
            at = np.minimum(np.searchsorted(ids, got), len(ids) - 1)
            out += got[ids[at] == got][: want - len(out)].tolist()
            after = rows[-1]
            batch = min(batch * 2, 50_000)
    return out


_IN_CHUNK = 900  # under SQLite's bound-parameter limit on old builds
DIRECT_MIN = 256
WALK_MIN_WINDOW = 256
# Margin over the rows an even spread of candidates would need.
WALK_SPREAD = 2
# A candidate fetched by id costs about this many entries of the ordered walk. Postgres:
# bench/tiebreak_paths.py at a million facts puts the crossover at ~700 candidates (by id
# 6.0 ms vs walk 7.3 at 600; 7.8 vs 6.8 at 800), and 5 x 1M / 700^2 = 10. SQLite keeps the
# ratio measured with bench/recall_bench.py when its walk was written.
_WALK_RATIO_PG = 10
_WALK_RATIO_SQLITE = 32
# One lookup per candidate, written as a lateral join so that the only sensible plan is an
# index-only probe of memories_live_seen per id. Written as "id = ANY(...) ORDER BY ...
# LIMIT", the planner chose, depending on the array's size, primary-key scans that read a
# heap page per id, or a walk of the whole recency index (~100 ms at a million facts).
_FETCH_PG = (
    "SELECT {columns} FROM (SELECT c.id, s.last_seen_at FROM unnest(%s::bigint[]) AS c(id)"
    " CROSS JOIN LATERAL (SELECT last_seen_at FROM memories"
    " WHERE id = c.id AND deleted_at IS NULL) s"
    " ORDER BY s.last_seen_at DESC, c.id DESC LIMIT %s) w"
    " JOIN memories m ON m.id = w.id ORDER BY w.last_seen_at DESC, w.id DESC"
)
_WALK_PG = (
    "WITH w AS (SELECT array_agg(id ORDER BY last_seen_at DESC, id DESC) FILTER (WHERE CASE"
    " WHEN id >= %s AND id < %s THEN get_bit(%s::bytea, (id - %s)::int) = 1 END) AS found,"
    " count(*) AS scanned"
    " FROM (SELECT id, last_seen_at FROM memories WHERE deleted_at IS NULL"
    " ORDER BY last_seen_at DESC, id DESC LIMIT %s) recent)"
    " SELECT w.found, w.scanned, {columns} FROM w"
    " LEFT JOIN memories m ON m.id = ANY(w.found[1:%s])"
)


def _cols(columns: tuple[str, ...]) -> str:
    # Column names come from code (keyword.ROW_FIELDS), never from input.
    return ", ".join(f"m.{c}" for c in columns)


_WALK_FIRST = (
    "SELECT last_seen_at, id FROM memories WHERE deleted_at IS NULL"
    " ORDER BY last_seen_at DESC, id DESC LIMIT %s"
)
_WALK_NEXT = (
    "SELECT last_seen_at, id FROM memories WHERE deleted_at IS NULL"
    " AND (last_seen_at, id) < (%s, %s) ORDER BY last_seen_at DESC, id DESC LIMIT %s"
)


def lock_writes() -> None:
    """Serialise ledger writes for the rest of the transaction (Postgres; SQLite already does).

    Bitmap rows are read, changed in Python and written back, and the rows of common words
    are shared by almost every fact: two writers interleaving would lose each other's bits.
    Every write transaction takes this lock first, before any row lock, so it can neither
    lose updates nor deadlock (row locks taken mid-transaction in different orders could:
    a correction clears one fact's words, then sets another's). Writes are a person's
    teaching or a pipeline's verdicts; hundreds per second is ample.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s)", [WRITE_LOCK_KEY])


WRITE_LOCK_KEY = 0x6B6172616E69  # "karani"
