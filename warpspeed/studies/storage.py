"""Where a study's rows live: the CSV journal, the final CSV or Parquet file, resuming.

* **Journal.** Rows are appended to a CSV *journal* as they finish, one complete line per row,
  flushed after every row (``fsync`` only at the end: a flush survives a crash or kill of the
  process, not of the operating system). For ``format = "csv"`` the journal *is* the output
  file; for ``"parquet"`` it is ``<output>.journal.csv`` beside it, because a Parquet file is
  unreadable until its footer is written and would not survive a hard kill mid-study.
* **Resume.** :func:`existing_rows` returns the rows already in the journal (or, when there is
  no journal, in a finished Parquet output); a last line cut off by a hard kill is discarded
  before appending.
* **Ownership.** A study writes only to a file that does not exist (or is empty) or that is a
  study's own output: a CSV file whose first line is the whole header of a warpspeed study (the
  columns ``key,kernel,device,domain_x,...`` of one of its model sets, ending in a newline,
  :func:`warpspeed.studies.models.known_headers`; the journal's header is written whole), or a
  Parquet file with those columns. Any other file (notes, the study's TOML file, a CSV of
  other columns) is refused with one line, with or without resume, and is never changed.
* **Models.** The columns follow the study's models (:func:`warpspeed.studies.models.study_columns`).
  Rows stored under another model set are never mixed with new ones: when the stored columns
  include every column now asked for (models removed), successful rows keep their values (the
  other columns dropped); otherwise (models added), and for error rows, the rows are discarded
  and recomputed. The journal is rewritten (atomically) under the new header first.
* **Files.** Every whole file (the journal's header, a rewritten journal, the final output) is
  written by the one writer (:mod:`warpspeed.files.atomic`: an exclusive temporary file with an
  unpredictable name, renamed into place). An output that is a symbolic link is followed, as
  ``cp`` does: the journal is appended to, and the final file replaces, the file it points to.
* **Order.** :func:`finalize` rewrites the output atomically
  in the study's enumeration order, so the final file does not depend on the executor or on
  interruptions.

Rows are dicts of strings (cells as :func:`warpspeed.files.rows.cell` writes them), so a row
read back from a journal is written again unchanged.
"""

from __future__ import annotations

import csv
import io
import os
import re
from pathlib import Path
from dataclasses import dataclass
from functools import partial
from typing import IO, Any, Callable, Iterable, Mapping, Sequence

from warpspeed.errors import WarpspeedError
from warpspeed.files.atomic import atomic_output
from warpspeed.files.records import csv_types
from warpspeed.files.rows import cell, record_cells, write_rows
from warpspeed.rank import RankRow
from warpspeed.studies.models import DEFAULT_MODELS, MODEL_FLOAT_COLUMNS, known_headers, study_columns
from warpspeed.studies.spec import StudyPoint, StudySpec

#: Output columns of a roofline study: the row key and what identifies it, then a ranking row
#: (:data:`warpspeed.rank.RANK_COLUMNS`: rates in lup/s, volumes in bytes per lup, L1 in
#: cycles per lup). Numeric columns are empty in error rows. Further models insert their
#: columns before ``error`` (:func:`warpspeed.studies.models.study_columns`).
COLUMNS: tuple[str, ...] = study_columns(DEFAULT_MODELS)
_RANK_TYPES = csv_types(RankRow)
_INT_COLUMNS = frozenset({"domain_x", "domain_y", "domain_z", "threads", *(c for c, t in _RANK_TYPES.items() if t is int)})
_FLOAT_COLUMNS = frozenset(c for c, t in _RANK_TYPES.items() if t is float) | MODEL_FLOAT_COLUMNS
#: Every study header: columns -> the models that give them.
_HEADERS = known_headers()
_HEADER_LINES = tuple((",".join(columns) + "\n").encode() for columns in _HEADERS)
#: Bytes read per step when searching a journal backwards for its last newline.
_TAIL_STEP = 1 << 16

Row = dict[str, str]


def _foreign(path: Path) -> WarpspeedError:
    return WarpspeedError(
        f"{str(path)!r} exists and is not the output of a warpspeed study of this version (its first line is not a "
        "study header); it is left as it is: choose another output, or move the file away")


