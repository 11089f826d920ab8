"""Reading text input files: one error for a missing file, a file that is not a regular file, a
file too large to be an input, and a file that is not UTF-8 text.

Every input is read with a size limit from a regular file only: a named pipe (which would block
until a writer comes) or a device such as ``/dev/zero`` (which never ends), also behind a
symbolic link, is refused with one line instead of hanging or exhausting memory.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from warpspeed.errors import WarpspeedError
from warpspeed.units import MIB

if TYPE_CHECKING:
    from warpspeed.files.stored import Traversable

#: Largest text input read whole, in bytes (1 GiB): several times a measurement file of a million
#: rows (about 300 B a row); a larger file is not an input warpspeed reads.
MAX_TEXT_BYTES = 1024 * MIB


class NotRegularFile(OSError):
    """The path names a pipe, a device, a socket or a directory (raised by :func:`read_bounded_bytes`)."""


class TooLarge(OSError):
    """The file holds more bytes than the reader's limit (raised by :func:`read_bounded_bytes`)."""


#: Bytes read per step by :func:`read_bounded_bytes`.
READ_STEP = 1 << 20


def read_bounded_bytes(path: str | Path, max_bytes: int) -> bytes:
    """The bytes of the regular file ``path`` (links followed), at most ``max_bytes`` of them.

    Raises :class:`NotRegularFile` for a pipe or device (opened without blocking, never read),
    :class:`TooLarge` beyond ``max_bytes`` (read no further), and :class:`OSError` as :func:`open`.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO without writer opens at once
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(handle.fileno()).st_mode
        if not stat.S_ISREG(mode):
            kind = "a named pipe" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode) else "a device"
            raise NotRegularFile(f"it is {kind}, not a regular file")
        blocks = []
        left = max_bytes + 1  # read in steps: one read of max_bytes + 1 would reserve that much memory
        while left > 0:
            block = handle.read(min(left, READ_STEP))
            if not block:
                break
            blocks.append(block)
            left -= len(block)
    data = b"".join(blocks)
    if len(data) > max_bytes:
        raise TooLarge(f"it holds more than {max_bytes} bytes")
    return data


def read_bounded_text(path: str | Path, max_bytes: int) -> str:
    """:func:`read_bounded_bytes` decoded as UTF-8 (:class:`UnicodeDecodeError` where it is not)."""
    return read_bounded_bytes(path, max_bytes).decode("utf-8")


def read_text(path: Path | Traversable | str, what: str, error: type[WarpspeedError] = WarpspeedError,
              max_bytes: int = MAX_TEXT_BYTES) -> str:
    """The UTF-8 text of ``path`` (a file or a package resource), at most ``max_bytes`` bytes.

    Raises ``error`` naming ``what`` and the file when it does not exist, is not a regular file
    (a pipe, a device), is larger than ``max_bytes``, cannot be read, or is not UTF-8 text (a
    binary file, or text in another encoding).
    """
    p = Path(path) if isinstance(path, str) else path
    if not p.is_file():
        raise error(f"{what} {str(p)!r} does not exist (or is not a regular file)")
    try:
        data = read_bounded_bytes(p, max_bytes) if isinstance(p, Path) else p.read_bytes()
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{what} {str(p)!r} is not UTF-8 text (byte {exc.start}: {exc.reason}); "
                    "give a text file") from None
    except TooLarge:
        raise error(f"{what} {str(p)!r} is larger than {max_bytes} bytes; allowed: a text input of at most "
                    f"{max_bytes // MIB} MiB") from None
    except NotRegularFile as exc:
        raise error(f"{what} {str(p)!r}: {exc}; allowed: a regular file") from None
    except OSError as exc:
        raise error(f"{what} {str(p)!r} cannot be read: {exc.strerror or exc}") from None
