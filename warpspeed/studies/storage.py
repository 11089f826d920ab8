"""Where a study's rows live: the CSV journal, the final CSV or Parquet file, resuming.

* **Journal.** Rows are appended to a CSV *journal* as they finish, one complete line per row,
  flushed after every row (``fsync`` only at the end: a flush survives a crash or kill of the
  process, not of the operating system). The journal is ``<output>.journal.csv`` beside the
  output, for CSV and Parquet alike.
* **Output.** :class:`OutputWriter` writes the output row by row in the order given (the
  study's), to a temporary file renamed into place only when the study completes: the output is
  whole or absent (a Parquet file is unreadable until its footer is written; a CSV file cut
  mid-study would pass for a finished one).
* **Resume.** :func:`prepare_journal` keeps the journal of an interrupted run (a last line cut
  off by a hard kill is discarded before appending) or, when there is none, copies an output
  already there into a new one; :func:`index_journal` then stores its rows in an on-disk
  :class:`~warpspeed.studies.index.RowIndex`, one at a time.
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
  and recomputed. The journal is rewritten (atomically, streamed) under the new header first.
* **Files.** Every whole file (the journal's header, a rewritten journal, the final output) is
  written by the one writer (:mod:`warpspeed.files.atomic`: an exclusive temporary file with an
  unpredictable name, renamed into place). An output that is a symbolic link is followed, as
  ``cp`` does: the final file replaces the file it points to.

No function here holds all of a study's rows: they are read, copied and written one at a time
(Parquet in batches of :data:`PARQUET_BATCH_ROWS`).

Rows are dicts of strings (cells as :func:`warpspeed.files.rows.cell` writes them), so a row
read back from a journal is written again unchanged.
"""

from __future__ import annotations

import csv
import io
import os
import re
from pathlib import Path
from typing import IO, Any, Callable, Iterator, Mapping, Sequence

from warpspeed.errors import WarpspeedError
from warpspeed.files.atomic import atomic_output
from warpspeed.files.records import csv_types
from warpspeed.files.rows import cell, record_cells, write_rows
from warpspeed.rank import RankRow
from warpspeed.studies.index import RowIndex
from warpspeed.studies.models import DEFAULT_MODELS, MODEL_FLOAT_COLUMNS, known_headers, study_columns
from warpspeed.studies.spec import StudySpec

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
#: Bytes read per step when searching a journal backwards for its last newline, and copied per step.
_TAIL_STEP = 1 << 16
#: Rows per Parquet row group written, and per batch read back: ~1.5 kB each as Python strings,
#: so a batch holds about 25 MB.
PARQUET_BATCH_ROWS = 16_384

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


def _csv_header(path: Path) -> tuple[str, ...]:
    """The header of a study CSV file (journal or output); ``()`` for an empty file; a file whose
    first line is not a study header is refused."""
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            header = tuple(next(csv.reader(fh), ()))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise _not_csv(path, exc) from None
    if header and header not in _HEADERS:
        raise _foreign(path)
    return header


def _csv_rows(path: Path) -> Iterator[Row]:
    """The rows of a study CSV file, one at a time; a row that is not a study row
    (:func:`check_row`) is refused with its line."""
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            header = tuple(next(reader, ()))
            if not header:
                return
            if header not in _HEADERS:
                raise _foreign(path)
            rates: dict[str, tuple[float, float] | None] = {}
            for values in reader:
                if len(values) != len(header):
                    raise _corrupt(path, reader.line_num, f"{len(values)} cells for {len(header)} columns")
                row = dict(zip(header, values))
                problem = check_row(row, rates)
                if problem:
                    raise _corrupt(path, reader.line_num, problem)
                yield row
    except (UnicodeDecodeError, csv.Error) as exc:
        raise _not_csv(path, exc) from None


def _not_csv(path: Path, exc: Exception) -> WarpspeedError:
    return WarpspeedError(f"{str(path)!r} is not a study file (not CSV text: {exc}); run without resume "
                          "(--no-resume) or choose another output")


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


def _parquet_columns(path: Path) -> tuple[str, ...]:
    pq = parquet_module()
    try:
        columns = tuple(pq.read_schema(path).names)
    except Exception as exc:  # pyarrow raises ArrowInvalid/OSError for files that are not Parquet
        raise _not_parquet(path, exc) from None
    if columns not in _HEADERS:
        raise _foreign(path)
    return columns


