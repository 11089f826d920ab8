"""Running a study: predictions over kernels x devices x domains x configurations, streamed to disk.

The study is described by a :class:`~warpspeed.studies.spec.StudySpec` (a TOML file, see
:mod:`warpspeed.studies.spec`); rows are stored by :mod:`warpspeed.studies.storage`.

* **Kernels.** Every configuration is predicted with the kernel generated for its folding
  (:class:`~warpspeed.studies.predictors.FoldingPredictors`), as every command resolves names.
* **Streaming.** Rows are written to the output in study order as the study walks its
  configurations (:meth:`~warpspeed.studies.spec.StudySpec.iter_points`), never collected: the
  memory a study needs does not depend on its number of configurations. The output is written to
  a temporary file beside it and renamed into place when the study completes, so it is whole or
  absent (an older output stays as it was until then). Every row computed is also appended to the
  journal (``<output>.journal.csv``) as it finishes, in completion order; the journal is deleted
  when the output is in place.
* **Interrupt.** ``KeyboardInterrupt`` (Ctrl-C, or raised by the progress callback) stops the
  study after the last complete row, cancels work not yet started and re-raises; so does any
  other exception. The temporary output is removed, no output is written, and the journal keeps
  every finished row for resuming.
* **Resume.** With ``resume=True`` the rows already stored (in the journal; without one, in an
  output already there) are skipped: nothing finished is recomputed. They are looked up by key
  in an on-disk index (:class:`~warpspeed.studies.index.RowIndex`), not held in memory. Rows of keys the study no longer contains (the TOML changed between runs) are
  dropped from the final file and counted in :attr:`StudyResult.dropped`.
* **Models.** Each row carries the columns of the study's ``models``
  (:mod:`warpspeed.studies.models`), all computed from the row's one prediction. Rows stored
  under another model set are reused only when they hold every column now asked for (models
  removed); otherwise they are recomputed whole (:attr:`StudyResult.refreshed`), never mixed.
  A model failing for a configuration makes the whole row an error row, as in ``warpspeed rank``;
  a device lacking a requested model's parameters stops the study before it starts.
* **Errors.** An unknown kernel or device name stops the study before it starts, with one
  error. A configuration that cannot be predicted (impossible launch, unsupported kernel)
  becomes a row whose ``error`` column holds the message and whose numeric columns are empty;
  only :class:`~warpspeed.errors.WarpspeedError` is caught, so a bug in warpspeed still stops
  the study (and resuming after the fix loses nothing).

Execution: ``executor=None`` runs serially in this process, one configuration at a time; any
``concurrent.futures.Executor`` (a pool from :func:`warpspeed.rank.process_pool`, or Dask's
``distributed.Client(...).get_executor()``) runs chunks of at most ``chunk_size``
configurations of one (kernel, device, domain), each chunk building its own kernels and
predictors; at most ``max_in_flight`` chunks, counted from the oldest one not yet written, are
submitted or held at a time, which bounds the rows waiting for an earlier chunk. Only one process may write a study's output at a time.
"""

from __future__ import annotations

import os
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from warpspeed.errors import WarpspeedError
from warpspeed.files.records import csv_record
from warpspeed.files.rows import cell, error_text
from warpspeed.studies.models import DEFAULT_MODELS, model_record, require_parameters, study_columns
from warpspeed.studies.spec import StudyPoint, StudySpec
from warpspeed.files.atomic import output_target
from warpspeed.studies.index import RowIndex, count_stored
from warpspeed.studies.storage import Journal, OutputWriter, Row, index_journal, parquet_module, prepare_journal

#: Configurations per executor task. A prediction takes ~6-230 ms (median per space) and building
#: a kernel plus its Predictor 5-30 ms for built-in kernels, ~1 s for a pystencils extraction
#: (2-core reference machine, benchmarks/README.md); 16 configurations amortise that set-up and
#: each chunk's transfer while keeping progress and interrupts responsive.
DEFAULT_CHUNK_SIZE = 16
#: Chunks submitted per CPU by default: enough to keep every worker busy while results stream back.
DEFAULT_IN_FLIGHT_PER_CPU = 4

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class StudyResult:
    """What :func:`run_study` did: rows in the final output, computed now, resumed, failed, dropped,
    and ``refreshed``: rows of the study stored under another model set and recomputed (included
    in ``computed``)."""

    output: Path
    rows: int
    computed: int
    resumed: int
    failed: int
    dropped: int
    refreshed: int = 0


# --------------------------------------------------------------------------- rows


def _row(point: StudyPoint, record: dict[str, Any], columns: Sequence[str]) -> Row:
    """A stored row: the point's key and identification, then ``record`` (ranking and model columns)."""
    row = {"key": point.key, "kernel": point.kernel, "device": point.device,
           **{f"domain_{d}": str(v) for d, v in zip("xyz", point.domain)}, "threads": str(point.threads)}
    row.update({c: cell(record.get(c)) for c in columns if c not in row})
    return row


