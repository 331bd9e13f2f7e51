"""`karani compact`: the keyword index rewritten term by term, recall unchanged."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from memory import bitmaps, services
from memory.models import Memory, TermBitmap

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_blocks(monkeypatch) -> None:
    # 256-fact blocks: a few hundred facts give each common word several rows.
    monkeypatch.setattr(bitmaps, "BLOCK_BITS", 256)
    monkeypatch.setattr(bitmaps, "BLOCK_BYTES", 32)


def _ledger() -> None:
    services.import_facts(
        records=enumerate(
            (
                {"text": f"remote python role {i} at site {i % 7}", "company": f"Co {i % 5}"}
                for i in range(900)
            ),
            start=1,
        )
    )
    ids = list(Memory.objects.order_by("pk").values_list("pk", flat=True))
    for i in (5, 300, 700):  # holes in old blocks, as forget leaves them
        services.forget(id=ids[i], reason="gone")


def _recalls() -> list:
    return [
        [(f.id, f.score) for f in services.recall(query=q, company=c, limit=20).results]
        for q, c in [("remote python site 3", None), ("role 4 co 2", None), ("python", "Co 1")]
    ]


def _rows() -> dict:
    return {
        (t, b): bytes(bits)
        for t, b, bits in TermBitmap.objects.values_list("term", "block", "bits")
    }


def test_it_keeps_every_bitmap_and_every_ranking(small_blocks):
    _ledger()
    rows, rankings = _rows(), _recalls()
    out = StringIO()
    call_command("compact", "--json", stdout=out)
    result = json.loads(out.getvalue())
    assert result["rows"] == len(rows)
    assert _rows() == rows
    assert _recalls() == rankings
    assert result["clustered"] is (connection.vendor == "postgresql")


@pytest.mark.skipif("connection.vendor != 'postgresql'", reason="CLUSTER is Postgres's")
def test_it_stores_each_terms_rows_together_on_postgres(small_blocks):
    _ledger()

    def physical_order() -> list:
        with connection.cursor() as cur:
            cur.execute("SELECT term, block FROM memory_term_bitmaps ORDER BY ctid")
            return cur.fetchall()

    assert physical_order() != sorted(physical_order())  # born block by block
    services.compact_index()
    assert physical_order() == sorted(physical_order())
    # Writes go on as before: a new fact lands in the index and is found.
    new = services.remember(text="zebra keeper wanted", company="Co 1")
    assert [f.id for f in services.recall(query="zebra", limit=5).results] == [new.id]


def test_the_command_says_what_it_did():
    services.remember(text="remote python role")
    out = StringIO()
    call_command("compact", stdout=out)
    expected = "compacted" if connection.vendor == "postgresql" else "nothing to do on SQLite"
    assert expected in out.getvalue()


def _doctor_line() -> str:
    out = StringIO()
    call_command("doctor", "--json", stdout=out)
    checks = {c["name"]: c for c in json.loads(out.getvalue())["checks"]}
    assert checks["keyword index"]["ok"] is True  # advice, never a failure
    return checks["keyword index"]["detail"]


def test_doctor_says_when_to_compact(monkeypatch):
    # 64-fact blocks: 900 facts make 15 blocks, each born as its own run of rows, so the
    # table is far from term order until compacted.
    monkeypatch.setattr(bitmaps, "BLOCK_BITS", 64)
    monkeypatch.setattr(bitmaps, "BLOCK_BYTES", 8)
    _ledger()
    if connection.vendor != "postgresql":
        assert (
            _doctor_line() == f"{TermBitmap.objects.count()} rows (SQLite keeps them in id order)"
        )
        return
    with connection.cursor() as cur:
        cur.execute("ANALYZE memory_term_bitmaps")
    assert _doctor_line().endswith("(run `karani compact`)")
    services.compact_index()  # analyzes too
    assert _doctor_line() == f"{TermBitmap.objects.count()} rows, term order 1.00"