def _is_study_csv(path: Path) -> bool:
    """Whether ``path`` is empty or starts with a whole study header line (the journal's header is
    written whole, so a file holding a part of one, such as a user's file ``key``, is not a study's)."""
    with path.open("rb") as fh:
        head = fh.read(max(map(len, _HEADER_LINES)))
    return not head or _starts_with_header(head)


def _starts_with_header(head: bytes) -> bool:
    return any(head.startswith(line) for line in _HEADER_LINES)


def _is_study_parquet(path: Path) -> bool:
    """Whether ``path`` is empty or a Parquet file with a study's columns."""
    if path.stat().st_size == 0:
        return True
    pq = parquet_module()
    try:
        return tuple(pq.read_schema(path).names) in _HEADERS
    except Exception:  # pyarrow raises ArrowInvalid/OSError for files that are not Parquet
        return False


def require_own_output(path: Path, parquet: bool = False) -> None:
    """Refuse (one line) a file at ``path`` that a study may not replace: neither missing, empty,
    nor a study's own output (module docstring, *Ownership*)."""
    if not path.exists():
        return
    if not path.is_file():
        raise WarpspeedError(f"{str(path)!r} is not a regular file; allowed: a new file or a study's own output")
    if not (_is_study_parquet(path) if parquet else _is_study_csv(path)):
        raise _foreign(path)


def _truncate_partial_line(path: Path) -> None:
    """Cut a last line without its newline (a write interrupted by a hard kill).

    Refuses (rather than truncates) a file that does not start with a study header of this version.
    """
    size = path.stat().st_size
    if size == 0:
        return
    with path.open("rb+") as fh:
        head = fh.read(max(map(len, _HEADER_LINES)))
        if not _starts_with_header(head):
            raise _foreign(path)
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return
        end = size
        while end > 0:
            begin = max(0, end - _TAIL_STEP)
            fh.seek(begin)
            newline = fh.read(end - begin).rfind(b"\n")
            if newline >= 0:
                fh.truncate(begin + newline + 1)
                return
            end = begin
        fh.truncate(0)


def _read_journal(path: Path) -> tuple[tuple[str, ...], list[Row]]:
    """The columns and rows of a journal (CSV with a study header); a row that is not a study
    row (:func:`check_row`) is refused with its line."""
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            header = tuple(next(reader, ()))
            if not header:
                return (), []
            if header not in _HEADERS:
                raise _foreign(path)
            rows = []
            rates: dict[str, tuple[float, float] | None] = {}
            for values in reader:
                if len(values) != len(header):
                    raise _corrupt(path, reader.line_num, f"{len(values)} cells for {len(header)} columns")
                row = dict(zip(header, values))
                problem = check_row(row, rates)
                if problem:
                    raise _corrupt(path, reader.line_num, problem)
                rows.append(row)
            return header, rows
    except (UnicodeDecodeError, csv.Error) as exc:
        raise WarpspeedError(f"{str(path)!r} is not a study file (not CSV text: {exc}); run without resume "
                             "(--no-resume) or choose another output") from None


def _corrupt(path: Path, line: int, problem: str) -> WarpspeedError:
    return WarpspeedError(f"{str(path)!r} line {line} is not a study row ({problem}); allowed: rows as warpspeed "
                          "study writes them: fix or delete the line, or run without resume (--no-resume)")


#: A whole number as the journal writes it (ASCII digits).
_WHOLE = re.compile(r"[0-9]+")
#: Columns that make up a row's key, in key order.
_KEY_PARTS = ("kernel", "device", ("domain_x", "domain_y", "domain_z"), ("block_x", "block_y", "block_z"),
              ("fold_x", "fold_y", "fold_z"))


#: Columns holding a roofline limit: above zero, infinite where the kernel has no work of the kind.
_LIMIT_COLUMNS = frozenset({"fp_lups_per_s", "l1_lups_per_s", "l2_lups_per_s", "dram_lups_per_s"})
#: Rate columns of a model: finite, above zero and inside the device's plausible range.
_RATE_COLUMNS = frozenset(c for c in _FLOAT_COLUMNS if c.endswith("lups_per_s")) - _LIMIT_COLUMNS


def _plausible_rates(device: str) -> tuple[float, float] | None:
    """The plausible lup/s of the built-in device a row names (None: a device file or no device; a
    name read back from a journal is never used as a path)."""
    from warpspeed.hardware.device import builtin_plausible_lups_per_s

    return builtin_plausible_lups_per_s(device)