def _error_row(point: StudyPoint, message: str, columns: Sequence[str]) -> Row:
    return _row(point, {**csv_record(point.config), "error": error_text(message)},
                columns)


class _GroupPredictor:
    """Device and predictors of one (kernel, device, domain), built on first use.

    A device that cannot be loaded is remembered and becomes the error of every configuration
    of the group; a kernel that cannot be resolved, the error of every configuration with its
    folding. ``models``: whose columns each row carries (:mod:`warpspeed.studies.models`).
    """

    def __init__(self, kernel: str, device: str, domain: tuple[int, int, int],
                 models: Sequence[str] = DEFAULT_MODELS) -> None:
        self._args = (kernel, device, domain)
        self._models = tuple(models)
        self._columns = study_columns(self._models)
        self._predictors: Any = None
        self._error: str | None = None
        self._built = False

    def _build(self) -> None:
        from warpspeed.hardware.device import load_device
        from warpspeed.studies.predictors import FoldingPredictors

        self._built = True
        kernel_name, device_name, domain = self._args
        try:
            self._predictors = FoldingPredictors(kernel_name, domain, load_device(device_name))
        except WarpspeedError as exc:
            self._error = str(exc)

    def row(self, point: StudyPoint) -> Row:
        if not self._built:
            self._build()
        if self._error is not None:
            return _error_row(point, self._error, self._columns)
        try:
            prediction = self._predictors.predict(point.config)
            record = model_record(prediction, self._models, point.config)
            return _row(point, record, self._columns)
        except WarpspeedError as exc:
            return _error_row(point, str(exc), self._columns)


def predict_points(points: Sequence[StudyPoint], models: Sequence[str] = DEFAULT_MODELS) -> list[Row]:
    """Rows of ``points`` (all of one kernel, device and domain) with the columns of ``models``,
    in order; runs in workers too."""
    if not points:
        return []
    if any(p.group != points[0].group for p in points):
        raise WarpspeedError("predict_points takes points of one kernel, device and domain")
    group = _GroupPredictor(*points[0].group, models=models)
    return [group.row(p) for p in points]


def _chunks(points: Iterable[StudyPoint], size: int) -> Iterator[list[StudyPoint]]:
    """Consecutive runs of ``points`` sharing (kernel, device, domain), at most ``size`` long,
    generated as ``points`` are."""
    chunk: list[StudyPoint] = []
    for p in points:
        if chunk and (len(chunk) == size or chunk[0].group != p.group):
            yield chunk
            chunk = []
        chunk.append(p)
    if chunk:
        yield chunk


# --------------------------------------------------------------------------- running


Finished = Callable[[Row], None]


def _serial(pending: Iterable[StudyPoint], models: Sequence[str], finished: Finished) -> Iterator[Row]:
    group: _GroupPredictor | None = None
    group_id: tuple | None = None
    for p in pending:
        if p.group != group_id:
            group, group_id = _GroupPredictor(*p.group, models=models), p.group
        assert group is not None
        row = group.row(p)
        finished(row)
        yield row


def _parallel(pending: Iterable[StudyPoint], executor: Executor, chunk_size: int,
              max_in_flight: int, models: Sequence[str], finished: Finished) -> Iterator[Row]:
    """Rows in the order of ``pending``; ``finished(row)`` is called for each as its chunk completes
    (completion order). At most ``max_in_flight`` chunks are submitted or held at a time, counted
    from the oldest chunk not yet yielded, so the rows waiting for an earlier, slower chunk are at
    most ``max_in_flight x chunk_size``."""
    chunks = _chunks(pending, chunk_size)
    window: deque[Future] = deque()  # submitted, in study order
    reported: set[Future] = set()  # finished, their rows passed to ``finished``
    try:
        while True:
            while len(window) < max_in_flight and (chunk := next(chunks, None)) is not None:
                window.append(executor.submit(predict_points, chunk, models))
            if not window:
                return
            if window[0] not in reported:
                done, _ = wait([f for f in window if f not in reported], return_when=FIRST_COMPLETED)
                ordered = [f for f in window if f in done]
                failures = [f for f in ordered if f.exception() is not None]
                for fut in ordered:
                    if fut.exception() is None:  # keep what succeeded before re-raising a failure
                        for row in fut.result():
                            finished(row)
                        reported.add(fut)
                if failures:
                    failures[0].result()
            while window and window[0] in reported:
                fut = window.popleft()
                reported.discard(fut)
                yield from fut.result()
    finally:
        for fut in window:
            fut.cancel()


def _check_names(spec: StudySpec) -> None:
    """A one-line error, before any row, for a kernel or device name the study cannot resolve (as
    ``warpspeed rank --kernel nope`` gives), and for two entries of ``devices`` that name one
    device (``V100``, ``V100-PCIe-32GB`` and ``volta``: one GPU computed under three labels)."""
    from warpspeed.hardware.device import load_device
    from warpspeed.kernel.catalog import require_kernel

    from warpspeed.hardware.device import device_identity

    for kernel in spec.kernels:
        require_kernel(kernel)
    seen: dict[str, str] = {}
    for device in dict.fromkeys(spec.devices):
        load_device(device)
        identity = device_identity(device)
        if identity in seen:
            raise WarpspeedError(f"study: devices {seen[identity]!r} and {device!r} name one device ({identity}); "
                                 "list each device once (by one name, prefix, family or path)")
        seen[identity] = device


