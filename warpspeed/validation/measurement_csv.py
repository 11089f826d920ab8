"""The measurement CSV file: a ``# key: value`` comment block, a header row, one row per configuration.

The first comment line is the format version (:data:`CSV_FORMAT`), then the metadata (GPU name,
driver, clocks, kernel, domain, repeats, ...); columns are
:data:`warpspeed.validation.schema.CSV_COLUMNS`. Cells are written by
:func:`warpspeed.files.rows.cell` (floats exactly, NaN as an empty cell). See ``docs/validation.md``.

A campaign writes its file row by row (:class:`MeasurementWriter`, each row flushed to disk), so
an interrupted campaign leaves every finished row; :func:`read_existing` reads such a file back
(a last line cut off in the middle is dropped) for ``warpspeed measure --resume``.
"""

from __future__ import annotations

import csv
import io
import math
import os
from itertools import repeat
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Mapping, Sequence

import numpy as np

from warpspeed.errors import WarpspeedError
from warpspeed.files.atomic import write_text_atomic
from warpspeed.files.rows import record_cells, write_rows
from warpspeed.launch.space import CONFIG_COLUMNS
from warpspeed.files.text import read_text
from warpspeed.kernel.limits import check_fold
from warpspeed.launch.space import Config
from warpspeed.validation.plan import DEFAULT_DTYPE, MeasurementError
from warpspeed.validation.schema import CSV_COLUMNS, CampaignMetadata, MeasurementTable

#: Metadata that must agree between a file and the campaign that resumes it (a file written
#: before ``dtype`` was recorded holds double kernels).
RESUME_KEYS: tuple[str, ...] = ("kernel", "dtype", "domain", "device_model")

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


def default_output_path(device: str, kernel: str, root: str | Path = Path("fits") / "data",
                        dtype: str = DEFAULT_DTYPE) -> Path:
    """``fits/data/<device>/<kernel>.csv`` (relative to the working directory by default), or
    ``<kernel>-<dtype>.csv`` for other element types than double."""
    stem = kernel if dtype == DEFAULT_DTYPE else f"{kernel}-{dtype}"
    return Path(root) / device / f"{stem}.csv"


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
    write_text_atomic(p, buf.getvalue())
    return p


#: The word that opens the format-version line (``# warpspeed-measurement <version>``).
FORMAT_WORD = CSV_FORMAT.split()[0]


def _split(text: str, where: str = "the measurement file") -> tuple[dict[str, str], list[str]]:
    """(metadata of the comment block, the non-empty table lines). A format-version line of
    another version than :data:`CSV_FORMAT` is refused (a file without one, written by hand, is read)."""
    metadata: dict[str, str] = {}
    lines = text.splitlines()
    for line in [line for line in lines if line.startswith("#")]:
        if line[1:].strip().split(" ", 1)[0] == FORMAT_WORD and " ".join(line[1:].split()) != CSV_FORMAT:
            raise MeasurementError(f"{where} is of format {' '.join(line[1:].split())!r}, which this version "
                                   f"does not read; allowed: {CSV_FORMAT!r} (or no format line, for a table "
                                   "written by hand)")
        key, sep, value = line[1:].strip().partition(":")
        if sep:
            metadata[key.strip()] = value.strip()
    return metadata, [line for line in lines if not line.startswith("#") and line.strip()]


#: Rate columns checked against the device's plausible range
#: (:func:`warpspeed.hardware.ranges.plausible_lups_per_s`).
_RATE_COLUMNS = ("meas_lups_per_s", "pred_lups_per_s")


def plausible_rates(metadata: Mapping[str, str]) -> tuple[float, float] | None:
    """The plausible lup/s range of the file's device (``device_model``, a built-in device name),
    or None when it names no built-in device (only the absolute checks apply then; a name read
    from a data file is never used as a path)."""
    from warpspeed.hardware.device import builtin_plausible_lups_per_s

    return builtin_plausible_lups_per_s(metadata.get("device_model", ""))


