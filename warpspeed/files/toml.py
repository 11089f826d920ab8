"""Reading the project's TOML files (devices, capacity curves, studies) with errors that name the file."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping

from warpspeed.errors import WarpspeedError
from warpspeed.files.stored import package_file
from warpspeed.files.text import read_text

if TYPE_CHECKING:
    from warpspeed.files.stored import Traversable


def read_toml(path: Path | Traversable, what: str, error: type[WarpspeedError]) -> dict:
    """Parse ``path`` (a file or a package resource); raise ``error`` naming ``what`` and the file if it
    is missing, not UTF-8 text or not valid TOML."""
    text = read_text(path, what, error)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{what} {str(path)!r} is not valid TOML: {exc}") from None
    except RecursionError:
        raise error(f"{what} {str(path)!r} is nested too deeply to be a warpspeed file; allowed: tables and "
                    "arrays a few levels deep, as in the shipped files") from None


def table_number(table: Mapping, key: str, where: str, error: type[WarpspeedError], positive: bool = False) -> float:
    """``table[key]`` as a float: a finite number >= 0 (> 0 with ``positive``), else ``error``
    naming ``where`` (e.g. ``"device 'A100' [power]"``), the key and the value."""
    value = table.get(key)
    number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not number or value < 0 or (positive and value == 0):
        raise error(f"{where}: {key} must be a number {'> 0' if positive else '>= 0'}, got {value!r}")
    return float(value)


def read_based_on(package: str, name: str, known: list[str], *, what: str, kind: str, head: str,
                  tables: tuple[str, ...], read_error: type[WarpspeedError], error: Callable[[str], Exception],
                  _seen: tuple[str, ...] = ()) -> dict:
    """The tables of the package file ``<name>.toml`` of ``package`` (``what``: the kind of file in
    messages). A file whose ``[head]`` names ``based_on = "<other name>"`` holds only what differs:
    its keys in ``tables`` replace those of the base file (merged table by table, the chain
    followed), everything else is the base's. ``known``: the names with a file; a ``based_on``
    outside them or a cycle raises ``error`` naming ``kind`` (a name's kind in messages)."""
    data = read_toml(package_file(package, f"{name}.toml"), what, read_error)
    base = data.get(head, {}).get("based_on")
    if base is None:
        return data
    if base not in known or base in _seen or base == name:
        raise error(f"{name}.toml: based_on must name another {kind}'s file without a cycle; "
                    f"available: {', '.join(known)}")
    merged = read_based_on(package, base, known, what=what, kind=kind, head=head, tables=tables,
                           read_error=read_error, error=error, _seen=(*_seen, name))
    return {t: {**merged.get(t, {}), **data.get(t, {})} for t in tables}
