"""QualifyCommand: KaraniCommand plus qualify's own one-line errors."""

from typing import Any

from django.core.management.base import CommandError

from memory.management.base import KaraniCommand
from qualify.errors import QualifyError


class QualifyCommand(KaraniCommand):
    def execute(self, *args: Any, **options: Any) -> Any:
        try:
            return super().execute(*args, **options)
        except QualifyError as exc:
            raise CommandError(str(exc)) from None