def _check_parameters(spec: StudySpec) -> None:
    """A one-line error when a device of ``spec`` lacks a requested model's parameters (devices
    that cannot be loaded are left to their error rows)."""
    if spec.models == DEFAULT_MODELS:
        return
    from warpspeed.hardware.device import load_device

    for name in spec.devices:
        try:
            device = load_device(name)
        except WarpspeedError:
            continue
        require_parameters(device, spec.models)


def _rows(pending: Iterable[StudyPoint], executor: Executor | None, chunk_size: int,
          max_in_flight: int | None, models: Sequence[str], finished: Finished) -> Iterator[Row]:
    """Rows of ``pending`` in its order, computed serially or on ``executor``."""
    if executor is None:
        return _serial(pending, models, finished)
    return _parallel(pending, executor, chunk_size,
                     max_in_flight or DEFAULT_IN_FLIGHT_PER_CPU * (os.cpu_count() or 1), models, finished)


class _Counter:
    """Rows computed in this run: each appended to the journal, then reported to ``progress``."""

    def __init__(self, journal: Journal, start: int, total: int, progress: Progress | None) -> None:
        self.computed = 0
        self._journal, self._start, self._total, self._progress = journal, start, total, progress

    def __call__(self, row: Row) -> None:
        self._journal.append(row)
        self.computed += 1
        if self._progress:
            self._progress(self._start + self.computed, self._total)


def run_study(spec: StudySpec, executor: Executor | None = None, progress: Progress | None = None,
              resume: bool = True, chunk_size: int = DEFAULT_CHUNK_SIZE,
              max_in_flight: int | None = None) -> StudyResult:
    """Run ``spec``, streaming rows to its output in study order (see the module docstring).

    ``executor``: ``None`` (serial) or any ``concurrent.futures.Executor``; the caller owns it.
    ``progress(done, total)`` is called once at the start and after every row computed, with
    ``done`` counting rows finished including resumed ones. ``resume=False`` ignores (and deletes)
    the journal of an earlier run and any output already there, which is replaced when the study
    completes. ``max_in_flight``: chunks submitted or held at a time (default:
    :data:`DEFAULT_IN_FLIGHT_PER_CPU` x this machine's CPU count; pass about that many per worker
    thread of a larger cluster), which bounds the memory held by pending work and results.
    """
    if chunk_size < 1:
        raise WarpspeedError(f"chunk_size must be a positive integer, got {chunk_size}")
    if spec.format == "parquet":
        parquet_module()
    total = check_study(spec)
    prepare_journal(spec, resume)
    spec.output.parent.mkdir(parents=True, exist_ok=True)
    with RowIndex(output_target(spec.output).parent, spec.columns) as stored:
        index_journal(spec, stored)
        resumed, dropped, refreshed = count_stored(stored, (p.key for p in spec.iter_points()))
        if progress:
            progress(resumed, total)
        journal = Journal(spec.journal_path, spec.columns)
        counter = _Counter(journal, resumed, total, progress)
        rows = _rows((p for p in spec.iter_points() if p.key not in stored), executor, chunk_size, max_in_flight,
                     spec.models, counter)
        failed = 0
        try:
            with OutputWriter(spec) as output:
                for point in spec.iter_points():
                    row = stored.get(point.key)
                    if row is None:
                        row = next(rows)
                        if row["key"] != point.key:  # pragma: no cover - the two walks share one order
                            raise AssertionError(f"study row {row['key']!r} arrived for {point.key!r}")
                    output.write(row)
                    failed += bool(row["error"])
        finally:
            rows.close()  # type: ignore[attr-defined]  # a generator: cancels chunks not yet started
            journal.close()
    spec.journal_path.unlink()
    return StudyResult(output=spec.output, rows=total, computed=counter.computed, resumed=resumed,
                       failed=failed, dropped=dropped, refreshed=refreshed)


def check_study(spec: StudySpec) -> int:
    """Everything checked before a study starts (its size, its kernel and device names, the
    parameters of its models); returns the number of configurations."""
    total = check_size(spec)
    _check_names(spec)
    _check_parameters(spec)
    return total


def check_size(spec: StudySpec) -> int:
    """The number of configurations of ``spec`` (:meth:`~warpspeed.studies.spec.StudySpec.count_points`,
    counted before any is built), or a one-line error when there are none. There is no upper
    bound: rows stream to the output, in memory independent of their number."""
    total = spec.count_points()
    if not total:
        raise WarpspeedError("study: no configuration fits its domains (every block is more than twice as wide as "
                             "a domain, or extends along an axis of extent 1); allowed: thread counts and max_block_z "
                             "that give blocks the domains can use")
    return total
