"""Rendering helpers shared by the commands: the console, number formats, the progress bar."""

from __future__ import annotations

import math
import sys

from rich.console import Console

#: Width used for tables when the output is not a terminal (files, pipes, notebooks).
NON_TERMINAL_WIDTH = 140


def console() -> Console:
    """A console as wide as the terminal, or NON_TERMINAL_WIDTH when writing to a file or pipe."""
    console = Console()
    if not console.is_terminal:
        console = Console(width=NON_TERMINAL_WIDTH)
    return console


def fmt(value: float, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "∞"
    return f"{value:.{digits}f}"


def glups(value: float | None) -> str:
    return "∞" if value is None or not math.isfinite(value) else f"{value / 1e9:.2f}"


class DelayedProgress:
    """A rich progress bar that appears only once a sweep has run for more than a second."""

    DELAY_S = 1.0

    def __init__(self, total: int, label: str) -> None:
        import time

        self._time = time.perf_counter
        self._start = self._time()
        self._total = total
        self._label = label
        self._progress = None
        self._task = None

    def __call__(self, done: int) -> None:
        if self._progress is None:
            if self._time() - self._start < self.DELAY_S or not sys.stderr.isatty():
                return
            from rich.progress import Progress

            self._progress = Progress(console=Console(stderr=True), transient=True)
            self._progress.start()
            self._task = self._progress.add_task(self._label, total=self._total)
        self._progress.update(self._task, completed=done)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