def _not_parquet(path: Path, exc: Exception) -> WarpspeedError:
    return WarpspeedError(f"{str(path)!r} is not a readable Parquet file ({exc}); "
                          "run without resume (--no-resume) or choose another output")


def _parquet_rows(path: Path) -> Iterator[Row]:
    """Rows of a finished Parquet output, as journal strings (floats round-trip through repr), read
    :data:`PARQUET_BATCH_ROWS` at a time."""
    columns = _parquet_columns(path)
    pq = parquet_module()
    rates: dict[str, tuple[float, float] | None] = {}
    number = 0
    try:
        batches = pq.ParquetFile(path).iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=list(columns))
        for batch in batches:
            for record in batch.to_pylist():
                number += 1
                row = {c: cell(float(record[c]) if c in _FLOAT_COLUMNS and record[c] is not None else record[c])
                       for c in columns}
                problem = check_row(row, rates)
                if problem:
                    raise WarpspeedError(f"{str(path)!r} row {number} is not a study row ({problem}); run without "
                                         "resume (--no-resume) or choose another output")
                yield row
    except WarpspeedError:
        raise
    except Exception as exc:  # a file cut or corrupted after its footer was read
        raise _not_parquet(path, exc) from None


class Journal:
    """Append-only CSV journal with ``columns``: one complete, flushed line per row."""

    def __init__(self, path: Path, columns: Sequence[str] = COLUMNS) -> None:
        self.path = path
        self.columns = tuple(columns)
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.stat().st_size == 0:  # the header whole, or no journal at all
            with atomic_output(path, "w", newline="") as fh:
                write_rows(fh, self.columns, ())
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


def _copy_whole_lines(source: Path, target: Path) -> None:
    """Write ``source`` up to its last newline to ``target`` (a line cut by a hard kill is left
    out), whole or not at all, :data:`_TAIL_STEP` bytes at a time."""
    with source.open("rb") as fh:
        size = fh.seek(0, os.SEEK_END)
        end = size
        while end > 0:  # the end of the last whole line
            begin = max(0, end - _TAIL_STEP)
            fh.seek(begin)
            newline = fh.read(end - begin).rfind(b"\n")
            if newline >= 0:
                end = begin + newline + 1
                break
            end = begin
        fh.seek(0)
        with atomic_output(target, "wb") as out:
            left = end
            while left > 0:
                block = fh.read(min(_TAIL_STEP, left))
                out.write(block)
                left -= len(block)


def _remove(path: Path) -> None:
    """Delete ``path``; a symbolic link is followed, as every output: the file it points to is emptied."""
    if path.is_symlink():
        with atomic_output(path, "wb"):
            pass
    elif path.exists():
        path.unlink()


def prepare_journal(spec: StudySpec, resume: bool) -> None:
    """Make the journal hold every row the study can resume from (``resume=False``: delete it).

    A journal from an interrupted run is kept (a last line cut by a hard kill cut off). Without a
    journal, a study output already there (a finished study, now resumed, perhaps with a grown
    study file; or a partial CSV output of an earlier version) is copied into a new journal, so
    that the old output stays as it is until the new one replaces it whole."""
    journal = spec.journal_path
    parquet = spec.format == "parquet"
    require_own_output(journal)
    require_own_output(spec.output, parquet=parquet)
    if not resume:
        _remove(journal)
        return
    if journal.exists():
        _truncate_partial_line(journal)
        return
    if not spec.output.exists() or spec.output.stat().st_size == 0:
        return
    journal.parent.mkdir(parents=True, exist_ok=True)
    if not parquet:
        _copy_whole_lines(spec.output, journal)
        return
    columns = _parquet_columns(spec.output)
    with atomic_output(journal, "w", newline="") as fh:
        write_rows(fh, columns, _parquet_rows(spec.output))