def _typed_row(raw: Mapping[str | None, str | None], where: str,
               rates: tuple[float, float] | None = None) -> dict[str, Any]:
    """One data row: text columns as text, every other cell a finite number (an empty cell: NaN,
    not measured) in its column's range, the rates inside ``rates`` (the device's plausible
    lup/s, :func:`plausible_rates`), the configuration as positive integers."""
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
    if rates is not None:
        low, high = rates
        for c in _RATE_COLUMNS:
            value = row.get(c, math.nan)
            if not math.isnan(value) and not low <= value <= high:
                raise MeasurementError(f"{where}: column {c!r} is not a rate this device can have (got {value:g} "
                                       f"lup/s); allowed: {low:.3g} to {high:.3g} lup/s (from the device's SMs, "
                                       "lanes and clock: warpspeed.hardware.ranges.plausible_lups_per_s)")
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
    return read_measurement_columns(path).table()


@dataclass(frozen=True)
class MeasurementColumns(CampaignMetadata):
    """A measurement file as columns: metadata, the header's column names in order, and per
    column a numpy array (float64; the block and fold columns int64) or, for the text columns
    (:data:`_TEXT_COLUMNS`), a tuple of the stripped cells. Values as :func:`read_measurement_csv`
    gives them per row."""

    metadata: Mapping[str, str]
    names: tuple[str, ...]
    columns: Mapping[str, Any]

    def __len__(self) -> int:
        return len(self.columns[self.names[0]])

    def table(self) -> MeasurementTable:
        """The rows as dicts (config columns int, text columns str, other columns float)."""
        lists = [self.columns[c] if c in _TEXT_COLUMNS else self.columns[c].tolist() for c in self.names]
        names = self.names
        return MeasurementTable(metadata=self.metadata, rows=tuple(dict(zip(names, values)) for values in zip(*lists)))


#: Rows parsed at a time by the column reader (bounds the memory of the split cells).
_CHUNK_ROWS = 1 << 16


def _float_column(cells: Sequence[str]) -> tuple[np.ndarray, np.ndarray | None] | None:
    """(values, empty cells or None when none is empty) of one column's cells; None when a cell
    is not a number (the row reader then words the error). Each distinct cell text is converted
    once (measurement columns repeat their values: blocks, folds, repeats, registers)."""
    if cells and cells.count(cells[0]) == len(cells):  # a constant column
        try:
            value = float(cells[0]) if cells[0].strip() else math.nan
        except ValueError:
            return None
        return np.full(len(cells), value), None if cells[0].strip() else np.ones(len(cells), dtype=bool)
    distinct = dict.fromkeys(cells)
    try:
        values = {text: float(text) if text.strip() else math.nan for text in distinct}
    except ValueError:
        return None
    numbers = np.array(list(map(values.__getitem__, cells)), dtype=np.float64)
    blank = [text for text in distinct if not text.strip()]
    if not blank:
        return numbers, None
    blank_set = set(blank)
    return numbers, np.array([text in blank_set for text in cells], dtype=bool)


