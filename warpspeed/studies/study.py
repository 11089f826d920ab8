"""Studies: predictions over kernels x devices x domains x configuration spaces, streamed to disk.

A study is described by a TOML file (see ``docs/study.md`` and ``examples/study.toml``)::

    kernels  = ["star3d-r1", "copy"]             # names as warpspeed.catalog.resolve_kernel takes
    devices  = ["A100-SXM4-40GB", "V100-PCIe-32GB"]
    domains  = [[64, 64, 64], [128, 128, 128]]   # cells (nx, ny[, nz]); nz defaults to 1
    threads  = [256]                             # threads per block: every power-of-two block
    foldings = [[1, 1, 1], [1, 2, 1]]            # cells per thread (default: the paper's three)
    max_block_z = 64                             # optional (default: the CUDA limit)
    output   = "study.csv"                       # relative to the TOML file's directory
    format   = "csv"                             # "csv" or "parquet" (default: from the suffix)

It has one row per (kernel, device, domain, block, fold), enumerated in that nesting order
(blocks of each thread count in :func:`warpspeed.space.block_sizes` order, foldings in the
file's order). Each row carries a stable key (``kernel|device|domain|block|fold``, e.g.
``star3d-r1|A100-SXM4-40GB|64x64x64|32x8x1|1x2x1``).

Storage and robustness (why it is built this way):

* **Journal.** Rows are appended to a CSV *journal* as they finish, one complete line per row,
  flushed after every row (``fsync`` only at the end: a flush survives a crash or kill of the
  process, not of the operating system). For ``format = "csv"`` the journal *is* the output
  file; for ``"parquet"`` it is ``<output>.journal.csv`` beside it, because a Parquet file is
  unreadable until its footer is written and would not survive a hard kill mid-study.
* **Resume.** With ``resume=True`` the keys already in the journal (or, when there is no
  journal, in a finished Parquet output) are skipped: nothing finished is recomputed. A last
  line cut off by a hard kill is discarded before appending.
* **Interrupt.** ``KeyboardInterrupt`` (Ctrl-C, or raised by the progress callback) stops the
  study after the last complete row, cancels work not yet started and re-raises. The CSV output
  is then a valid partial file (complete rows, in completion order); for Parquet a valid partial
  Parquet file is written from the journal and the journal is kept for resuming.
* **Order.** Under an executor rows finish out of order. A study that completes rewrites its
  output atomically (temporary file + ``os.replace``) in the study's enumeration order, so the
  final file is identical whatever the executor and however often it was interrupted. Rows of
  keys the study no longer contains (the TOML changed between runs) are dropped from the final
  file and counted in :attr:`StudyResult.dropped`.
* **Errors.** A configuration that cannot be predicted (impossible launch, unsupported kernel,
  unknown kernel or device name) becomes a row whose ``error`` column holds the message and
  whose numeric columns are empty; only :class:`~warpspeed.errors.WarpspeedError` is caught,
  so a bug in warpspeed still stops the study (and resuming after the fix loses nothing).

Execution: ``executor=None`` runs serially in this process, one configuration at a time; any
``concurrent.futures.Executor`` (a ``ProcessPoolExecutor``, or Dask's
``distributed.Client(...).get_executor()``) runs chunks of at most ``chunk_size``
configurations of one (kernel, device, domain), each chunk building its own kernel and
:class:`~warpspeed.predict.Predictor`. Only one process may write a study's output at a time.
"""

from __future__ import annotations

import csv
import math
import os
import tomllib
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from warpspeed.errors import WarpspeedError
from warpspeed.launch.space import MAX_BLOCK_Z, PAPER_FOLDINGS, Config, block_sizes, fits_domain

Triple = tuple[int, int, int]

#: Output formats; the default is taken from the output file's suffix.
FORMATS: tuple[str, ...] = ("csv", "parquet")
_PARQUET_SUFFIXES = (".parquet", ".pq")
#: Configurations per executor task. A prediction takes ~6-230 ms (median per space) and building
#: a kernel plus its Predictor 5-30 ms for built-in kernels, ~1 s for a pystencils extraction
#: (2-core reference machine, benchmarks/README.md); 16 configurations amortise that set-up and
#: the task's transfer while keeping progress and interrupts responsive.
DEFAULT_CHUNK_SIZE = 16
#: Chunks submitted per CPU by default: enough to keep every worker busy while results stream back.
DEFAULT_IN_FLIGHT_PER_CPU = 4
#: Suffix of the CSV journal kept beside a Parquet output while the study runs.
JOURNAL_SUFFIX = ".journal.csv"

