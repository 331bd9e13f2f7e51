"""PostgreSQL keeps each fact's words as a tsvector instead of a text array.

A tsvector's lexemes are sorted and compared without a function call per element, so testing
and counting a query's words per candidate row is several times cheaper than with text[]
(docs/keyword-recall.md). The words are the same ``terms``; SQLite's FTS5 table is unchanged.
"""

from django.db import migrations

FORWARD = [
    "ALTER TABLE memories ADD COLUMN term_vec tsvector"
    " GENERATED ALWAYS AS (array_to_tsvector(string_to_array(terms, ' '))) STORED",
    # No pending list (fastupdate off): each write lands in the index itself.
    "CREATE INDEX memories_live_words ON memories USING gin (term_vec)"
    " WITH (fastupdate = off) WHERE deleted_at IS NULL",
    "DROP INDEX IF EXISTS memories_live_terms",
    "ALTER TABLE memories DROP COLUMN IF EXISTS term_array",
]

BACKWARD = [
    "ALTER TABLE memories ADD COLUMN term_array text[]"
    " GENERATED ALWAYS AS (string_to_array(terms, ' ')) STORED",
    "CREATE INDEX memories_live_terms ON memories USING gin (term_array)"
    " WITH (fastupdate = off) WHERE deleted_at IS NULL",
    "DROP INDEX IF EXISTS memories_live_words",
    "ALTER TABLE memories DROP COLUMN IF EXISTS term_vec",
]


def _run(statements: list[str]):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for sql in statements:
                schema_editor.execute(sql, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0012_keyword_full_text"),
    ]

    operations = [
        migrations.RunPython(_run(FORWARD), _run(BACKWARD)),
    ]
