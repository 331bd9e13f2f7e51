""" "go" is a content word from now on (Go, the language): facts that hold it get it in their
``terms``, so keyword recall and the lexical half find them.

A migration never imports live project code (0012 says why), so the tokenizer is frozen here
again, with "go" kept (forward) and dropped (backward). Only facts whose words change are
written; on SQLite their live rows are re-entered in the FTS5 table, which follows inserts
and soft deletes only. PostgreSQL's ``term_vec`` is generated from ``terms`` by itself.
"""

import re
import unicodedata

from django.db import migrations

_WORD = re.compile(r"\w+")
_MAX_TOKEN_CHARS = 64
_KEPT_BEFORE = frozenset(
    {
        "ai", "ml", "qa", "hr", "uk", "net", "web", "website", "microsoft", "computer",
        "system", "test", "research", "call", "work", "worked", "working", "works", "own",
        "new", "first", "best", "full", "part", "high", "low", "home", "open", "free",
        "group", "front", "back", "end", "site", "year", "years", "state", "large", "small",
        "big",
    }
)  # fmt: skip
_CHUNK = 2000


def _stopwords(kept: frozenset[str]) -> frozenset[str]:
    from stop_words import get_stop_words

    words = set()
    for word in get_stop_words("english"):
        words.update(w.casefold() for w in _WORD.findall(unicodedata.normalize("NFC", word)))
    return frozenset(words - kept)


def _terms(text: str, stop: frozenset[str]) -> str:
    seen: dict[str, None] = {}
    for word in _WORD.findall(unicodedata.normalize("NFC", text)):
        word = word.casefold()[:_MAX_TOKEN_CHARS]
        if word not in stop:
            seen.setdefault(word, None)
    return " ".join(seen)


def _refill(kept: frozenset[str]):
    def run(apps, schema_editor):
        memory_model = apps.get_model("memory", "Memory")
        stop = _stopwords(kept)
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
                terms = _terms(row.text, stop)
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
        migrations.RunPython(_refill(_KEPT_BEFORE | {"go"}), _refill(_KEPT_BEFORE)),
    ]
