"""Soft deletes for every ledger table: ``objects`` sees live rows, ``all_objects`` all rows."""

from typing import Any, NoReturn

from django.db import models


class SoftDeleteQuerySet(models.QuerySet):
    def alive(self) -> "SoftDeleteQuerySet":
        return self.filter(deleted_at__isnull=True)

    def deleted(self) -> "SoftDeleteQuerySet":
        return self.filter(deleted_at__isnull=False)

    def delete(self) -> NoReturn:  # type: ignore[override]
        raise TypeError(f"{self.model._meta.verbose_name_plural} are never hard-deleted")


class LiveManager(models.Manager.from_queryset(SoftDeleteQuerySet)):  # type: ignore[misc]
    def get_queryset(self) -> SoftDeleteQuerySet:
        return super().get_queryset().alive()


class SoftDeleteModel(models.Model):
    deleted_at = models.DateTimeField(null=True, blank=True, editable=False, db_index=True)

    objects = LiveManager()
    all_objects = models.Manager.from_queryset(SoftDeleteQuerySet)()

    class Meta:
        abstract = True
        base_manager_name = "all_objects"
        default_manager_name = "all_objects"

    def delete(self, *args: Any, **kwargs: Any) -> NoReturn:  # type: ignore[override]
        raise TypeError(f"{self._meta.verbose_name_plural} are never hard-deleted")
