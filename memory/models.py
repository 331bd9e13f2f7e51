"""The ledger's memories table: distilled facts, one per row, append-only.

Text, kind and company never change in place. A duplicate write touches ``last_seen_at`` and
``seen_count``; a correction soft-deletes the old row and writes a new one pointing back at
it; nothing ever issues a SQL DELETE on a fact.
"""

from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

from django.db import models
from django.db.models import Q
from django.utils import timezone

from memory import text as textmod
from memory.softdelete import LiveManager, SoftDeleteModel, SoftDeleteQuerySet


class Kind(models.TextChoices):
    PREFERENCE = "preference"
    OUTCOME = "outcome"
    QUESTION = "question"
    NOTE = "note"


class Source(models.TextChoices):
    VERDICT = "verdict"
    OUTCOME = "outcome"
    TEACH = "teach"
    CORRECTION = "correction"
    IMPORT = "import"


class MemoryQuerySet(SoftDeleteQuerySet):
    def for_scope(self, company_key: str | None) -> "MemoryQuerySet":
        """A company's facts plus global ones; never another company's."""
        if company_key is None:
            return self
        return self.filter(Q(company_key=company_key) | Q(company_key__isnull=True))

    def delete(self) -> NoReturn:  # type: ignore[override]
        raise TypeError("facts are never hard-deleted; use memory.services.forget()")

    def bulk_create(self, objs: Iterable["Memory"], *args: Any, **kwargs: Any) -> list["Memory"]:
        objs = list(objs)
        for obj in objs:
            obj.fill_terms()
        return super().bulk_create(objs, *args, **kwargs)

    def update(self, **kwargs: Any) -> int:
        frozen = sorted(set(kwargs) & set(FROZEN_FIELDS))
        if frozen:
            raise TypeError(f"{', '.join(frozen)} never change in place; {_INSTEAD}")
        return super().update(**kwargs)

    def redact(self, pk: int, texts: dict[str, str], *, actor: str) -> None:
        """The one in-place rewrite of a fact (ADR 0012): its free texts with each credential
        replaced by ``[redacted: <kind>]``, the columns derived from them recomputed, and the
        vector dropped for re-indexing. memory.services.redact is its one caller."""
        unknown = sorted(set(texts) - set(REDACTABLE_FIELDS))
        if unknown:
            raise TypeError(f"{', '.join(unknown)} are not a fact's free texts")
        rows = self.model.all_objects
        row = rows.get(pk=pk)
        unmarked = [n for n, new in texts.items() if new != getattr(row, n) and REDACTED not in new]
        if unmarked:
            raise TypeError(f"{', '.join(unmarked)} change in place only to redact a credential")
        values: dict[str, Any] = dict(texts)
        text = texts.get("text", row.text)
        company = texts.get("company", row.company)
        company_key = textmod.company_key(company) if company else None
        fact_key = textmod.fact_key(text=text, kind=row.kind, company_key=company_key)
        values.update(
            company_key=company_key or None,
            fact_key=fact_key,
            terms=" ".join(textmod.tokens(text)),
            vector_id=None,
            indexed_at=None,
        )
        twin = rows.alive().filter(fact_key=fact_key).exclude(pk=pk).values_list("pk", flat=True)
        twin_pk = twin.first()
        if row.deleted_at is None and twin_pk is not None:
            # Redacted, two facts can read the same; the live-copy constraint keeps one.
            values.update(
                deleted_at=timezone.now(),
                delete_reason=f"redacted: the same fact as {twin_pk}",
                deleted_by=actor,
            )
        # Past update()'s guard, on purpose and only here: the texts were checked above.
        SoftDeleteQuerySet.update(rows.filter(pk=pk), **values)


# What a fact says and where it sits in history: written once, at insert. A correction is a
# new row (services.correct), so these are never updated, whoever calls save() or update();
# only a redaction rewrites them (MemoryQuerySet.redact, ADR 0012).
FROZEN_FIELDS = (
    "text",
    "kind",
    "company",
    "company_key",
    "fact_key",
    "created_at",
    "supersedes",
    "supersedes_id",
    "terms",
)

# A fact's free texts, each of which a credential may have got into before the screen knew it.
REDACTABLE_FIELDS = ("text", "company", "ref", "delete_reason", "created_by", "deleted_by")
# What memory.credentials.redacted puts where a credential was: "[redacted: <kind>]".
REDACTED = "[redacted: "
_INSTEAD = "use memory.services.correct() (a credential: memory.services.redact())"