def _columns_fast(p: Path, metadata: Mapping[str, str], body: Sequence[str]) -> MeasurementColumns | None:
    """The columns of ``body`` parsed and checked as arrays; None when the table has quotes, a row
    of another length or any cell the checks of :func:`_typed_row` refuse (the row reader then
    reads it, raising the error of the first such row)."""
    if any('"' in line for line in body):
        return None
    names = tuple(body[0].split(","))
    if len(set(names)) != len(names) or any(c not in names for c in CONFIG_COLUMNS):
        return None
    width = len(names)
    parts: dict[str, list] = {c: [] for c in names}
    empties: dict[str, list] = {c: [] for c in names}
    for start in range(1, len(body), _CHUNK_ROWS):
        lines = body[start:start + _CHUNK_ROWS]
        if set(map(str.count, lines, repeat(",", len(lines)))) != {width - 1}:
            return None
        text = ",".join(lines)
        cells = text.split(",")  # one split per chunk: the cells row after row
        padded = not text.isascii() or " " in text or "\t" in text  # else no cell has spaces to strip
        for j, name in enumerate(names):
            column = cells[j::width]
            if name in _TEXT_COLUMNS:
                parts[name].extend([c.strip() for c in column] if padded else column)
                continue
            parsed = _float_column(column)
            if parsed is None:
                return None
            parts[name].append(parsed[0])
            empties[name].append(np.zeros(len(column), dtype=bool) if parsed[1] is None else parsed[1])
    if len(body) < 2:
        return None
    columns: dict[str, Any] = {}
    for name in names:
        if name in _TEXT_COLUMNS:
            columns[name] = tuple(parts[name])
            continue
        values, empty = np.concatenate(parts[name]), np.concatenate(empties[name])
        with np.errstate(invalid="ignore"):
            bad = (~np.isfinite(values) & ~empty) if name not in _LIMIT_COLUMNS else \
                (np.isnan(values) & ~empty) | (values == -math.inf)
            if name in _POSITIVE_COLUMNS:
                bad |= values <= 0
            if name in _KNOWN_NUMBER_COLUMNS:
                bad |= values < 0
        if bad.any():
            return None
        columns[name] = values
    for c in CONFIG_COLUMNS:
        values = columns[c]
        if not (np.all(values == np.floor(values)) and np.all((values >= 1) & (values <= MAX_CONFIG_ENTRY))):
            return None
        columns[c] = values.astype(np.int64)
    rates = plausible_rates(metadata)
    if rates is not None:
        low, high = rates
        for c in _RATE_COLUMNS:
            if c in columns and np.any(~np.isnan(columns[c]) & ((columns[c] < low) | (columns[c] > high))):
                return None
    codes = np.sort((columns["fold_x"] - 1) << 20 | (columns["fold_y"] - 1) << 10 | (columns["fold_z"] - 1))
    distinct = codes[np.concatenate(([True], codes[1:] != codes[:-1]))]  # (np.unique hashes: slower)
    try:
        for code in distinct.tolist():
            check_fold((1 + (code >> 20), 1 + (code >> 10 & 1023), 1 + (code & 1023)), "fold", MeasurementError)
    except MeasurementError:
        return None
    return MeasurementColumns(metadata=metadata, names=names, columns=columns)


def read_measurement_columns(path: str | Path) -> MeasurementColumns:
    """Read a measurement CSV as columns (:class:`MeasurementColumns`): the cells are split and
    converted per column with numpy and checked as arrays, so a million rows take seconds; a file
    that the array checks refuse (or that quotes cells) is read row by row, which raises the same
    one-line error as :func:`read_measurement_csv` always did, naming the first bad row."""
    p = Path(path)
    metadata, body = _split(read_text(p, "measurement file", MeasurementError), repr(str(p)))
    if not body:
        raise MeasurementError(f"{str(p)!r}: no header row; expected the columns of "
                               "warpspeed.validation.schema.CSV_COLUMNS")
    fast = _columns_fast(p, metadata, body)
    if fast is not None:
        return fast
    table = _read_rows(p, metadata, body)
    names = tuple(table.rows[0])
    columns: dict[str, Any] = {}
    for c in names:
        values = [row[c] for row in table.rows]
        columns[c] = tuple(values) if c in _TEXT_COLUMNS else np.array(
            values, dtype=np.int64 if c in CONFIG_COLUMNS else np.float64)
    return MeasurementColumns(metadata=table.metadata, names=names, columns=columns)