#: Output columns, in order. Rates are lattice updates per second (lups/s), volumes bytes per
#: lup, L1 in cycles per lup. Numeric columns are empty in error rows.
COLUMNS: tuple[str, ...] = (
    "key", "kernel", "device", "domain_x", "domain_y", "domain_z", "threads",
    "block_x", "block_y", "block_z", "fold_x", "fold_y", "fold_z",
    "lups_per_s", "limiter", "fp_lups_per_s", "l1_lups_per_s", "l2_lups_per_s", "dram_lups_per_s",
    "l1_cycles_per_lup", "l2_load_bytes_per_lup", "l2_store_bytes_per_lup",
    "dram_load_bytes_per_lup", "dram_store_bytes_per_lup",
    "blocks_per_sm", "occupancy_limiter", "registers", "error",
)
_INT_COLUMNS = frozenset({"domain_x", "domain_y", "domain_z", "threads", "block_x", "block_y", "block_z",
                          "fold_x", "fold_y", "fold_z", "blocks_per_sm", "registers"})
_FLOAT_COLUMNS = frozenset({"lups_per_s", "fp_lups_per_s", "l1_lups_per_s", "l2_lups_per_s", "dram_lups_per_s",
                            "l1_cycles_per_lup", "l2_load_bytes_per_lup", "l2_store_bytes_per_lup",
                            "dram_load_bytes_per_lup", "dram_store_bytes_per_lup"})
_LIMITERS = ("fp", "l1", "l2", "dram")
_SPEC_KEYS = frozenset({"kernels", "devices", "domains", "threads", "foldings", "max_block_z", "output", "format"})

Row = dict[str, str]
Progress = Callable[[int, int], None]


def _triple_text(values: Sequence[int]) -> str:
    return "x".join(str(v) for v in values)


@dataclass(frozen=True)
class StudyPoint:
    """One row of a study: a configuration of one kernel on one device and domain (cells)."""

    kernel: str
    device: str
    domain: Triple
    threads: int
    config: Config

    @property
    def key(self) -> str:
        """The stable row key ``kernel|device|domain|block|fold``."""
        return "|".join((self.kernel, self.device, _triple_text(self.domain),
                         _triple_text(self.config.block), _triple_text(self.config.fold)))


@dataclass(frozen=True)
class StudySpec:
    """A study: the cross product kernels x devices x domains x (blocks of each thread count) x foldings.

    ``domains`` are cells (nx, ny, nz); ``threads`` threads per block; ``foldings`` cells per
    thread; ``output`` the result file; ``format`` one of :data:`FORMATS`.
    """

    kernels: tuple[str, ...]
    devices: tuple[str, ...]
    domains: tuple[Triple, ...]
    threads: tuple[int, ...]
    output: Path
    foldings: tuple[Triple, ...] = PAPER_FOLDINGS
    max_block_z: int = MAX_BLOCK_Z
    format: str = "csv"

    def __post_init__(self) -> None:
        for name in ("kernels", "devices", "domains", "threads", "foldings"):
            if not getattr(self, name):
                raise WarpspeedError(f"study: '{name}' must be a non-empty list")
        if self.format not in FORMATS:
            raise WarpspeedError(f"study: format must be one of {', '.join(FORMATS)}, got {self.format!r}")
        for t in self.threads:
            if isinstance(t, bool) or not isinstance(t, int) or t <= 0 or t & (t - 1):
                raise WarpspeedError(f"study: threads per block must be positive powers of two, got {t!r}")
        for what, triples in (("domains", self.domains), ("foldings", self.foldings)):
            for tr in triples:
                if len(tr) != 3 or any(isinstance(v, bool) or not isinstance(v, int) or v <= 0 for v in tr):
                    raise WarpspeedError(f"study: {what} entries must be 3 positive integers (x, y, z), got {tr!r}")
        if isinstance(self.max_block_z, bool) or not isinstance(self.max_block_z, int) or self.max_block_z < 1:
            raise WarpspeedError(f"study: max_block_z must be a positive integer, got {self.max_block_z!r}")

    def points(self) -> list[StudyPoint]:
        """Every row of the study in enumeration order (duplicate keys kept once, first wins);
        configurations a domain cannot use (:func:`warpspeed.launch.space.fits_domain`) are left out."""
        out: list[StudyPoint] = []
        seen: set[str] = set()
        for kernel in self.kernels:
            for device in self.devices:
                for domain in self.domains:
                    for threads in self.threads:
                        for block in block_sizes(threads, self.max_block_z):
                            for fold in self.foldings:
                                p = StudyPoint(kernel, device, domain, threads, Config(block, fold))
                                if fits_domain(p.config, domain) and p.key not in seen:
                                    seen.add(p.key)
                                    out.append(p)
        return out

    @property
    def journal_path(self) -> Path:
        """Where rows are appended while the study runs (the output itself for CSV)."""
        if self.format == "csv":
            return self.output
        return self.output.with_name(self.output.name + JOURNAL_SUFFIX)