class Memory(SoftDeleteModel):
    text = models.TextField()
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.NOTE)
    company = models.CharField(max_length=200, null=True, blank=True, help_text="as written")
    company_key = models.CharField(
        max_length=200, null=True, blank=True, editable=False, help_text="null = global"
    )
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.TEACH)
    fit_score = models.PositiveSmallIntegerField(null=True, blank=True)
    ref = models.CharField(max_length=200, null=True, blank=True)
    # sha256 of (kind, company_key, casefolded collapsed text): see memory.text.fact_key.
    fact_key = models.CharField(max_length=64, editable=False)

    created_at = models.DateTimeField(default=timezone.now, editable=False)
    last_seen_at = models.DateTimeField(default=timezone.now, editable=False)
    seen_count = models.PositiveIntegerField(default=1, editable=False)
    created_by = models.CharField(max_length=150, blank=True, default="", editable=False)

    delete_reason = models.CharField(max_length=500, blank=True, default="", editable=False)
    deleted_by = models.CharField(max_length=150, blank=True, default="", editable=False)
    supersedes = models.OneToOneField(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="superseded_by",
        editable=False,
    )

    # The fact's content words (memory.text.tokens), space-separated: what the database's
    # full-text index holds for keyword recall (a GIN index on PostgreSQL, FTS5 on SQLite,
    # both created by migration 0012). Set by save() and bulk_create() from the text.
    terms = models.TextField(blank=True, default="", editable=False)

    # Semantic index bookkeeping (KARANI_MEMORY=mem0). indexed_at null on a live row means
    # the write is pending: `reindex --pending` catches it up.
    vector_id = models.CharField(max_length=64, null=True, blank=True, editable=False)
    indexed_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = LiveManager.from_queryset(MemoryQuerySet)()
    all_objects = models.Manager.from_queryset(MemoryQuerySet)()

    class Meta(SoftDeleteModel.Meta):
        db_table = "memories"
        verbose_name = "memory"
        verbose_name_plural = "memories"
        constraints = [
            # "One live copy of a fact": concurrent writers of the same fact collide here and
            # the loser touches the winner's row instead (services.remember).
            models.UniqueConstraint(
                fields=["fact_key"],
                condition=Q(deleted_at__isnull=True),
                name="memories_one_live_copy_per_fact",
            ),
            models.CheckConstraint(
                condition=Q(fit_score__isnull=True) | Q(fit_score__gte=0, fit_score__lte=100),
                name="memories_fit_score_0_100",
            ),
            models.CheckConstraint(condition=Q(kind__in=Kind.values), name="memories_kind_known"),
            models.CheckConstraint(
                condition=Q(source__in=Source.values), name="memories_source_known"
            ),
            models.CheckConstraint(
                condition=Q(deleted_at__isnull=True) | ~Q(delete_reason=""),
                name="memories_deleted_rows_have_a_reason",
            ),
        ]
        indexes = [
            # Keyword recall's company boost and scope: live facts of one company.
            models.Index(
                fields=["company_key", "-last_seen_at", "-id"],
                condition=Q(deleted_at__isnull=True),
                name="memories_live_company_recent",
            ),
            # Pending index work: live rows not yet in the semantic index.
            models.Index(
                fields=["id"],
                condition=Q(deleted_at__isnull=True, indexed_at__isnull=True),
                name="memories_live_unindexed",
            ),
            # Admin date hierarchy (MIN/MAX(created_at) and its year/month/day ranges) and
            # the admin's sort by created date, over live and deleted rows alike.
            models.Index(fields=["created_at"], name="memories_created_at"),
            # Admin company filter over every row (auditors see deleted ones too), newest
            # first; the live-only company index above cannot serve it.
            models.Index(fields=["company_key", "-id"], name="memories_company_all"),
            # The standing preferences every posting reads, newest first: a few rows among
            # many, so no scan and sort of the whole ledger per posting.
            models.Index(
                fields=["-created_at", "-id"],
                condition=Q(deleted_at__isnull=True, kind="preference", company_key__isnull=True),
                name="memories_live_standing",
            ),
        ]

    def __str__(self) -> str:
        return self.text if len(self.text) <= 80 else self.text[:77] + "..."

    def fill_terms(self) -> None:
        if not self.terms:
            self.terms = " ".join(textmod.tokens(self.text))

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self._state.adding:
            self.fill_terms()
        loaded = getattr(self, "_as_loaded", None)
        if loaded and not self._state.adding:
            changed = [name for name, value in loaded.items() if getattr(self, name) != value]
            if changed:
                raise TypeError(f"{', '.join(changed)} never change in place; {_INSTEAD}")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> NoReturn:  # type: ignore[override]
        raise TypeError("facts are never hard-deleted; use memory.services.forget()")

    @classmethod
    def from_db(cls, db: str | None, field_names: Sequence[str], values: Sequence[Any]) -> "Memory":
        instance = super().from_db(db, field_names, values)
        instance.mark_stored(field_names)
        return instance

    def mark_stored(self, field_names: Sequence[str] = ()) -> None:
        """Keep what the stored row says, so save() can refuse an in-place rewrite of the fact."""
        names = field_names or [f.attname for f in self._meta.concrete_fields]
        self._as_loaded = {name: getattr(self, name) for name in names if name in FROZEN_FIELDS}

    @property
    def is_live(self) -> bool:
        return self.deleted_at is None

    @property
    def status(self) -> str:
        if self.deleted_at is None:
            return "live"
        if hasattr(self, "superseded_by"):
            return "superseded"
        return "deleted"


class Redaction(models.Model):
    """One run of `karani secrets --redact` (or the admin's action): who, when, and which
    stored texts it rewrote with which kinds of credential. Never the values."""

    created_at = models.DateTimeField(default=timezone.now, editable=False)
    actor = models.CharField(max_length=150, blank=True, default="", editable=False)
    # [{"table", "id", "field", "kinds": [...]}, ...]
    items = models.JSONField(default=list, editable=False)

    class Meta:
        db_table = "memory_redactions"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        when = f"{self.created_at:%Y-%m-%d %H:%M}"
        return f"{len(self.items)} texts redacted by {self.actor or '?'} on {when}"
