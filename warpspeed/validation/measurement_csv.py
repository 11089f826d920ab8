"""The measurement CSV file: a ``# key: value`` comment block, a header row, one row per configuration.

The first comment line is the format version (:data:`CSV_FORMAT`), then the metadata (GPU name,
driver, clocks, kernel, domain, repeats, ...); columns are
:data:`warpspeed.validation.schema.CSV_COLUMNS`. Cells are written by
:func:`warpspeed.files.rows.cell` (floats exactly, NaN as an empty cell). See ``docs/validation.md``.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any, Mapping, Sequence

from warpspeed.errors import WarpspeedError
from warpspeed.files.rows import CONFIG_COLUMNS, write_rows
from warpspeed.files.text import read_text
from warpspeed.validation.plan import MeasurementError
from warpspeed.validation.schema import CSV_COLUMNS, MeasurementTable

#: Format version of the measurement CSV (first comment line).
CSV_FORMAT = "warpspeed-measurement 1"

#: Columns that stay strings when reading a measurement CSV.
_TEXT_COLUMNS = {"config", "error", "pred_limiter"}


def default_output_path(device: str, kernel: str, root: str | Path = Path("fits") / "data") -> Path:
    """``fits/data/<device>/<kernel>.csv`` (relative to the working directory by default)."""
    return Path(root) / device / f"{kernel}.csv"


def _comments(metadata: Mapping[str, Any]) -> list[str]:
    lines = [CSV_FORMAT]
    for key, value in metadata.items():
        if ":" in key or not key:
            raise MeasurementError(f"metadata key {key!r} must be non-empty and contain no ':'")
        lines.append(f"{key}: {str(value).replace(chr(10), ' ')}")
    return lines


def write_measurement_csv(path: str | Path, metadata: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> Path:
    """Write the comment block (``# key: value``), the header and the rows; creates parents."""
    p = Path(path)
    buf = io.StringIO()  # everything is checked before the file is touched
    try:
        write_rows(buf, CSV_COLUMNS, rows, _comments(metadata))
    except MeasurementError:
        raise
    except WarpspeedError as exc:  # a row with an unknown column
        raise MeasurementError(str(exc)) from None
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(buf.getvalue(), encoding="utf-8")
    return p


def _split(text: str) -> tuple[dict[str, str], list[str]]:
    """(metadata of the comment block, the non-empty table lines)."""
    metadata: dict[str, str] = {}
    body = []
    for line in text.splitlines():
        if line.startswith("#"):
            key, sep, value = line[1:].strip().partition(":")
            if sep:
                metadata[key.strip()] = value.strip()
        elif line.strip():
            body.append(line)
    return metadata, body


def _typed_row(raw: Mapping[str | None, str | None], where: str) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for key, text in raw.items():
        if key is None:
            raise MeasurementError(f"{where}: more cells than header columns")
        text = (text or "").strip()
        if key in _TEXT_COLUMNS:
            row[key] = text
        elif text == "":
            row[key] = math.nan
        else:
            try:
                row[key] = float(text)
            except ValueError:
                raise MeasurementError(f"{where}: column {key!r} value {text!r} is not a number") from None
    for c in CONFIG_COLUMNS:
        row[c] = int(row[c])
    return row


def read_measurement_csv(path: str | Path) -> MeasurementTable:
    """Read a measurement CSV: metadata from the comment block, numbers as floats (empty: NaN)."""
    p = Path(path)
    metadata, body = _split(read_text(p, "measurement file", MeasurementError))
    if not body:
        raise MeasurementError(f"{str(p)!r}: no header row; expected the columns of "
                               "warpspeed.validation.schema.CSV_COLUMNS")
    reader = csv.DictReader(io.StringIO("\n".join(body)))
    missing = [c for c in CONFIG_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise MeasurementError(f"{str(p)!r}: missing column(s) {', '.join(missing)}")
    rows = tuple(_typed_row(raw, f"{str(p)!r} data row {i}") for i, raw in enumerate(reader, start=2))
    return MeasurementTable(metadata=metadata, rows=rows)
