"""Every free-text value the ledger stores, told by providers (memory's own, and the ones its
callers register at start-up, as qualify does in its ready()), so `karani secrets` can screen
them all and redact what it finds; memory never imports its callers.

A value is named by its table, row id and field; a text inside a JSON field is named by its
path (``criteria.reasons``, ``dealbreakers[1]``).
"""

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.db import models

_CHUNK = 500


@dataclass(frozen=True)
class StoredText:
    table: str
    row_id: Any
    field: str
    text: str


class Provider(Protocol):
    name: str

    def texts(self) -> Iterable[StoredText]:
        """Every stored text this provider owns, live and soft-deleted rows alike."""

    def replace(self, edits: list[tuple[StoredText, str]]) -> list[str]:
        """Write each new text in place of the old one; returns the tables it touched."""


_providers: list[Provider] = []


def register(provider: Provider) -> None:
    """Idempotent by identity: an app's ready() may run twice in tests."""
    if provider not in _providers:
        _providers.append(provider)


def unregister(provider: Provider) -> None:
    if provider in _providers:
        _providers.remove(provider)


def providers() -> list[Provider]:
    return list(_providers)


def walk(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(path, text) for each string in a JSON value, lists and dicts walked."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from walk(item, f"{path}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from walk(item, f"{path}.{key}" if path else str(key))


_STEP = re.compile(r"\[(\d+)\]|\.?([^.\[]+)")


def put(value: Any, path: str, text: str) -> Any:
    """``value`` with the string at ``path`` (as ``walk`` names it) replaced by ``text``."""
    steps = [int(i) if i else key for i, key in _STEP.findall(path)]
    if not steps:
        return text
    holder = value
    for step in steps[:-1]:
        holder = holder[step]
    holder[steps[-1]] = text
    return value


@dataclass
class ModelTexts:
    """A provider over some models' text and JSON fields, through the ORM.

    ``derived`` maps a model to a function that, given a row's new values, returns the fields
    computed from them (a key column normalised from a name, say), so no copy survives there.
    """

    name: str
    fields: list[tuple[type[models.Model], tuple[str, ...]]]
    derived: dict[type[models.Model], Callable[[dict[str, Any]], dict[str, Any]]] = field(
        default_factory=dict
    )

    def _model(self, table: str) -> tuple[type[models.Model], tuple[str, ...]]:
        return next((m, f) for m, f in self.fields if m._meta.db_table == table)

    def texts(self) -> Iterator[StoredText]:
        for model, names in self.fields:
            table = model._meta.db_table
            rows = model._base_manager.order_by("pk").values_list("pk", *names)
            for pk, *values in rows.iterator(chunk_size=_CHUNK):
                for name, value in zip(names, values, strict=True):
                    if isinstance(value, str):
                        if value:
                            yield StoredText(table, pk, name, value)
                    elif value is not None:
                        for path, text in walk(value):
                            full = f"{name}{path if path.startswith('[') else '.' + path}"
                            yield StoredText(table, pk, full if path else name, text)

    def replace(self, edits: list[tuple[StoredText, str]]) -> list[str]:
        by_row: dict[tuple[str, Any], list[tuple[StoredText, str]]] = {}
        for item, text in edits:
            by_row.setdefault((item.table, item.row_id), []).append((item, text))
        for (table, pk), row_edits in by_row.items():
            model, names = self._model(table)
            current = model._base_manager.filter(pk=pk).values(*names).get()
            for item, text in row_edits:
                head = re.split(r"[.\[]", item.field, maxsplit=1)[0]
                rest = item.field[len(head) :].lstrip(".")
                current[head] = put(current[head], rest, text) if rest else text
            if model in self.derived:
                current.update(self.derived[model](current))
            # The one in-place edit karani allows: past the models' own guards on purpose.
            models.QuerySet(model).filter(pk=pk).update(**current)
        return sorted({table for table, _ in by_row})
