"""Credentials that got in before the screen knew them: found in every stored text, and
redacted in place with no copy left behind (docs/security.md).

`karani secrets` and the admin's page reach ``find`` through ``memory.selectors``;
`karani secrets --redact` and the admin's action reach ``redact`` through ``memory.services``.
Redaction is the one in-place edit karani allows (ADR 0012): each credential's span becomes
``[redacted: <kind>]``, the facts' derived columns (terms, company key, fact key) follow
(``Memory.all_objects.redact``, the model's one path past its guard), an audit record names
who, when, which rows and fields and which kinds, the semantic index re-indexes the facts,
and the database is compacted so no dead copy stays on disk.
"""

from dataclasses import asdict, dataclass
from typing import Any

from django.contrib.admin.models import LogEntry
from django.db import connection, transaction

from memory import compaction, credentials, index, stored_texts
from memory.models import REDACTABLE_FIELDS, Memory, Redaction
from memory.stored_texts import ModelTexts, StoredText


@dataclass(frozen=True)
class Finding:
    table: str
    id: Any
    field: str
    kinds: list[str]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class MemoryTexts(ModelTexts):
    """The facts' free-text fields, whose derived columns are recomputed on redaction; and
    the admin's log, which keeps a fact's first words as the object's name."""

    def __init__(self) -> None:
        super().__init__(
            "memory",
            [(Memory, REDACTABLE_FIELDS), (LogEntry, ("object_repr", "change_message"))],
        )
        self.actor = ""
        self.facts: list[int] = []

    def replace(self, edits: list[tuple[StoredText, str]]) -> list[str]:
        facts = [(i, t) for i, t in edits if i.table == Memory._meta.db_table]
        rest = [(i, t) for i, t in edits if i.table != Memory._meta.db_table]
        tables = super().replace(rest) if rest else []
        by_row: dict[int, dict[str, str]] = {}
        for item, text in facts:
            by_row.setdefault(item.row_id, {})[item.field] = text
        for pk, new in by_row.items():
            Memory.all_objects.redact(pk, new, actor=self.actor)
        self.facts = sorted(by_row)
        return tables + ([Memory._meta.db_table] if by_row else [])


_memory_texts = MemoryTexts()


def _providers() -> list[stored_texts.Provider]:
    return [_memory_texts, *stored_texts.providers()]


def _flagged() -> list[tuple[stored_texts.Provider, StoredText, list[str]]]:
    found = []
    for provider in _providers():
        for item in provider.texts():
            kinds = credentials.find_secrets(item.text)
            if kinds:
                found.append((provider, item, kinds))
    return found


def find() -> list[Finding]:
    """Every stored text the current screen flags, by table, id, field and kind."""
    return [Finding(i.table, i.row_id, i.field, kinds) for _, i, kinds in _flagged()]


def redact(*, actor: str) -> Redaction | None:
    """Redact every flagged text in place and leave no copy; None when nothing was flagged."""
    flagged = _flagged()
    if not flagged:
        return None
    by_provider: dict[int, list[tuple[StoredText, str]]] = {}
    items = []
    for provider, item, kinds in flagged:
        text, found = credentials.redacted(item.text)
        by_provider.setdefault(id(provider), []).append((item, text))
        items.append(Finding(item.table, item.row_id, item.field, found or kinds).to_dict())
    _memory_texts.actor = actor
    tables: set[str] = set()
    compaction.prepare(connection)
    with transaction.atomic():
        for provider in _providers():
            edits = by_provider.get(id(provider))
            if edits:
                tables.update(provider.replace(edits))
        record = Redaction.objects.create(actor=actor, items=items)
        tables.add(Redaction._meta.db_table)
        if Memory._meta.db_table in tables:
            compaction.rebuild_keyword_index(connection)
    facts = _memory_texts.facts
    index.redacted(facts)
    compaction.compact(connection, sorted(tables))
    return record
