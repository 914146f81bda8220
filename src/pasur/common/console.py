"""The stderr console and the progress display that long jobs share (library and CLI alike):
results go to stdout, progress and notes to stderr, so a pipe or a JSON reader sees only results."""

from __future__ import annotations

from rich.console import Console
from rich.progress import Progress, ProgressColumn, SpinnerColumn, TextColumn, TimeElapsedColumn

err = Console(stderr=True)


def note(message: str) -> None:
    """One plain line on stderr (no markup, no highlighting, no wrapping)."""
    err.print(message, markup=False, highlight=False, soft_wrap=True)


def progress_display(quiet: bool, *extra: ProgressColumn) -> Progress:
    """The progress display of long commands, on stderr, gone when done; none where stderr is not
    a terminal (a log or a pipe gets no bar, and an error's line comes alone)."""
    columns = (SpinnerColumn(), TextColumn("{task.description}"), *extra, TimeElapsedColumn())
    return Progress(*columns, console=err, transient=True, disable=quiet or not err.is_terminal)