def check_row(row: Row, rates: Mapping[str, tuple[float, float] | None] | None = None) -> str:
    """What is wrong with a stored row, or ``""``: its key must be its kernel, device, domain,
    block and folding; the integer columns whole numbers (the identification always, the others
    unless the row is an error row); the float columns finite numbers >= 0 or empty (the roofline
    limits may be infinite), the rates above zero and inside the plausible range of the row's
    device (``rates``: device -> range, filled as devices are met); a row without an error has its
    rate. The same checks run on every read: resuming, reading the finished output."""
    if rates is None:
        rates = {}
    for column, value in row.items():
        if column in _INT_COLUMNS and value != "" and not _WHOLE.fullmatch(value):
            return f"{column} {value!r} is not a whole number"
        if column in _FLOAT_COLUMNS and value != "":
            try:
                number = float(value)
            except ValueError:
                return f"{column} {value!r} is not a number"
            if number != number:
                return f"{column} is NaN"
            if number < 0 or (number == 0 and (column in _RATE_COLUMNS or column in _LIMIT_COLUMNS)):
                return f"{column} {value!r} is not above zero"
            if number == float("inf") and column not in _LIMIT_COLUMNS:
                return f"{column} {value!r} is not finite"
            if column in _RATE_COLUMNS:
                device = row.get("device", "")
                if device not in rates:
                    rates[device] = _plausible_rates(device)  # type: ignore[index]
                bounds = rates[device]
                if bounds is not None and not bounds[0] <= number <= bounds[1]:
                    return (f"{column} {value!r} is not a rate {device} can have (allowed: {bounds[0]:.3g} to "
                            f"{bounds[1]:.3g} lup/s)")
    for column in ("threads", *_KEY_PARTS[2], *_KEY_PARTS[3], *_KEY_PARTS[4]):
        if not _WHOLE.fullmatch(row.get(column, "")) or int(row[column]) < 1:
            return f"{column} {row.get(column, '')!r} is not a positive whole number"
    key = "|".join(row[p] if isinstance(p, str) else "x".join(row[c] for c in p) for p in _KEY_PARTS)
    if row.get("key") != key:
        return f"key {row.get('key', '')!r} does not match its columns ({key!r})"
    if not row.get("error") and row.get("lups_per_s", "") == "":
        return "neither a rate nor an error"
    return ""


