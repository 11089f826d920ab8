"""Output files: check a path before the work that fills it, and name the problem in one line.

:func:`check_output_path` is called before computing, so a typo in a directory or an
unsupported plot format fails at once instead of after a long sweep. What only shows when
writing (a full disk) is described by :func:`describe_os_error`.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Sequence

from warpspeed.errors import WarpspeedError


class OutputError(WarpspeedError):
    """An output file cannot be written (missing directory, no permission, full disk, bad format)."""


def plot_formats() -> tuple[str, ...]:
    """File suffixes (without the dot) matplotlib can save figures as: png, pdf, svg, ..."""
    from warpspeed.files.figure import prepare_matplotlib

    prepare_matplotlib()
    from matplotlib.backend_bases import FigureCanvasBase

    return tuple(sorted(FigureCanvasBase.get_supported_filetypes()))


def check_output_path(path: str | Path, what: str, formats: Sequence[str] | None = None,
                      create_parents: bool = False) -> Path:
    """``path`` as a :class:`~pathlib.Path` if a file can be written there; else :class:`OutputError`.

    ``formats``: allowed suffixes without the dot (None: any). ``create_parents``: the writer
    creates missing directories, so only the nearest existing ancestor must be a writable
    directory.
    """
    p = Path(path)
    if formats is not None:
        suffix = p.suffix.lower().lstrip(".")
        if suffix not in formats:
            shown = f"format {suffix!r}" if suffix else "no format suffix"
            raise OutputError(f"{what} {str(p)!r} has {shown}; supported: {', '.join(formats)}")
    if p.is_dir():
        raise OutputError(f"{what} {str(p)!r} is a directory; give a file name")
    parent = p.parent
    if create_parents:
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
    if not parent.exists():
        raise OutputError(f"{what} {str(p)!r}: directory {str(parent)!r} does not exist")
    if not parent.is_dir():
        raise OutputError(f"{what} {str(p)!r}: {str(parent)!r} is not a directory")
    # A regular file is replaced by a new one written beside it (warpspeed.files.atomic): the
    # directory must be writable, and an existing file too (its owner's protection is kept).
    targets = [p] if p.exists() and not p.is_file() else [p, parent] if p.exists() else [parent]
    for target in targets:
        if not os.access(target, os.W_OK):
            raise OutputError(f"{what} {str(p)!r} is not writable (permission denied on {str(target)!r})")
    return p


#: What the commonest write errors mean, for :func:`describe_os_error`.
_WRITE_ERRORS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "the file system is read-only",
    errno.ENOENT: "no such file or directory",
    errno.ENOTDIR: "a part of the path is not a directory",
    errno.EISDIR: "it is a directory",
    errno.EPIPE: "the reader closed the pipe",
}


def describe_os_error(exc: OSError, target: str | None = None) -> str:
    """One line naming the file (``target``, else the error's file name) and what went wrong."""
    where = target or (repr(str(exc.filename)) if exc.filename else "a file")
    reason = _WRITE_ERRORS.get(exc.errno or -1) or exc.strerror or str(exc)
    return f"cannot write or read {where}: {reason}" if target is None else f"cannot write {where}: {reason}"
