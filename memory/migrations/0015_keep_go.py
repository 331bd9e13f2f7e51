""" "go" is a content word from now on (Go, the language): facts that hold it get it in their
``terms``, so keyword recall and the lexical half find them.

A migration never imports live project code (0012 says why), so the words are 0012's frozen
tokenizer: its stopwords without "go" (forward) and with it (backward). Only facts whose words
change are written; on SQLite their live rows are re-entered in the FTS5 table, which follows
inserts and soft deletes only. PostgreSQL's ``term_vec`` is generated from ``terms`` by itself.
"""

from importlib import import_module

from django.db import migrations

# A migration is never edited once applied, so 0012's tokenizer stays what it was.
_0012 = import_module("memory.migrations.0012_keyword_full_text")
_CHUNK = 2000


def _refill(*, keep_go: bool):
    def run(apps, schema_editor):
        memory_model = apps.get_model("memory", "Memory")
        stop = _0012._stopwords() - {"go"} if keep_go else _0012._stopwords()
        sqlite = schema_editor.connection.vendor == "sqlite"
        # A superset of the facts holding the word; each is re-tokenised and kept if changed.
        rows = memory_model._base_manager.filter(text__icontains="go").order_by("id")
        last = 0
        while chunk := list(
            rows.filter(id__gt=last).only("id", "text", "terms", "deleted_at")[:_CHUNK]
        ):
            last = chunk[-1].id
            changed = []
            for row in chunk:
                terms = _0012._terms(row.text, stop)
                if terms != row.terms:
                    changed.append((row, row.terms))
                    row.terms = terms
            if not changed:
                continue
            memory_model._base_manager.bulk_update(
                [r for r, _ in changed], ["terms"], batch_size=500
            )
            live = [(r, old) for r, old in changed if r.deleted_at is None]
            if sqlite and live:
                with schema_editor.connection.cursor() as cursor:
                    cursor.executemany(
                        "INSERT INTO memories_fts (memories_fts, rowid, terms) VALUES ('delete', %s, %s)",
                        [(r.id, old) for r, old in live],
                    )
                    cursor.executemany(
                        "INSERT INTO memories_fts (rowid, terms) VALUES (%s, %s)",
                        [(r.id, r.terms) for r, _ in live],
                    )

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0014_redaction"),
    ]

    operations = [
        migrations.RunPython(_refill(keep_go=True), _refill(keep_go=False)),
    ]