def parquet_module() -> Any:
    """``pyarrow.parquet``, or a clear error when pyarrow is not installed."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise WarpspeedError("Parquet output needs pyarrow (pip install warpspeed[distributed]); "
                             "or use format = \"csv\"") from None
    return pq


def _read_parquet_rows(path: Path) -> tuple[tuple[str, ...], list[Row]]:
    """Rows of a finished Parquet output, as journal strings (floats round-trip through repr)."""
    pq = parquet_module()
    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises ArrowInvalid/OSError for files that are not Parquet
        raise WarpspeedError(f"{str(path)!r} is not a readable Parquet file ({exc}); "
                             "run without resume (--no-resume) or choose another output") from None
    columns = tuple(table.column_names)
    if columns not in _HEADERS:
        raise _foreign(path)
    rows = [{c: cell(float(record[c]) if c in _FLOAT_COLUMNS and record[c] is not None else record[c])
             for c in columns} for record in table.to_pylist()]
    rates: dict[str, tuple[float, float] | None] = {}
    for i, row in enumerate(rows, 1):
        problem = check_row(row, rates)
        if problem:
            raise WarpspeedError(f"{str(path)!r} row {i} is not a study row ({problem}); run without resume "
                                 "(--no-resume) or choose another output")
    return columns, rows


def _write_csv(columns: Sequence[str], handle: IO[bytes], rows: Sequence[Row]) -> None:
    text = io.TextIOWrapper(handle, encoding="utf-8", newline="", write_through=True)
    write_rows(text, columns, rows)
    text.flush()
    text.detach()


def _write_parquet(columns: Sequence[str], handle: IO[bytes], rows: Sequence[Row]) -> None:
    import pyarrow as pa

    pq = parquet_module()
    types = {c: pa.int64() if c in _INT_COLUMNS else pa.float64() if c in _FLOAT_COLUMNS else pa.string()
             for c in columns}
    schema = pa.schema([(c, types[c]) for c in columns])

    def convert(c: str, v: str) -> Any:
        if v == "":
            return None
        if c in _INT_COLUMNS:
            return int(v)
        if c in _FLOAT_COLUMNS:
            return float(v)
        return v

    arrays = {c: pa.array([convert(c, r[c]) for r in rows], type=types[c]) for c in columns}
    pq.write_table(pa.table(arrays, schema=schema), handle)


def _atomic(path: Path, writer: Callable[[IO[bytes], Sequence[Row]], None], rows: Sequence[Row]) -> None:
    """Write ``rows`` to ``path`` whole or not at all with the one writer
    (:mod:`warpspeed.files.atomic`: a temporary file with an unpredictable name, links followed)."""
    with atomic_output(path, "wb") as handle:
        writer(handle, rows)


class Journal:
    """Append-only CSV journal with ``columns``: one complete, flushed line per row."""

    def __init__(self, path: Path, columns: Sequence[str] = COLUMNS) -> None:
        self.path = path
        self.columns = tuple(columns)
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.stat().st_size == 0:  # the header whole, or no journal at all
            _atomic(path, partial(_write_csv, self.columns), ())
        self._fh = path.open("a", newline="", encoding="utf-8")
        self._writer = csv.writer(self._fh, lineterminator="\n")

    def append(self, row: Row) -> None:
        self._writer.writerow(record_cells(self.columns, row))
        self._fh.flush()

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()


@dataclass(frozen=True)
class Stored:
    """Rows found in a study's output, in the study's columns, and the keys of rows stored under
    another model set that cannot be reused (to be recomputed)."""

    rows: list[Row]
    discarded: tuple[str, ...] = ()


def _adopt(columns: Sequence[str], rows: list[Row], wanted: Sequence[str]) -> Stored:
    """Rows stored with ``columns`` as rows with ``wanted`` columns (see the module docstring)."""
    if tuple(columns) == tuple(wanted):
        return Stored(rows)
    reusable = set(wanted) <= set(columns)
    kept = [{c: r[c] for c in wanted} for r in rows if reusable and not r["error"]]
    kept_keys = {r["key"] for r in kept}
    return Stored(kept, tuple(r["key"] for r in rows if r["key"] not in kept_keys))


def existing_rows(spec: StudySpec, resume: bool) -> Stored:
    """Rows already finished (and prepare the journal for appending); ``resume=False`` deletes them."""
    journal = spec.journal_path
    require_own_output(journal)
    if spec.format == "parquet":
        require_own_output(spec.output, parquet=True)
    if not resume:
        for p in {journal, spec.output}:
            if p.is_symlink():  # followed, as every output: the file it points to starts afresh
                _atomic(p, lambda handle, rows: None, ())
            elif p.exists():
                p.unlink()
        return Stored([])
    if journal.exists():
        _truncate_partial_line(journal)
        if journal.stat().st_size == 0:
            return Stored([])
        columns, rows = _read_journal(journal)
    elif spec.format == "parquet" and spec.output.exists():
        columns, rows = _read_parquet_rows(spec.output)
    else:
        return Stored([])
    stored = _adopt(columns, rows, spec.columns) if columns else Stored([])
    if columns != spec.columns or not journal.exists():
        journal.parent.mkdir(parents=True, exist_ok=True)
        _atomic(journal, partial(_write_csv, spec.columns), stored.rows)
    return stored


def finalize(spec: StudySpec, points: Iterable[StudyPoint], done: Mapping[str, Row], complete: bool) -> None:
    """Write the output in study order (complete) or, for Parquet, a partial output (interrupted)."""
    ordered = [done[p.key] for p in points if p.key in done]
    if spec.format == "csv":
        if complete:
            _atomic(spec.output, partial(_write_csv, spec.columns), ordered)
        return
    _atomic(spec.output, partial(_write_parquet, spec.columns), ordered)
    if complete:
        spec.journal_path.unlink()


def stored_rows(spec: StudySpec) -> list[Row]:
    """The rows of a study's finished output (CSV or Parquet), as strings; a file that is not a
    study output of this version is refused."""
    if spec.format == "csv":
        return _read_journal(spec.output)[1]
    return _read_parquet_rows(spec.output)[1]