def _read_rows(p: Path, metadata: dict[str, str], body: list[str]) -> MeasurementTable:
    """The rows of ``body`` read and checked one by one (the reference reader)."""
    reader = csv.DictReader(io.StringIO("\n".join(body)))
    missing = [c for c in CONFIG_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise MeasurementError(f"{str(p)!r}: missing column(s) {', '.join(missing)}")
    rates = plausible_rates(metadata)
    rows = tuple(_typed_row(raw, f"{str(p)!r} data row {i}", rates) for i, raw in enumerate(reader, start=2))
    if not rows:
        raise MeasurementError(f"{str(p)!r} has a header but no data rows; allowed: one row per measured "
                               "configuration (warpspeed measure writes them)")
    return MeasurementTable(metadata=metadata, rows=rows)


@dataclass(frozen=True)
class ExistingRows:
    """The rows of a measurement file as written: metadata, header, and per complete data line
    the line itself, its configuration and its ``error`` cell."""

    metadata: Mapping[str, str]
    header: tuple[str, ...]
    lines: tuple[str, ...]
    configs: tuple[Config, ...]
    errors: tuple[str, ...]
    dropped_partial_line: bool

    def done(self) -> set[Config]:
        """Configurations with a row without error."""
        return {c for c, e in zip(self.configs, self.errors) if not e}


def read_existing(path: str | Path) -> ExistingRows:
    """Read a measurement file row by row, keeping each data line verbatim.

    A last line without its line end (the campaign was stopped while writing it) is dropped;
    any other line that cannot be read is an error naming the line.
    """
    p = Path(path)
    text = read_text(p, "measurement file", MeasurementError)
    partial = bool(text) and not text.endswith("\n")
    if partial:
        text = text[: text.rfind("\n") + 1]
    metadata, body = _split(text, repr(str(p)))
    if not body:
        raise MeasurementError(f"{str(p)!r}: no header row; it cannot be resumed (measure into a new file)")
    header = tuple(next(csv.reader([body[0]])))
    rates = plausible_rates(metadata)
    lines, configs, errors = [], [], []
    for n, line in enumerate(body[1:], start=2):
        cells = next(csv.reader([line]))
        if len(cells) != len(header):
            raise MeasurementError(f"{str(p)!r} data row {n} has {len(cells)} cells, the header {len(header)}")
        raw = dict(zip(header, cells))
        try:
            block = tuple(int(raw[f"block_{d}"]) for d in "xyz")
            fold = tuple(int(raw[f"fold_{d}"]) for d in "xyz")
        except (KeyError, ValueError):
            raise MeasurementError(f"{str(p)!r} data row {n}: no valid block_x..fold_z cells") from None
        if header == CSV_COLUMNS and not raw.get("error", "").strip():
            # a row kept on resume passes the checks of a first read (rows with an error are measured again)
            _typed_row(raw, f"{str(p)!r} data row {n}", rates)
        lines.append(line)
        configs.append(Config(block, fold))  # type: ignore[arg-type]
        errors.append(raw.get("error", "").strip())
    return ExistingRows(metadata, header, tuple(lines), tuple(configs), tuple(errors), partial)


def check_resumable(existing: ExistingRows, metadata: Mapping[str, str], path: str | Path) -> None:
    """Raise :class:`MeasurementError` when ``existing`` was written with other columns or for
    another kernel, element type, domain or device model (:data:`RESUME_KEYS`) than ``metadata``."""
    if existing.header != CSV_COLUMNS:
        raise MeasurementError(f"{str(path)!r} has other columns than this version writes; it cannot be resumed "
                               "(measure into a new file)")
    defaults = {"dtype": DEFAULT_DTYPE}
    differ = [f"{k} {existing.metadata.get(k, defaults.get(k, ''))!r} (now {metadata.get(k, '')!r})"
              for k in RESUME_KEYS if existing.metadata.get(k, defaults.get(k, "")) != metadata.get(k, "")]
    if differ:
        raise MeasurementError(f"{str(path)!r} was measured with other settings: {', '.join(differ)}; "
                               "resume with the same kernel, --dtype, --domain and --device, or measure into a new file")


class MeasurementWriter:
    """Writes a measurement file row by row: the comment block, the header and ``kept_lines``
    (rows of an earlier run, verbatim) at once, then each :meth:`write` appended and flushed to
    disk. Use as a context manager."""

    def __init__(self, path: str | Path, metadata: Mapping[str, Any], kept_lines: Sequence[str] = ()) -> None:
        self.path = Path(path)
        buf = io.StringIO()
        write_rows(buf, CSV_COLUMNS, (), _comments(metadata))
        buf.write("".join(f"{line}\n" for line in kept_lines))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(self.path, buf.getvalue())
        self._fh: IO[str] | None = self.path.open("a", newline="", encoding="utf-8")
        self._writer = csv.writer(self._fh, lineterminator="\n")
        self.rows_written = 0

    def write(self, row: Mapping[str, Any]) -> None:
        """Append one row and flush it to disk."""
        if self._fh is None:
            raise MeasurementError(f"{str(self.path)!r} is closed")
        try:
            cells = record_cells(CSV_COLUMNS, row)
        except WarpspeedError as exc:
            raise MeasurementError(str(exc)) from None
        self._writer.writerow(cells)
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self.rows_written += 1

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> "MeasurementWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