def _str_list(data: Mapping[str, Any], name: str) -> tuple[str, ...]:
    value = data.get(name)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise WarpspeedError(f"study: '{name}' must be a list of strings, got {value!r}")
    return tuple(value)


def _triples(data: Mapping[str, Any], name: str, default: Sequence[Triple] | None = None) -> tuple[Triple, ...]:
    value = data.get(name, default)
    if not isinstance(value, (list, tuple)):
        raise WarpspeedError(f"study: '{name}' must be a list of [x, y] or [x, y, z] integer lists, got {value!r}")
    out = []
    for v in value:
        if not isinstance(v, (list, tuple)) or not 2 <= len(v) <= 3:
            raise WarpspeedError(f"study: '{name}' entries must be 2 or 3 integers, got {v!r}")
        out.append(tuple(v) + (1,) * (3 - len(v)))
    return tuple(out)  # type: ignore[return-value]


def study_from_dict(data: Mapping[str, Any], base_dir: str | Path = ".") -> StudySpec:
    """A :class:`StudySpec` from parsed TOML; a relative ``output`` is relative to ``base_dir``."""
    unknown = sorted(set(data) - _SPEC_KEYS)
    if unknown:
        raise WarpspeedError(f"study: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_SPEC_KEYS))}")
    threads = data.get("threads")
    if not isinstance(threads, list):
        raise WarpspeedError(f"study: 'threads' must be a list of integers, got {threads!r}")
    output = data.get("output")
    if not isinstance(output, str) or not output:
        raise WarpspeedError("study: 'output' must be a file name (relative to the study file)")
    out_path = Path(output)
    if not out_path.is_absolute():
        out_path = Path(base_dir) / out_path
    fmt = data.get("format", "parquet" if out_path.suffix.lower() in _PARQUET_SUFFIXES else "csv")
    return StudySpec(
        kernels=_str_list(data, "kernels"), devices=_str_list(data, "devices"),
        domains=_triples(data, "domains"), threads=tuple(threads), output=out_path,
        foldings=_triples(data, "foldings", PAPER_FOLDINGS),
        max_block_z=data.get("max_block_z", MAX_BLOCK_Z), format=fmt,
    )


