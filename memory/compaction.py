"""After a redaction, no copy of the old text stays in the ledger's files: SQLite overwrites
what it frees, rebuilds the facts' full-text index and the whole file, and empties its
write-ahead log; PostgreSQL rewrites each touched table and its indexes (VACUUM FULL), so no
dead row version keeps the old bytes. Backups and WAL archives are the operator's."""

from collections.abc import Sequence

from django.db.backends.base.base import BaseDatabaseWrapper


def prepare(connection: BaseDatabaseWrapper) -> None:
    """Before the rewrite: SQLite zeroes the content of every page it frees from now on."""
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA secure_delete = ON")


def rebuild_keyword_index(connection: BaseDatabaseWrapper) -> None:
    """SQLite's FTS5 table of live facts' words (migration 0012), rebuilt from the rows:
    a contentless index keeps a deleted entry's words in its segments until they merge."""
    if connection.vendor != "sqlite":
        return  # PostgreSQL's tsvector column is generated from the row itself
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO memories_fts (memories_fts) VALUES ('delete-all')")
        cursor.execute(
            "INSERT INTO memories_fts (rowid, terms) SELECT id, terms FROM memories"
            " WHERE deleted_at IS NULL"
        )
        cursor.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")


def compact(connection: BaseDatabaseWrapper, tables: Sequence[str]) -> None:
    """Outside any transaction (VACUUM cannot run in one): drop the old pages and row versions."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("VACUUM")
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        elif connection.vendor == "postgresql":
            for table in tables:
                cursor.execute(f"VACUUM (FULL, ANALYZE) {connection.ops.quote_name(table)}")
