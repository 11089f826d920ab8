"""Reading the project's TOML files (devices, capacity curves) with errors that name the file."""

from __future__ import annotations

import tomllib
from importlib.resources.abc import Traversable
from pathlib import Path

from warpspeed.errors import WarpspeedError


def read_toml(path: Path | Traversable, what: str, error: type[WarpspeedError]) -> dict:
    """Parse ``path`` (a file or a package resource); raise ``error`` naming ``what`` and the file if it is missing or invalid."""
    if not path.is_file():
        raise error(f"{what} {str(path)!r} does not exist")
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{what} {str(path)!r} is not valid TOML: {exc}") from None
