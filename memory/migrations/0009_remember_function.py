"""karani_remember(): a new fact's whole write on PostgreSQL, in one statement.

memory.services._write used to take seven round trips for a new fact (the write lock, the
dedupe touch, a savepoint, the insert, the term bitmaps, the release, the commit), each one a
wake-up of the server process and of ours on two cores. Called outside a transaction, this
function is the whole transaction: one round trip. The steps and their order are those of
the Python path in memory.services._write, which SQLite takes: the write lock first, then
the touch of a live twin, else the insert and its bits.

The insert lists every NOT NULL column with the value the model's defaults give, because
Django's defaults live in Python, not in the table. A migration that adds a column to
``memories`` must replace this function too; tests/test_ledger_remember.py compares a
fact written here with one written by the ORM, column by column, so a forgotten column
fails there.

SQLite keeps the Python path (its writes are in-process, there is no round trip to save).
"""

from django.db import migrations

CREATE = r"""
CREATE OR REPLACE FUNCTION karani_remember(
    lock_key bigint, p_text text, p_kind text, p_company text, p_company_key text,
    p_source text, p_fit_score integer, p_ref text, p_fact_key text,
    p_created_at timestamptz, p_now timestamptz, p_created_by text, p_supersedes bigint,
    p_terms text[], block_bits integer, sparse_max integer, dense_bytes integer)
RETURNS TABLE (created boolean, fact memories)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    found_row memories;
    pos integer;
BEGIN
    -- The same lock as memory.bitmaps.lock_writes(), taken before anything is read.
    PERFORM pg_advisory_xact_lock(lock_key);
    -- Two rounds: a writer that does not take the lock (none in karani; a hand-written
    -- INSERT) can still slip a live twin in between the touch and the insert.
    FOR round IN 1 .. 2 LOOP
        UPDATE memories SET seen_count = seen_count + 1, last_seen_at = p_now
         WHERE fact_key = p_fact_key AND deleted_at IS NULL
        RETURNING * INTO found_row;
        IF FOUND THEN
            RETURN QUERY SELECT false, found_row;
            RETURN;
        END IF;
        INSERT INTO memories (text, kind, company, company_key, source, fit_score, ref,
                              fact_key, created_at, last_seen_at, seen_count, created_by,
                              delete_reason, deleted_by, supersedes_id)
        VALUES (p_text, p_kind, p_company, p_company_key, p_source, p_fit_score, p_ref,
                p_fact_key, p_created_at, p_now, 1, p_created_by, '', '', p_supersedes)
        ON CONFLICT (fact_key) WHERE deleted_at IS NULL DO NOTHING
        RETURNING * INTO found_row;
        IF FOUND THEN
            -- A fresh id is in no bitmap row yet, so on an offset list it is appended
            -- without searching; karani_bits_set() handles the bitset and the conversion
            -- of a full offset list. Terms come sorted: rows are locked in one order.
            pos := found_row.id % block_bits;
            INSERT INTO memory_term_bitmaps AS b (term, block, bits)
            SELECT t, found_row.id / block_bits,
                   set_byte(set_byte('\x0000'::bytea, 0, pos % 256), 1, pos / 256)
              FROM unnest(p_terms) AS t
            ON CONFLICT (term, block) DO UPDATE SET bits = CASE
                WHEN length(b.bits) < 2 * sparse_max THEN b.bits || excluded.bits
                ELSE karani_bits_set(b.bits, pos, 1, sparse_max, dense_bytes) END;
            RETURN QUERY SELECT true, found_row;
            RETURN;
        END IF;
    END LOOP;
    RAISE EXCEPTION 'karani_remember: fact % neither touched nor inserted', p_fact_key;
END
$$
"""

DROP = (
    "DROP FUNCTION IF EXISTS karani_remember(bigint, text, text, text, text, text, integer,"
    " text, text, timestamptz, timestamptz, text, bigint, text[], integer, integer, integer)"
)


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        # params=None: the body has % operators, not placeholders.
        schema_editor.execute(CREATE, params=None)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0008_drop_token_table"),
    ]

    operations = [
        migrations.RunPython(create, drop),
    ]