def load_study(path: str | Path) -> StudySpec:
    """Read a study TOML file (see the module docstring for its keys)."""
    p = Path(path)
    try:
        with p.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise WarpspeedError(f"study file {str(p)!r} not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise WarpspeedError(f"study file {str(p)!r} is not valid TOML: {exc}") from None
    return study_from_dict(data, p.parent)


@dataclass(frozen=True)
class StudyResult:
    """What :func:`run_study` did: rows in the final output, computed now, resumed, failed, dropped."""

    output: Path
    rows: int
    computed: int
    resumed: int
    failed: int
    dropped: int


# --------------------------------------------------------------------------- rows


def _fmt_float(value: float) -> str:
    return repr(float(value))  # round-trips exactly; 'inf' and 'nan' parse back with float()


def _base_row(point: StudyPoint) -> Row:
    row = {c: "" for c in COLUMNS}
    row.update({
        "key": point.key, "kernel": point.kernel, "device": point.device,
        "domain_x": str(point.domain[0]), "domain_y": str(point.domain[1]), "domain_z": str(point.domain[2]),
        "threads": str(point.threads),
        "block_x": str(point.config.block[0]), "block_y": str(point.config.block[1]),
        "block_z": str(point.config.block[2]),
        "fold_x": str(point.config.fold[0]), "fold_y": str(point.config.fold[1]), "fold_z": str(point.config.fold[2]),
    })
    return row


def _error_row(point: StudyPoint, message: str) -> Row:
    row = _base_row(point)
    row["error"] = message.replace("\r", " ").replace("\n", " ") or "error"
    return row


def _ok_row(point: StudyPoint, rank_row: Any) -> Row:
    row = _base_row(point)
    row.update({
        "lups_per_s": _fmt_float(rank_row.lups_per_s), "limiter": rank_row.limiter,
        "l1_cycles_per_lup": _fmt_float(rank_row.l1_cycles_per_lup),
        "l2_load_bytes_per_lup": _fmt_float(rank_row.l2_load_bytes_per_lup),
        "l2_store_bytes_per_lup": _fmt_float(rank_row.l2_store_bytes_per_lup),
        "dram_load_bytes_per_lup": _fmt_float(rank_row.dram_load_bytes_per_lup),
        "dram_store_bytes_per_lup": _fmt_float(rank_row.dram_store_bytes_per_lup),
        "blocks_per_sm": str(int(rank_row.blocks_per_sm)), "occupancy_limiter": rank_row.occupancy_limiter,
        "registers": str(int(rank_row.registers)),
    })
    for name in _LIMITERS:
        row[f"{name}_lups_per_s"] = _fmt_float(rank_row.limits.get(name, math.nan))
    return row


class _GroupPredictor:
    """Kernel, device and Predictor of one (kernel, device, domain), built on first use.

    A failure to build them (unknown name, unsupported kernel) is remembered and becomes the
    error of every configuration of the group.
    """

    def __init__(self, kernel: str, device: str, domain: Triple) -> None:
        self._args = (kernel, device, domain)
        self._predictor: Any = None
        self._error: str | None = None
        self._built = False

    def _build(self) -> None:
        from warpspeed.kernel.catalog import resolve_kernel
        from warpspeed.hardware.device import load_device
        from warpspeed.predict import Predictor

        self._built = True
        kernel_name, device_name, domain = self._args
        try:
            self._predictor = Predictor(resolve_kernel(kernel_name, domain), load_device(device_name))
        except WarpspeedError as exc:
            self._error = str(exc)

    def row(self, point: StudyPoint) -> Row:
        if not self._built:
            self._build()
        if self._error is not None:
            return _error_row(point, self._error)
        try:
            prediction = self._predictor.predict(point.config.block, point.config.fold)
            return _ok_row(point, prediction.rank_row(point.config))
        except WarpspeedError as exc:
            return _error_row(point, str(exc))


def predict_points(points: Sequence[StudyPoint]) -> list[Row]:
    """Rows of ``points`` (all of one kernel, device and domain), in order; runs in workers too."""
    if not points:
        return []
    first = points[0]
    group = _GroupPredictor(first.kernel, first.device, first.domain)
    if any((p.kernel, p.device, p.domain) != (first.kernel, first.device, first.domain) for p in points):
        raise WarpspeedError("predict_points takes points of one kernel, device and domain")
    return [group.row(p) for p in points]


def _chunks(points: Sequence[StudyPoint], size: int) -> list[list[StudyPoint]]:
    """Consecutive runs of ``points`` sharing (kernel, device, domain), at most ``size`` long."""
    out: list[list[StudyPoint]] = []
    for p in points:
        if out and len(out[-1]) < size and (out[-1][0].kernel, out[-1][0].device, out[-1][0].domain) == (
                p.kernel, p.device, p.domain):
            out[-1].append(p)
        else:
            out.append([p])
    return out


# --------------------------------------------------------------------------- storage


_HEADER = (",".join(COLUMNS) + "\n").encode()


def _foreign(path: Path) -> WarpspeedError:
    return WarpspeedError(
        f"{str(path)!r} is not a warpspeed study file of this version (its columns differ); "
        "run without resume (--no-resume) or choose another output")


def _truncate_partial_line(path: Path) -> None:
    """Cut a last line without its newline (a write interrupted by a hard kill).

    Refuses (rather than truncates) a file that does not start with this version's header.
    """
    size = path.stat().st_size
    if size == 0:
        return
    with path.open("rb+") as fh:
        if not _HEADER.startswith(fh.read(len(_HEADER))):  # a prefix of the header is a cut header
            raise _foreign(path)
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return
        step = 1 << 16
        end = size
        while end > 0:
            begin = max(0, end - step)
            fh.seek(begin)
            newline = fh.read(end - begin).rfind(b"\n")
            if newline >= 0:
                fh.truncate(begin + newline + 1)
                return
            end = begin
        fh.truncate(0)


def _read_journal(path: Path) -> list[Row]:
    """The complete rows of a journal (CSV with the :data:`COLUMNS` header)."""
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None:
            return []
        if tuple(header) != COLUMNS:
            raise _foreign(path)
        return [dict(zip(COLUMNS, values)) for values in reader if len(values) == len(COLUMNS)]


def _read_parquet_rows(path: Path) -> list[Row]:
    """Rows of a finished Parquet output, as journal strings (floats round-trip through repr)."""
    pq = _parquet()
    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises ArrowInvalid/OSError for files that are not Parquet
        raise WarpspeedError(f"{str(path)!r} is not a readable Parquet file ({exc}); "
                             "run without resume (--no-resume) or choose another output") from None
    if tuple(table.column_names) != COLUMNS:
        raise _foreign(path)
    rows = []
    for record in table.to_pylist():
        row: Row = {}
        for c in COLUMNS:
            v = record[c]
            row[c] = "" if v is None else (_fmt_float(v) if c in _FLOAT_COLUMNS else str(v))
        rows.append(row)
    return rows


def _parquet() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise WarpspeedError("Parquet output needs pyarrow (pip install warpspeed[distributed]); "
                             "or use format = \"csv\"") from None
    return pq


def _write_csv(path: Path, rows: Sequence[Row]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(COLUMNS)
        for row in rows:
            writer.writerow([row[c] for c in COLUMNS])
        fh.flush()
        os.fsync(fh.fileno())


def _write_parquet(path: Path, rows: Sequence[Row]) -> None:
    import pyarrow as pa

    pq = _parquet()
    types = {c: pa.int64() if c in _INT_COLUMNS else pa.float64() if c in _FLOAT_COLUMNS else pa.string()
             for c in COLUMNS}
    schema = pa.schema([(c, types[c]) for c in COLUMNS])

    def convert(c: str, v: str) -> Any:
        if v == "":
            return None
        if c in _INT_COLUMNS:
            return int(v)
        if c in _FLOAT_COLUMNS:
            return float(v)
        return v

    columns = {c: pa.array([convert(c, r[c]) for r in rows], type=types[c]) for c in COLUMNS}
    pq.write_table(pa.table(columns, schema=schema), path)


def _atomic(path: Path, writer: Callable[[Path, Sequence[Row]], None], rows: Sequence[Row]) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        writer(tmp, rows)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


class _Journal:
    """Append-only CSV journal: one complete, flushed line per row."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not path.exists() or path.stat().st_size == 0
        self._fh = path.open("a", newline="", encoding="utf-8")
        self._writer = csv.writer(self._fh, lineterminator="\n")
        if fresh:
            self._writer.writerow(COLUMNS)
            self._fh.flush()

    def append(self, row: Row) -> None:
        self._writer.writerow([row[c] for c in COLUMNS])
        self._fh.flush()

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()


def _existing_rows(spec: StudySpec, resume: bool) -> list[Row]:
    """Rows already finished (and prepare the journal for appending)."""
    journal = spec.journal_path
    if not resume:
        for p in {journal, spec.output}:
            if p.exists():
                p.unlink()
        return []
    if journal.exists():
        _truncate_partial_line(journal)
        if journal.stat().st_size == 0:
            return []
        return _read_journal(journal)
    if spec.format == "parquet" and spec.output.exists():
        rows = _read_parquet_rows(spec.output)
        journal.parent.mkdir(parents=True, exist_ok=True)
        _atomic(journal, _write_csv, rows)
        return rows
    return []


def _finalize(spec: StudySpec, points: Sequence[StudyPoint], done: Mapping[str, Row], complete: bool) -> None:
    """Write the output in study order (complete) or, for Parquet, a partial output (interrupted)."""
    ordered = [done[p.key] for p in points if p.key in done]
    if spec.format == "csv":
        if complete:
            _atomic(spec.output, _write_csv, ordered)
        return
    _atomic(spec.output, _write_parquet, ordered)
    if complete:
        spec.journal_path.unlink()


# --------------------------------------------------------------------------- running


def _serial(pending: Sequence[StudyPoint]) -> Iterator[Row]:
    group: _GroupPredictor | None = None
    group_id: tuple | None = None
    for p in pending:
        gid = (p.kernel, p.device, p.domain)
        if gid != group_id:
            group, group_id = _GroupPredictor(*gid), gid
        assert group is not None
        yield group.row(p)


def _parallel(pending: Sequence[StudyPoint], executor: Executor, chunk_size: int,
              max_in_flight: int) -> Iterator[Row]:
    """Rows in completion order; at most ``max_in_flight`` chunks submitted at a time."""
    chunks = iter(_chunks(pending, chunk_size))
    in_flight: set[Future] = set()
    try:
        while True:
            while len(in_flight) < max_in_flight:
                chunk = next(chunks, None)
                if chunk is None:
                    break
                in_flight.add(executor.submit(predict_points, chunk))
            if not in_flight:
                return
            finished, in_flight = wait(in_flight, return_when=FIRST_COMPLETED)
            failures = [fut for fut in finished if fut.exception() is not None]
            for fut in finished:
                if fut.exception() is None:
                    yield from fut.result()  # keep what succeeded before re-raising a failure
            if failures:
                failures[0].result()
    finally:
        for fut in in_flight:
            fut.cancel()


def run_study(spec: StudySpec, executor: Executor | None = None, progress: Progress | None = None,
              resume: bool = True, chunk_size: int = DEFAULT_CHUNK_SIZE,
              max_in_flight: int | None = None) -> StudyResult:
    """Run ``spec``, streaming rows to its output as they finish (see the module docstring).

    ``executor``: ``None`` (serial) or any ``concurrent.futures.Executor``; the caller owns it.
    ``progress(done, total)`` is called once at the start and after every row written, with
    ``done`` counting rows finished including resumed ones. ``resume=False`` deletes an existing
    output first. ``max_in_flight``: chunks submitted at a time (default:
    :data:`DEFAULT_IN_FLIGHT_PER_CPU` x this machine's CPU count; pass about that many per worker
    thread of a larger cluster), which bounds the memory held by pending work and results.
    """
    if chunk_size < 1:
        raise WarpspeedError(f"chunk_size must be a positive integer, got {chunk_size}")
    if spec.format == "parquet":
        _parquet()
    points = spec.points()
    wanted = {p.key for p in points}
    done: dict[str, Row] = {}
    for row in _existing_rows(spec, resume):
        done.setdefault(row["key"], row)
    dropped = sum(1 for k in done if k not in wanted)
    resumed = len(done) - dropped
    pending = [p for p in points if p.key not in done]
    total = len(points)
    finished = resumed
    computed = 0
    if progress:
        progress(finished, total)
    journal = _Journal(spec.journal_path)
    rows = _serial(pending) if executor is None else _parallel(
        pending, executor, chunk_size, max_in_flight or DEFAULT_IN_FLIGHT_PER_CPU * (os.cpu_count() or 1))
    try:
        for row in rows:
            journal.append(row)
            done[row["key"]] = row
            computed += 1
            finished += 1
            if progress:
                progress(finished, total)
    except BaseException:
        close = getattr(rows, "close", None)
        if close:
            close()
        journal.close()
        if spec.format == "parquet":
            _finalize(spec, points, done, complete=False)
        raise
    journal.close()
    _finalize(spec, points, done, complete=True)
    failed = sum(1 for p in points if done[p.key]["error"])
    return StudyResult(output=spec.output, rows=total, computed=computed, resumed=resumed,
                       failed=failed, dropped=dropped)
