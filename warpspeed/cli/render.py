"""Rendering helpers shared by the commands: the console, tables fitted to its width, number
formats, the progress bar.

Tables never cut a number: :func:`fitted_table` leaves out whole columns (lowest priority
first) until the table fits the console, and captions are wrapped into lines of even length.
"""

from __future__ import annotations

import math
import os
import sys
import textwrap
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Sequence

from rich.cells import cell_len
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from warpspeed.model_protocol import number_text
from warpspeed.units import GIGA

#: Width used for tables when the output is not a terminal (files, pipes, notebooks) and the
#: COLUMNS environment variable does not give one.
NON_TERMINAL_WIDTH = 140
#: A width no table reaches: tables are measured against it to find their natural width.
UNBOUNDED_WIDTH = 100_000


def console() -> Console:
    """A console as wide as the terminal; when writing to a file or pipe, as wide as COLUMNS
    says, else NON_TERMINAL_WIDTH."""
    console = Console()
    if not console.is_terminal and not os.environ.get("COLUMNS", "").isdigit():
        console = Console(width=NON_TERMINAL_WIDTH)
    return console


@dataclass(frozen=True)
class Column:
    """A table column: its header (may hold a line break), alignment, and priority.

    ``priority`` 0 is always shown; columns of priority 1, 2, ... are added group by group
    while the table still fits the console.
    """

    header: str
    justify: str = "right"
    priority: int = 0
    wraps: bool = False  # True for free text (may wrap); numbers and labels never wrap

    @property
    def name(self) -> str:
        """The header on one line, unbreakable (no-break spaces), for captions."""
        return self.header.replace("/\n", "/").replace("\n", "\u00a0").replace(" ", "\u00a0")


def _table(columns: Sequence[Column], rows: Sequence[Sequence[str]], keep: Sequence[int]) -> Table:
    """A rich table of the ``keep`` columns; columns that must not wrap get a minimum width of
    their widest cell or header line, so rich never narrows (cuts) them."""
    table = Table()
    for i in keep:
        c = columns[i]
        widest = max([cell_len(line) for line in c.header.split("\n")] + [cell_len(row[i]) for row in rows])
        table.add_column(c.header, justify=c.justify, no_wrap=not c.wraps,  # type: ignore[arg-type]
                         overflow="fold", min_width=None if c.wraps else widest)
    for row in rows:
        table.add_row(*(row[i] for i in keep))
    return table


def table_width(console: Console, table: Table) -> int:
    """The narrowest width at which ``table`` cuts nothing (cells): every column that must not
    wrap at full width, free-text columns wrapped at their longest word."""
    unbounded = console.options.update(max_width=UNBOUNDED_WIDTH)
    return Measurement.get(console, unbounded, table).minimum


def fitted_table(console: Console, columns: Sequence[Column], rows: Sequence[Sequence[str]],
                 wide: bool = False) -> tuple[Table, list[Column]]:
    """A table of ``rows`` with as many column groups as fit ``console``'s width, and the
    columns left out. With ``wide`` every column is kept (:func:`print_fitted` then prints it
    wider than the console rather than cut a number)."""
    keep = [i for i, c in enumerate(columns) if c.priority == 0]
    if wide:
        keep = list(range(len(columns)))
    else:
        for priority in sorted({c.priority for c in columns} - {0}):
            trial = sorted(keep + [i for i, c in enumerate(columns) if c.priority == priority])
            if table_width(console, _table(columns, rows, trial)) <= console.width:
                keep = trial
    dropped = [c for i, c in enumerate(columns) if i not in keep]
    return _table(columns, rows, keep), dropped


def even_lines(text: str, width: int) -> str:
    """``text`` wrapped into as few lines of at most ``width`` cells as possible, all about
    equally long (no single word left alone on the last line)."""
    if len(text) <= width:
        return text
    lines = textwrap.wrap(text, width, break_on_hyphens=False)
    for w in range(math.ceil(len(text) / len(lines)), width + 1):
        even = textwrap.wrap(text, w, break_on_hyphens=False)
        if len(even) == len(lines):
            return "\n".join(even)
    return "\n".join(lines)  # pragma: no cover - w = width reproduces ``lines``


def caption_lines(sentences: Sequence[str], width: int) -> str:
    """Sentences as a caption: one per line, each wrapped evenly to ``width`` cells."""
    return "\n".join(even_lines(s, width) for s in sentences if s)


def print_fitted(console: Console, table: Table, title: str = "", caption: Sequence[str] = ()) -> None:
    """Print ``table`` with an evenly wrapped title and caption; a table that cannot fit the
    console without cutting a number (``--wide``) is printed wider than the console."""
    needed = table_width(console, table)
    out = console if needed <= console.width else Console(width=needed, file=console.file)
    unbounded = out.options.update(max_width=UNBOUNDED_WIDTH)
    text_width = min(Measurement.get(out, unbounded, table).maximum, out.width)
    table.title = even_lines(title, text_width) if title else None
    table.caption = caption_lines(caption, text_width) if caption else None
    out.print(table)


def fmt(value: float, digits: int = 2) -> str:
    """``value`` with ``digits`` decimals; ``∞`` for None and non-finite values
    (:func:`warpspeed.model_protocol.number_text`, which the models' own tables use)."""
    return number_text(value, digits)


def glups(value: float | None) -> str:
    return "∞" if value is None or not math.isfinite(value) else f"{value / GIGA:.2f}"


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


@contextmanager
def stderr_status(text: str) -> Iterator[None]:
    """A spinner with ``text`` on stderr while the block runs (nothing when stderr is not a
    terminal, so that logs and pipes stay clean)."""
    if not sys.stderr.isatty():
        yield
        return
    with Console(stderr=True).status(text):
        yield
