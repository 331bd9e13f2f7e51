"""QualifyCommand: KaraniCommand plus qualify's own one-line errors and progress bar."""

from typing import TYPE_CHECKING

from memory.management.base import KaraniCommand
from qualify.errors import QualifyError

if TYPE_CHECKING:
    from rich.progress import Progress


class QualifyCommand(KaraniCommand):
    user_errors = (*KaraniCommand.user_errors, QualifyError)

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
