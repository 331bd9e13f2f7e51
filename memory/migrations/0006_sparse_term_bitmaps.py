"""Store rare terms' bitmap rows as offset lists (memory.bitmaps.encode).

Postgres gets karani_bits_set(), which remember() uses to edit either encoding in place.
Existing rows are re-encoded in place, a chunk at a time; the bitmaps stay exact throughout
(a row means the same set of facts in either form), and no fact row is touched. Then the
table is vacuumed on Postgres.
"""

from django.db import migrations

_CHUNK = 5000


def create_function(apps, schema_editor):
    from memory import bitmaps

    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(bitmaps.BITS_SET_FUNCTION)


def drop_function(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "DROP FUNCTION IF EXISTS karani_bits_set(bytea, integer, integer, integer, integer)"
        )


def _reencode(apps, schema_editor, convert):
    table = apps.get_model("memory", "TermBitmap")._meta.db_table
    with schema_editor.connection.cursor() as cur:
        last = 0
        while True:
            cur.execute(
                f"SELECT id, bits FROM {table} WHERE id > %s ORDER BY id LIMIT %s", [last, _CHUNK]
            )
            rows = cur.fetchall()
            if not rows:
                break
            last = rows[-1][0]
            changed = []
            for pk, bits in rows:
                new = convert(bytes(bits))
                if new != bytes(bits):
                    changed.append((new, pk))
            if changed:
                cur.executemany(f"UPDATE {table} SET bits = %s WHERE id = %s", changed)


def to_sparse(apps, schema_editor):
    from memory import bitmaps

    # Bitsets only: a row already stored as offsets (a rerun after an interruption; this
    # migration is not atomic) stays as it is.
    _reencode(
        apps,
        schema_editor,
        lambda stored: bitmaps.encode(stored) if len(stored) == bitmaps.BLOCK_BYTES else stored,
    )


def vacuum(apps, schema_editor):
    # Re-encoding rewrote most rows: without this the table keeps its old size (and recall
    # reads the dead rows' pages) until autovacuum comes round. VACUUM cannot run inside a
    # transaction, hence atomic = False below.
    if schema_editor.connection.vendor == "postgresql":
        table = apps.get_model("memory", "TermBitmap")._meta.db_table
        schema_editor.execute(f"VACUUM ANALYZE {table}")


def to_dense(apps, schema_editor):
    from memory import bitmaps

    _reencode(apps, schema_editor, lambda stored: bytes(bitmaps.decode(stored)))


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("memory", "0005_keep_job_search_words"),
    ]

    operations = [
        migrations.RunPython(create_function, drop_function),
        migrations.RunPython(to_sparse, to_dense, elidable=True),
        migrations.RunPython(vacuum, migrations.RunPython.noop),
    ]
