"""The CLI's one way to make its rich Console, and its progress bar of episodes."""

from __future__ import annotations

import os
import sys

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

PIPED_WIDTH = 1000  # wider than any table: a script reading the output gets every value whole


def make_console(stderr: bool = False, **options) -> Console:
    """A console as wide as the terminal; piped or redirected (with no COLUMNS set), as wide as PIPED_WIDTH, so
    tables are not cut at rich's default 80 columns."""
    stream = sys.stderr if stderr else sys.stdout
    piped = not stream.isatty() and "COLUMNS" not in os.environ
    return Console(stderr=stderr, width=PIPED_WIDTH if piped else None, **options)


def episode_progress(console: Console) -> Progress:
    """The progress bar of a run of episodes: what runs, the bar, done of all, time, and a rate field."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[rate]}"),
        console=console,
    )
