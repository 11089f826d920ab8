"""The one file writer of warpspeed: a file is written whole or not at all.

Every file warpspeed writes (CSV, JSON, TOML, figures, traces, cache entries, raw calibration
tables, device files, a study's output and journal header, a measurement file's header) goes
through :func:`atomic_output`. Its behaviour, the same for every command:

* **Whole or nothing.** The content is written to a temporary file in the target's directory,
  flushed to disk, and renamed over the target with :func:`os.replace`, which POSIX makes atomic
  within one file system. A reader sees the old file or the new one, never a part; when the
  writer fails (an exception, a full disk, Ctrl-C) the temporary file is removed and the old
  file, if there was one, is left as it was.
* **Temporaries.** The temporary file is made by :func:`tempfile.mkstemp`: an unpredictable name
  (``.<name>.<random>.tmp``) created exclusively (``O_CREAT | O_EXCL``), which never follows a
  link planted under that name; its permissions are set through the open file, never by path.
* **Links.** A symbolic link given as the output is followed, as ``cp`` and the shell's ``>``
  do: the file it points to is replaced (made, for a dangling link) and the link stays.
* **Special files.** A target that exists and is not a regular file (a character device such as
  ``/dev/null`` or ``/dev/stdout``, a named pipe) is written through, in place, as the shell's
  ``>`` does; it is never replaced by a regular file. A directory is refused.
* **Permissions.** A replaced file keeps its permissions; a new one gets those a plain
  ``open(path, "w")`` gives (``0o666`` less the process umask).
"""

from __future__ import annotations

import os
import stat
import tempfile
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import IO, Iterator

from warpspeed.errors import WarpspeedError

#: Permissions of a new file before the umask, as :func:`open` creates files.
NEW_FILE_MODE = 0o666


@lru_cache(maxsize=1)
def _umask() -> int:
    """The process umask: from ``/proc/self/status`` where Linux gives it (reading it changes
    nothing), else by setting and restoring it (no other portable way); read once per process."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _mode_for(target: Path) -> int:
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        return NEW_FILE_MODE & ~_umask()


def output_target(path: str | Path) -> Path:
    """The file a write to ``path`` changes: ``path`` with every symbolic link followed (see the
    module docstring); :class:`~warpspeed.errors.WarpspeedError` for a path that holds a NUL byte,
    names a directory or ends in a loop of links."""
    text = os.fspath(path)
    if "\0" in str(text):
        raise WarpspeedError(f"output path {str(text)!r} holds a NUL byte; allowed: a file path")
    try:
        target = Path(os.path.realpath(text, strict=False))
    except OSError as exc:  # pragma: no cover - realpath(strict=False) raises only on odd platforms
        raise WarpspeedError(f"output path {str(text)!r} cannot be resolved: {exc.strerror or exc}") from None
    if target.is_dir():
        raise WarpspeedError(f"output path {str(text)!r} is a directory; give a file name")
    if os.path.islink(target):  # realpath stops inside a loop of links
        raise WarpspeedError(f"output path {str(text)!r} is a loop of symbolic links; give a file name")
    return target


def is_special(target: Path) -> bool:
    """Whether ``target`` exists and is neither a regular file nor a directory (a device, a pipe,
    a socket): written through in place, never replaced."""
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


@contextmanager
def atomic_output(path: str | Path, mode: str = "w", *, encoding: str | None = "utf-8",
                  newline: str | None = None) -> Iterator[IO]:
    """A file object to write ``path`` with; the file appears (or replaces the old one) only when
    the ``with`` block ends without an exception (see the module docstring).

    ``mode``: ``"w"`` (text, ``encoding``/``newline`` as for :func:`open`) or ``"wb"`` (bytes).
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_output writes with mode 'w' or 'wb', not {mode!r}")
    target = output_target(path)
    binary = mode == "wb"
    text_args = {} if binary else {"encoding": encoding, "newline": newline}
    if is_special(target):  # a device or a pipe: written through in place, never replaced
        with open(target, mode, **text_args) as fh:
            yield fh
        return
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, **text_args) as fh:
            os.fchmod(fh.fileno(), _mode_for(target))
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_text_atomic(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` whole or not at all (:func:`atomic_output`); returns the path."""
    with atomic_output(path, "w", encoding=encoding, newline="") as fh:
        fh.write(text)
    return Path(path)


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` whole or not at all (:func:`atomic_output`); returns the path."""
    with atomic_output(path, "wb") as fh:
        fh.write(data)
    return Path(path)
