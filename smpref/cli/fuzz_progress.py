"""Progress of ``smpref model fuzz``: a rich bar on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import time
from types import TracebackType

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

#: seconds between the plain progress lines printed when standard error is not a terminal
PLAIN_EVERY = 5.0


class FuzzProgress:
    """Seeds done, steps per second and the time left, as the run goes.

    ``seeds`` (a fixed number of seeds) or ``seconds`` (a time budget) sets what "done" means.
    """

    def __init__(self, *, seeds: int | None, seconds: float | None) -> None:
        self.seeds = seeds
        self.seconds = seconds
        self.started = time.monotonic()
        self.last_line = self.started
        self.console = Console(stderr=True)
        self.bar: Progress | None = None
        self.task: TaskID | None = None

    def __enter__(self) -> FuzzProgress:
        if sys.stderr.isatty():
            self.bar = Progress(TextColumn("seeds {task.fields[seeds]}"), BarColumn(),
                                TextColumn("{task.fields[rate]:,.0f} steps/s"),
                                TimeRemainingColumn(), console=self.console, transient=True)
            self.bar.start()
            self.task = self.bar.add_task("fuzz", total=self.seeds or self.seconds,
                                          seeds=0, rate=0.0)
        return self

    def update(self, seeds: int, steps: int) -> None:
        now = time.monotonic()
        elapsed = max(now - self.started, 1e-9)
        rate = steps / elapsed
        if self.bar is not None and self.task is not None:
            completed = seeds if self.seeds is not None else min(elapsed, self.seconds or 0)
            self.bar.update(self.task, completed=completed, seeds=seeds, rate=rate)
        elif now - self.last_line >= PLAIN_EVERY:
            self.last_line = now
            left = (f", {max(0.0, (self.seconds or 0) - elapsed):.0f} s left"
                    if self.seeds is None else f", {self.seeds - seeds} seeds left")
            click.echo(f"fuzz: {seeds} seeds, {steps} steps, {rate:,.0f} steps/s{left}",
                       err=True)

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.bar is not None:
            self.bar.stop()