def index_journal(spec: StudySpec, index: RowIndex) -> None:
    """Store the journal's rows in ``index`` (:func:`prepare_journal` first).

    Rows stored under another model set are never mixed with new ones: when the stored columns
    include every column now asked for (models removed), successful rows keep their values with
    the other columns dropped; otherwise (models added), and for error rows, they are discarded
    (to be recomputed). The journal is then rewritten (atomically) under the new header first."""
    journal = spec.journal_path
    if not journal.exists():
        return
    columns = _csv_header(journal)
    if not columns:
        return
    if columns == spec.columns:
        for row in _csv_rows(journal):
            index.add(row)
        return
    reusable = set(spec.columns) <= set(columns)
    with atomic_output(journal, "w", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(spec.columns)
        for row in _csv_rows(journal):
            if reusable and not row["error"]:
                kept = {c: row[c] for c in spec.columns}
                writer.writerow(record_cells(spec.columns, kept))
                index.add(kept)
            else:
                index.discard(row["key"])


class OutputWriter:
    """The study's output written row by row, in the order given, whole or not at all: rows go to
    a temporary file beside the output (:func:`warpspeed.files.atomic.atomic_output`) that
    replaces it when the ``with`` block ends normally and is removed when it does not. CSV rows are
    written as they come; Parquet rows in row groups of :data:`PARQUET_BATCH_ROWS`."""

    def __init__(self, spec: StudySpec) -> None:
        self._spec = spec
        self._columns = spec.columns
        self._parquet = spec.format == "parquet"
        self._context: Any = None
        self._write: Callable[[Row], None] = lambda row: None
        self._batch: list[Row] = []
        self._parquet_writer: Any = None

    def __enter__(self) -> "OutputWriter":
        self._spec.output.parent.mkdir(parents=True, exist_ok=True)
        self._context = atomic_output(self._spec.output, "wb")
        handle = self._context.__enter__()
        try:
            if self._parquet:
                self._open_parquet(handle)
            else:
                self._text = io.TextIOWrapper(handle, encoding="utf-8", newline="", write_through=False)
                writer = csv.writer(self._text, lineterminator="\n")
                writer.writerow(self._columns)
                columns = self._columns
                self._write = lambda row: writer.writerow(record_cells(columns, row))
        except BaseException as exc:
            self._context.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    def _open_parquet(self, handle: IO[bytes]) -> None:
        import pyarrow as pa

        pq = parquet_module()
        types = {c: pa.int64() if c in _INT_COLUMNS else pa.float64() if c in _FLOAT_COLUMNS else pa.string()
                 for c in self._columns}
        self._types = types
        self._schema = pa.schema([(c, types[c]) for c in self._columns])
        self._parquet_writer = pq.ParquetWriter(handle, self._schema)
        self._write = self._append_parquet

    def _append_parquet(self, row: Row) -> None:
        self._batch.append(row)
        if len(self._batch) >= PARQUET_BATCH_ROWS:
            self._flush_parquet()

    def _flush_parquet(self) -> None:
        import pyarrow as pa

        if not self._batch:
            return
        arrays = {c: pa.array([_typed(c, r[c]) for r in self._batch], type=self._types[c]) for c in self._columns}
        self._parquet_writer.write_table(pa.table(arrays, schema=self._schema))
        self._batch.clear()

    def write(self, row: Row) -> None:
        """Append ``row`` (a stored row: cells as strings)."""
        self._write(row)

    def __exit__(self, kind: Any, exc: Any, trace: Any) -> bool:
        try:
            if self._parquet:
                if kind is None:
                    self._flush_parquet()
                self._parquet_writer.close()  # on failure too: the temporary is removed below
            else:
                self._text.flush()
                self._text.detach()
        except BaseException as failure:
            if kind is None:
                self._context.__exit__(type(failure), failure, failure.__traceback__)
                raise
        return bool(self._context.__exit__(kind, exc, trace))


def _typed(column: str, value: str) -> Any:
    """A stored cell as Parquet takes it: None for an empty cell, else an int, a float or the text."""
    if value == "":
        return None
    if column in _INT_COLUMNS:
        return int(value)
    if column in _FLOAT_COLUMNS:
        return float(value)
    return value


def iter_stored_rows(spec: StudySpec) -> Iterator[Row]:
    """The rows of a study's finished output (CSV or Parquet), as strings, one at a time; a file
    that is not a study output of this version is refused."""
    if spec.format == "csv":
        return _csv_rows(spec.output)
    return _parquet_rows(spec.output)


def stored_rows(spec: StudySpec) -> list[Row]:
    """:func:`iter_stored_rows` as a list."""
    return list(iter_stored_rows(spec))
