"""Click parameter types for the files the commands write and read.

Every option that writes a file uses :class:`OutputFile`, every text input file
:class:`InputTextFile`: the path is checked while the arguments are parsed, before any work
(two options of one command naming one file, also through a link, are refused: the second
output would replace the first),
and a problem becomes a :class:`~warpspeed.errors.WarpspeedError` that the command group prints
as one ``error:`` line (exit status 2). Errors that only show while writing (a full disk) are
turned into the same kind of line by the group (:mod:`warpspeed.cli.main`).
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from warpspeed.files.atomic import is_special
from warpspeed.files.output import OutputError, check_output_path, plot_formats
from warpspeed.files.text import read_text

#: Key of :attr:`click.Context.meta` (shared by nested contexts) listing the output files of the
#: running command, so a write error that names no file can name them.
OUTPUTS_META_KEY = "warpspeed.outputs"


def _same_file_key(path: str) -> str:
    """What two output paths share when they name one file: the path with every link followed."""
    return os.path.realpath(path)


def _is_stream(target: str) -> bool:
    """Whether ``target`` is a device or pipe (``/dev/null``, ``/dev/stdout``): several outputs may
    go there, each written through."""
    return is_special(Path(target))


class OutputFile(click.ParamType):
    """A file to write: its directory exists and is writable; plots need a format matplotlib writes."""

    name = "file"

    def __init__(self, what: str, plot: bool = False, create_parents: bool = False) -> None:
        self.what = what
        self.plot = plot
        self.create_parents = create_parents

    def convert(self, value: str | None, param: click.Parameter | None,  # type: ignore[override]
                ctx: click.Context | None) -> str | None:
        if value is None:
            return value
        formats = plot_formats() if self.plot else None
        path = str(check_output_path(value, self.what, formats, create_parents=self.create_parents))
        if ctx is not None:
            outputs = ctx.meta.setdefault(OUTPUTS_META_KEY, [])
            target = _same_file_key(path)
            clash = next((p for p in outputs if _same_file_key(p) == target), None)
            if clash is not None and not _is_stream(target):
                raise OutputError(f"{self.what} {value!r} is the same file as another output of this command "
                                  f"({clash!r}); allowed: one output per file (give each option its own path)")
            outputs.append(path)
        return path


class InputTextFile(click.ParamType):
    """A text file to read: it exists and is UTF-8 text."""

    name = "file"

    def __init__(self, what: str) -> None:
        self.what = what

    def convert(self, value: str | None, param: click.Parameter | None,  # type: ignore[override]
                ctx: click.Context | None) -> str | None:
        if value is None:
            return value
        read_text(Path(value), self.what)
        return str(value)
