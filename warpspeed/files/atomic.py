"""Writing a file whole or not at all: a temporary file beside the target, renamed into place.

Every file warpspeed writes (CSV, JSON, TOML, figures, traces, cache entries, a study's final
output) goes through :func:`atomic_output`: the content is written to a temporary file in the
target's directory (``.<name>.<random>.tmp``), flushed to disk, and renamed over the target with
:func:`os.replace`, which POSIX and Windows make atomic within one file system. A reader sees the
old file or the new one, never a part; when the writer fails (an exception, a full disk, Ctrl-C)
the temporary file is removed and the old file, if there was one, is left as it was, so a failed
command leaves neither a partial nor an empty file behind.

The new file gets the permissions of the file it replaces, or those a plain ``open(path, "w")``
would give (``0o666`` less the process umask). A symbolic link at the target is followed: the
file it points to is replaced and the link stays. A target that exists and is not a regular file
(a device such as ``/dev/null`` or ``/dev/stdout``, a named pipe) cannot be replaced and is written
in place: replacing it would replace the device.
"""

from __future__ import annotations

import os
import stat
import tempfile
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import IO, Iterator

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


@contextmanager
def atomic_output(path: str | Path, mode: str = "w", *, encoding: str | None = "utf-8",
                  newline: str | None = None) -> Iterator[IO]:
    """A file object to write ``path`` with; the file appears (or replaces the old one) only when
    the ``with`` block ends without an exception (see the module docstring).

    ``mode``: ``"w"`` (text, ``encoding``/``newline`` as for :func:`open`) or ``"wb"`` (bytes).
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_output writes with mode 'w' or 'wb', not {mode!r}")
    target = Path(os.path.realpath(path))
    binary = mode == "wb"
    if target.exists() and not target.is_file():  # a device or a pipe: written in place, never replaced
        with open(target, mode, encoding=None if binary else encoding, newline=None if binary else newline) as fh:
            yield fh
        return
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, encoding=None if binary else encoding, newline=None if binary else newline) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, _mode_for(target))
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
