"""QualifyCommand: KaraniCommand plus qualify's own one-line errors and progress bar."""

from typing import TYPE_CHECKING, Any

from django.core.management.base import CommandError

from memory.management.base import KaraniCommand
from qualify.errors import QualifyError

if TYPE_CHECKING:
    from rich.progress import Progress


class QualifyCommand(KaraniCommand):
    def execute(self, *args: Any, **options: Any) -> Any:
        try:
            return super().execute(*args, **options)
        except QualifyError as exc:
            raise CommandError(str(exc)) from None

    def progress(self, label: str, *, disable: bool) -> "Progress":
        """A progress bar on stderr; rich is imported only by the commands that draw one."""
        from rich import progress  # only the commands that draw a bar pay for rich
        from rich.console import Console

        return progress.Progress(
            progress.TextColumn(label),
            progress.BarColumn(),
            progress.MofNCompleteColumn(),
            progress.TimeElapsedColumn(),
            console=Console(file=self.stderr, width=100),
            disable=disable,
        )
