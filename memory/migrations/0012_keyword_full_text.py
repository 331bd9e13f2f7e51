"""Keyword recall on the database's own full-text machinery; the term bitmaps go.

Each fact gets a ``terms`` column (its content words, space-separated), filled here from the
facts themselves. PostgreSQL keeps the words as a generated array column, ``term_array``,
under a partial GIN index;
SQLite with a contentless FTS5 table that triggers keep to the live facts. Both are
vendor-specific, so they are created here rather than in the model's Meta. Dropped: the
term-bitmap table, the PL/pgSQL write functions and the bitmaps' covering index.

The tokenizer below is a frozen copy of memory.text.tokens as of this migration: a migration
never imports live project code, so changing the tokenizer later never changes what this
step did (a later tokenizer change brings its own migration to refill ``terms``).
"""

import re
import unicodedata

from django.db import migrations, models

_WORD = re.compile(r"\w+")
_MAX_TOKEN_CHARS = 64
_KEPT_WORDS = frozenset(
    {
        "ai", "ml", "qa", "hr", "uk", "net", "web", "website", "microsoft", "computer",
        "system", "test", "research", "call", "work", "worked", "working", "works", "own",
        "new", "first", "best", "full", "part", "high", "low", "home", "open", "free",
        "group", "front", "back", "end", "site", "year", "years", "state", "large", "small",
        "big",
    }
)  # fmt: skip
_CHUNK = 2000


def _stopwords() -> frozenset[str]:
    from stop_words import get_stop_words

    words = set()
    for word in get_stop_words("english"):
        words.update(w.casefold() for w in _WORD.findall(unicodedata.normalize("NFC", word)))
    return frozenset(words - _KEPT_WORDS)


def _terms(text: str, stop: frozenset[str]) -> str:
    seen: dict[str, None] = {}
    for word in _WORD.findall(unicodedata.normalize("NFC", text)):
        word = word.casefold()[:_MAX_TOKEN_CHARS]
        if word not in stop:
            seen.setdefault(word, None)
    return " ".join(seen)


def fill_terms(apps, schema_editor):
    memory_model = apps.get_model("memory", "Memory")
    rows = memory_model._base_manager.order_by("id")
    stop = _stopwords()
    last = 0
    while chunk := list(rows.filter(id__gt=last).only("id", "text")[:_CHUNK]):
        for row in chunk:
            row.terms = _terms(row.text, stop)
        memory_model._base_manager.bulk_update(chunk, ["terms"], batch_size=500)
        last = chunk[-1].id


# Only live facts are in the index: recall never returns a deleted one, and a fact's text
# (so its terms) never changes, so insert and soft delete are all there is to follow.
SQLITE_CREATE = [
    "CREATE VIRTUAL TABLE memories_fts USING fts5(terms, content='',"
    " tokenize=\"unicode61 remove_diacritics 0 tokenchars '_'\")",
    "INSERT INTO memories_fts (rowid, terms) SELECT id, terms FROM memories"
    " WHERE deleted_at IS NULL",
    "CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories"
    " WHEN new.deleted_at IS NULL BEGIN"
    " INSERT INTO memories_fts (rowid, terms) VALUES (new.id, new.terms); END",
    "CREATE TRIGGER memories_fts_forget AFTER UPDATE OF deleted_at ON memories"
    " WHEN old.deleted_at IS NULL AND new.deleted_at IS NOT NULL BEGIN"
    " INSERT INTO memories_fts (memories_fts, rowid, terms) VALUES ('delete', old.id, old.terms);"
    " END",
    "CREATE TRIGGER memories_fts_revive AFTER UPDATE OF deleted_at ON memories"
    " WHEN old.deleted_at IS NOT NULL AND new.deleted_at IS NULL BEGIN"
    " INSERT INTO memories_fts (rowid, terms) VALUES (new.id, new.terms); END",
    "CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories"
    " WHEN old.deleted_at IS NULL BEGIN"
    " INSERT INTO memories_fts (memories_fts, rowid, terms) VALUES ('delete', old.id, old.terms);"
    " END",
]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS memories_fts_insert",
    "DROP TRIGGER IF EXISTS memories_fts_forget",
    "DROP TRIGGER IF EXISTS memories_fts_revive",
    "DROP TRIGGER IF EXISTS memories_fts_delete",
    "DROP TABLE IF EXISTS memories_fts",
]
POSTGRES_CREATE = [
    # The words as an array, kept by PostgreSQL itself: ranking reads it for every candidate,
    # and splitting the text there instead costs several times the whole scan.
    "ALTER TABLE memories ADD COLUMN term_array text[]"
    " GENERATED ALWAYS AS (string_to_array(terms, ' ')) STORED",
    # Keyword recall's and the lexical half's lookups: live facts carrying a word. No pending
    # list (fastupdate off): each write lands in the index itself, so the planner never
    # turns from an index whose pending list a bulk import has filled.
    "CREATE INDEX memories_live_terms ON memories USING gin (term_array)"
    " WITH (fastupdate = off) WHERE deleted_at IS NULL",
    "DROP FUNCTION IF EXISTS karani_remember(bigint, text, text, text, text, text, integer,"
    " text, text, timestamptz, timestamptz, text, bigint, text[], integer, integer, integer)",
    "DROP FUNCTION IF EXISTS karani_bits_set(bytea, integer, integer, integer, integer)",
    "DROP INDEX IF EXISTS memories_live_seen",
]
POSTGRES_DROP = [
    "DROP INDEX IF EXISTS memories_live_terms",
    "ALTER TABLE memories DROP COLUMN IF EXISTS term_array",
]


def create_index(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for sql in {"sqlite": SQLITE_CREATE, "postgresql": POSTGRES_CREATE}.get(vendor, []):
        schema_editor.execute(sql, params=None)


def drop_index(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for sql in {"sqlite": SQLITE_DROP, "postgresql": POSTGRES_DROP}.get(vendor, []):
        schema_editor.execute(sql, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0011_drop_auth_notify"),
    ]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="terms",
            field=models.TextField(blank=True, default="", editable=False),
        ),
        migrations.RunPython(fill_terms, migrations.RunPython.noop),
        migrations.RunPython(create_index, drop_index),
        migrations.RemoveIndex(model_name="memory", name="memories_live_recent"),
        migrations.DeleteModel(name="TermBitmap"),
    ]
