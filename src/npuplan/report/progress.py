"""A progress display for long compiles: a bar on a terminal, nothing when output is piped."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def step_progress(*, enabled: bool = True) -> Iterator[Callable[[str], None]]:
    """Yield an ``on_step(name)`` callback that advances a bar over ``npuplan.result.STEPS``.

    The bar goes to stderr and only when stderr is a terminal; otherwise the callback does nothing
    and rich is not even imported (start-up counts in every compile).
    """
    if not enabled or not sys.stderr.isatty():
        yield lambda _name: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from npuplan.result import STEPS

    console = Console(file=sys.stderr)
    columns = (TextColumn("{task.description:<10}"), BarColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("planning", total=len(STEPS))
        seen: list[str] = []

        def on_step(name: str) -> None:
            if seen:
                progress.advance(task)
            seen.append(name)
            progress.update(task, description=name)

        yield on_step
        progress.update(task, completed=len(STEPS))


@contextmanager
def count_progress(total: int, description: str, *, enabled: bool = True) -> Iterator[Callable[[], None]]:
    """Yield an ``advance()`` callback for a bar over ``total`` items, with the count, the time
    elapsed and the estimated time left; on stderr, and only when stderr is a terminal."""
    if not enabled or total <= 0 or not sys.stderr.isatty():
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("ETA"), TimeRemainingColumn())
    with Progress(*columns, console=Console(file=sys.stderr), transient=True) as progress:
        task = progress.add_task(description, total=total)
        yield lambda: progress.advance(task)
