"""The raw tables of ``warpspeed calibrate``: one CSV per benchmark, written whole, read back verified.

A calibration of the device file ``mygpu.toml`` keeps its measurements in the folder
``mygpu.calibration/`` beside it, one file ``<benchmark>.csv`` per benchmark of :data:`TABLES`,
in the layout of the public gpu-benches tables under ``fits/data/public/`` (``# key: value``
header lines, one line of column names, one line per measured row), so that one reader serves
both. Every table written here adds a ``# checksum: sha256 <hex>`` line over its column line and
rows: a table whose checksum does not match (a file cut short, edited or corrupted) reads as
missing, and a resumed run measures it again. A benchmark that failed leaves
``<benchmark>.failed`` (one line: why) instead of a table.

Files are written whole or not at all (:mod:`warpspeed.files.atomic`, the one writer).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from warpspeed.errors import FitError
from warpspeed.files.atomic import write_text_atomic
from warpspeed.files.text import NotRegularFile, TooLarge, read_bounded_text
from warpspeed.units import MIB

#: The benchmarks, in the order a calibration runs them (the device query first: every other
#: benchmark sizes its sweep by it).
TABLES = ("device-query", "gpu-stream", "gpu-l2-cache", "gpu-cache", "gpu-latency", "gpu-small-kernels",
          "gpu-strides", "gpu-roofline")
#: Suffix of the folder of raw tables beside a device file (``mygpu.toml`` -> ``mygpu.calibration``).
FOLDER_SUFFIX = ".calibration"
#: Header key of the checksum line.
CHECKSUM_KEY = "checksum"
#: Header keys every table written here has (those of :mod:`warpspeed.measured.public_data`).
REQUIRED_KEYS = ("source", "part", "units")
#: Largest raw table read, in bytes (64 MiB): the longest sweep of ``warpspeed calibrate`` writes a
#: few thousand rows of under 200 bytes; a larger file (or a link to ``/dev/zero``) is not a table.
MAX_TABLE_BYTES = 64 * MIB
#: Largest ``.failed`` record read, in bytes.
MAX_RECORD_BYTES = 64 * 1024
#: Significant digits of a measured number in a table.
DIGITS = 6


@dataclass(frozen=True)
class RawTable:
    """One verified table: its name (:data:`TABLES`), path, header and whole text."""

    name: str
    path: Path
    meta: tuple[tuple[str, str], ...]
    text: str

    def value(self, key: str, default: str | None = None) -> str | None:
        """A header value (``default`` where the table has no such line)."""
        return next((v for k, v in self.meta if k == key), default)


def table_folder(device_file: str | Path) -> Path:
    """The folder of raw tables beside ``device_file`` (its name without ``.toml`` + ``.calibration``)."""
    p = Path(device_file)
    stem = p.name[:-len(".toml")] if p.name.endswith(".toml") else p.name
    return p.with_name(stem + FOLDER_SUFFIX)


def table_path(folder: Path, name: str) -> Path:
    """The file of table ``name`` in ``folder``; :class:`FitError` for a name not in :data:`TABLES`."""
    if name not in TABLES:
        raise FitError(f"unknown raw table {name!r}; tables: {', '.join(TABLES)}")
    return folder / f"{name}.csv"


def failure_path(folder: Path, name: str) -> Path:
    """The file recording why benchmark ``name`` failed."""
    return table_path(folder, name).with_suffix(".failed")


def _cell(value: object) -> str:
    if isinstance(value, bool):
        raise FitError(f"a table cell is a boolean ({value!r}); cells are numbers or words")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.{DIGITS}g}"
    text = str(value)
    if any(c in text for c in ",\n\r"):
        raise FitError(f"a table cell holds a comma or a line break: {text!r}")
    return text


#: Longest reason a ``.failed`` record keeps, in characters: a reason is one line of a device
#: file's ``[calibration] not_measured`` list (at most 1000 characters each,
#: :data:`warpspeed.hardware.model_tables.MAX_TEXT`) after its benchmark's name and a few words.
MAX_REASON_CHARS = 500


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _reason(text: str) -> str:
    """A failure reason as one line of at most :data:`MAX_REASON_CHARS` characters (a longer one
    is cut, marked by ``...``)."""
    line = _one_line(text)
    return line if len(line) <= MAX_REASON_CHARS else line[:MAX_REASON_CHARS - 3] + "..."


def _checksum(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def render_table(meta: Sequence[tuple[str, str]], columns: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """The text of a table: header lines, the checksum line, the column line and the rows."""
    keys = [k for k, _ in meta]
    missing = [k for k in REQUIRED_KEYS if k not in keys]
    if missing or CHECKSUM_KEY in keys:
        raise FitError(f"a raw table needs the header keys {', '.join(REQUIRED_KEYS)} and no {CHECKSUM_KEY!r} "
                       f"(missing: {', '.join(missing) or 'none'})")
    if not rows:
        raise FitError("a raw table needs at least one row")
    body = ",".join(columns) + "\n" + "".join(",".join(_cell(v) for v in row) + "\n" for row in rows)
    head = "".join(f"# {_one_line(k)}: {_one_line(v)}\n" for k, v in meta)
    return head + f"# {CHECKSUM_KEY}: sha256 {_checksum(body)}\n" + body


def write_whole(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` whole or not at all, making its folder first
    (:func:`warpspeed.files.atomic.write_text_atomic`: links followed, special files written
    through, the umask respected)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, text)
    return path


def write_table(folder: Path, name: str, meta: Sequence[tuple[str, str]], columns: Sequence[str],
                rows: Sequence[Sequence[object]]) -> Path:
    """Write table ``name`` into ``folder`` (whole or not at all) and clear an earlier failure record."""
    path = write_whole(table_path(folder, name), render_table(meta, columns, rows))
    failure_path(folder, name).unlink(missing_ok=True)
    return path


def record_failure(folder: Path, name: str, reason: str) -> Path:
    """Record that benchmark ``name`` failed (one line: ``reason``)."""
    return write_whole(failure_path(folder, name), _reason(reason) + "\n")


def failure_of(folder: Path, name: str) -> str | None:
    """Why benchmark ``name`` failed in ``folder``, or None."""
    path = failure_path(folder, name)
    try:
        return _reason(read_bounded_text(path, MAX_RECORD_BYTES)) or "no reason recorded"
    except (OSError, UnicodeDecodeError):
        return None


def parse_table(text: str, name: str, path: Path, require_checksum: bool = True) -> RawTable:
    """Verify and parse a table's text; :class:`FitError` saying what is wrong. Without
    ``require_checksum`` a table without a checksum line passes (one brought by hand, such as a
    public gpu-benches table); a checksum line that is present must always match."""
    meta: list[tuple[str, str]] = []
    body_start = None
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith("#"):
            key, sep, value = line[1:].partition(":")
            if not sep:
                if require_checksum:
                    raise FitError(f"{path}: line {i + 1} is not '# key: value'")
                continue  # free text in a table brought by hand
            meta.append((key.strip(), value.strip()))
        elif line.strip():
            body_start = i
            break
    if body_start is None:
        raise FitError(f"{path}: no column line and no rows")
    recorded = dict(meta).get(CHECKSUM_KEY)
    body = "".join(lines[body_start:])
    if recorded is None and require_checksum:
        raise FitError(f"{path}: no checksum line (not written by warpspeed calibrate)")
    if recorded is not None and recorded.split(" ")[-1] != _checksum(body):
        raise FitError(f"{path}: the checksum does not match its rows (cut short, edited or corrupted)")
    if len(lines) - body_start < 2:
        raise FitError(f"{path}: no rows")
    return RawTable(name, path, tuple(meta), text)


def read_table(folder: Path, name: str, require_checksum: bool = True) -> RawTable | None:
    """Table ``name`` of ``folder`` if it exists and verifies, else None (a corrupted table is a
    miss; so is a pipe, a device or a file beyond :data:`MAX_TABLE_BYTES`, never read)."""
    path = table_path(folder, name)
    try:
        return parse_table(read_bounded_text(path, MAX_TABLE_BYTES), name, path, require_checksum)
    except (OSError, UnicodeDecodeError, FitError):
        return None


def check_table(folder: Path, name: str, require_checksum: bool = True) -> str | None:
    """Why table ``name`` of ``folder`` does not verify (None: it does; a missing file says so)."""
    path = table_path(folder, name)
    try:
        parse_table(read_bounded_text(path, MAX_TABLE_BYTES), name, path, require_checksum)
    except FileNotFoundError:
        return "not measured"
    except (NotRegularFile, TooLarge) as exc:
        return f"cannot be read ({exc}; allowed: a regular file of at most {MAX_TABLE_BYTES} bytes)"
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot be read ({exc})"
    except FitError as exc:
        return str(exc)
    return None
