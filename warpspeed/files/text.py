"""Reading text input files: one error for a missing file and for a file that is not UTF-8 text."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from warpspeed.errors import WarpspeedError

if TYPE_CHECKING:
    from warpspeed.files.stored import Traversable


def read_text(path: Path | Traversable | str, what: str, error: type[WarpspeedError] = WarpspeedError) -> str:
    """The UTF-8 text of ``path`` (a file or a package resource).

    Raises ``error`` naming ``what`` and the file when it does not exist, cannot be read, or is
    not UTF-8 text (a binary file, or text in another encoding).
    """
    p = Path(path) if isinstance(path, str) else path
    if not p.is_file():
        raise error(f"{what} {str(p)!r} does not exist (or is not a regular file)")
    try:
        return p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{what} {str(p)!r} is not UTF-8 text (byte {exc.start}: {exc.reason}); "
                    "give a text file") from None
    except OSError as exc:
        raise error(f"{what} {str(p)!r} cannot be read: {exc.strerror or exc}") from None
