"""Reading the project's TOML files (devices, capacity curves, studies) with errors that name the file."""

from __future__ import annotations

import tomllib
from importlib.resources.abc import Traversable
from pathlib import Path

from warpspeed.errors import WarpspeedError
from warpspeed.files.text import read_text


def read_toml(path: Path | Traversable, what: str, error: type[WarpspeedError]) -> dict:
    """Parse ``path`` (a file or a package resource); raise ``error`` naming ``what`` and the file if it
    is missing, not UTF-8 text or not valid TOML."""
    text = read_text(path, what, error)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{what} {str(path)!r} is not valid TOML: {exc}") from None
