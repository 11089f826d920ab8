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
from warpspeed.kernel.limits import check_fold
from warpspeed.validation.plan import MeasurementError
from warpspeed.validation.schema import CSV_COLUMNS, MeasurementTable

#: Format version of the measurement CSV (first comment line).
CSV_FORMAT = "warpspeed-measurement 1"

#: Columns that stay strings when reading a measurement CSV.
_TEXT_COLUMNS = {"config", "error", "pred_limiter"}
#: Numeric columns of the format: counts, times, rates, volumes, rates of hits; none is negative.
_KNOWN_NUMBER_COLUMNS = frozenset(CSV_COLUMNS) - _TEXT_COLUMNS
#: Columns above zero where given: a run takes time, repeats at least once and updates cells.
_POSITIVE_COLUMNS = frozenset({"time_median_s", "time_min_s", "time_max_s", "time_repeats", "meas_lups_per_s",
                               "pred_lups_per_s"})
#: The predicted roofline limits: infinite where a kernel has no work of the kind (no flops: no FP
#: limit), written ``inf`` by :func:`warpspeed.files.rows.cell`.
_LIMIT_COLUMNS = frozenset({"pred_fp_lups_per_s", "pred_l1_lups_per_s", "pred_l2_lups_per_s", "pred_dram_lups_per_s"})
#: Largest block or fold entry of a measured configuration: 1024, CUDA's and HIP's most threads per
#: block (CUDA C++ Programming Guide, "Compute Capabilities": maximum x- or y-dimension of a block).
MAX_CONFIG_ENTRY = 1024


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
    """One data row: text columns as text, every other cell a finite number (an empty cell: NaN,
    not measured) in its column's range, the configuration as positive integers."""
    row: dict[str, Any] = {}
    for key, text in raw.items():
        if key is None:
            raise MeasurementError(f"{where}: more cells than header columns")
        if text is None:
            raise MeasurementError(f"{where}: fewer cells than header columns (no cell for {key!r}); "
                                   "give one cell per column, empty where nothing was measured")
        text = text.strip()
        if key in _TEXT_COLUMNS:
            row[key] = text
        elif text == "":
            row[key] = math.nan
        else:
            row[key] = _number(key, text, where)
    for c in CONFIG_COLUMNS:
        row[c] = _config_value(c, row[c], where)
    check_fold(tuple(row[f"fold_{d}"] for d in "xyz"), f"{where}: fold", MeasurementError)
    return row


def _number(key: str, text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise MeasurementError(f"{where}: column {key!r} value {text!r} is not a number") from None
    if not math.isfinite(value) and not (key in _LIMIT_COLUMNS and value == math.inf):
        raise MeasurementError(f"{where}: column {key!r} is not a finite number (got {text!r}); allowed: a finite "
                               "number, or an empty cell where nothing was measured")
    if key in _POSITIVE_COLUMNS and value <= 0:
        raise MeasurementError(f"{where}: column {key!r} is not above zero (got {text!r}); allowed: a number > 0 "
                               "(a run takes time and updates cells), or an empty cell")
    if key in _KNOWN_NUMBER_COLUMNS and value < 0:
        raise MeasurementError(f"{where}: column {key!r} is negative (got {text!r}); allowed: a number >= 0, "
                               "or an empty cell")
    return value


def _config_value(column: str, value: float, where: str) -> int:
    """A block or fold entry: a whole number from 1 to :data:`MAX_CONFIG_ENTRY`."""
    if math.isnan(value) or value != int(value) or not 1 <= value <= MAX_CONFIG_ENTRY:
        shown = "an empty cell" if math.isnan(value) else repr(value)
        raise MeasurementError(f"{where}: column {column!r} is not a launch extent (got {shown}); allowed: a "
                               f"whole number from 1 to {MAX_CONFIG_ENTRY}")
    return int(value)


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
    if not rows:
        raise MeasurementError(f"{str(p)!r} has a header but no data rows; allowed: one row per measured "
                               "configuration (warpspeed measure writes them)")
    return MeasurementTable(metadata=metadata, rows=rows)
