"""The two stored forms of a term bitmap row (offset list, bitset) and the edits on them.

Recall ranking over both forms is proven in test_ledger_recall_equivalence; these specs pin
the encoding itself and Postgres's in-database editor against the Python one.
"""

import random

import pytest
from django.db import connection

from memory import bitmaps


def _bitset(positions: set[int]) -> bytearray:
    buf = bytearray(bitmaps.BLOCK_BYTES)
    for pos in positions:
        buf[pos >> 3] |= 1 << (pos & 7)
    return buf


@pytest.mark.parametrize("count", [0, 1, 2, 63, 64, 65, 500, 8192])
def test_it_round_trips_a_block_of_any_density(count):
    positions = set(random.Random(count).sample(range(bitmaps.BLOCK_BITS), count))
    stored = bitmaps.encode(_bitset(positions))
    assert bitmaps.decode(stored) == _bitset(positions)
    if count <= bitmaps.SPARSE_MAX:
        assert len(stored) == 2 * count  # an offset list
    else:
        assert len(stored) == bitmaps.BLOCK_BYTES  # a bitset


def test_it_keeps_offset_lists_shorter_than_a_bitset_on_small_blocks(monkeypatch):
    # The length is what tells the forms apart, whatever the block size.
    monkeypatch.setattr(bitmaps, "BLOCK_BITS", 256)
    monkeypatch.setattr(bitmaps, "BLOCK_BYTES", 32)
    for count in range(0, 40):
        stored = bitmaps.encode(_bitset(set(range(count))))
        assert len(stored) == 32 if count > 15 else len(stored) == 2 * count
        assert bitmaps.decode(stored) == _bitset(set(range(count)))


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="karani_bits_set is Postgres's")
def test_the_database_edits_rows_like_python_does():
    rng = random.Random(7)
    positions: set[int] = set()
    stored = bitmaps.encode(_bitset(positions))
    forms = set()
    with connection.cursor() as cur:
        # Mostly sets, so the row grows past SPARSE_MAX into a bitset; clears and repeats
        # on the way cover dropping offsets and setting a bit twice.
        for _ in range(400):
            pos = rng.choice([*positions, 0]) if positions and rng.random() < 0.3 else None
            pos = rng.randrange(bitmaps.BLOCK_BITS) if pos is None else pos
            val = 0 if rng.random() < 0.25 else 1
            cur.execute(
                "SELECT karani_bits_set(%s, %s, %s, %s, %s)",
                [stored, pos, val, bitmaps.SPARSE_MAX, bitmaps.BLOCK_BYTES],
            )
            stored = bytes(cur.fetchone()[0])
            (positions.add if val else positions.discard)(pos)
            forms.add("bitset" if len(stored) == bitmaps.BLOCK_BYTES else "offsets")
            assert bitmaps.decode(stored) == _bitset(positions)
    assert forms == {"bitset", "offsets"}
