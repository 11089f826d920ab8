"""Configuration spaces and ranking: predict every (block, fold) and sort by predicted speed.

The rows (:class:`RankRow`) are plain records; this module imports the predictor only where it
predicts, so that the record layout (:data:`RANK_COLUMNS`) loads without numpy and sympy.

A failing configuration (impossible launch, unsupported kernel) becomes a row with its error
instead of aborting the sweep. Predictions run serially, on any
``concurrent.futures.Executor`` (a process pool, or Dask's ``Client.get_executor()``), or on a
local process pool chosen automatically for large spaces; the result is identical and in the
same order either way. Local pools (:func:`process_pool`) start their workers with forkserver
or spawn, which import the calling script's main module: a script that ranks with a pool needs
the usual ``if __name__ == "__main__":`` guard, as any multiprocessing code.
"""

from __future__ import annotations

import math
import multiprocessing
import os
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

from warpspeed.errors import WarpspeedError
from warpspeed.files.records import csv_columns, recorded
from warpspeed.files.rows import error_text
from warpspeed.hardware.device import Device
from warpspeed.model_protocol import prediction_figures
from warpspeed.models import (
    DEFAULT_TIME_MODEL,
    estimate_energy,
    estimate_time,
    require_model,
    require_objective,
    shared_trace,
)
from warpspeed.launch.space import Config, configuration_space
from warpspeed.levels import LIMITERS
from warpspeed.trace.document import Trace

if TYPE_CHECKING:
    from warpspeed.model_protocol import EnergyEstimate, ModelEstimate
    from warpspeed.kernel.description import Kernel
    from warpspeed.memory.capacity import CapacityCurves
    from warpspeed.predict import Predictor, SharedModels
    from warpspeed.prediction import Prediction

#: Configurations from which a local pool of two workers pays (the ``"auto"`` executor,
#: :func:`pool_pays`). With ``w`` workers a pool wins when ``S + N t / w < N t``, i.e.
#: ``N > S / (t (1 - 1/w))``, ``S`` being what the pool adds (workers start with a safe method,
#: :data:`SAFE_START_METHODS`, import warpspeed and build a predictor per chunk, which shares wave
#: volumes only within the chunk) and ``t`` the serial time of one configuration. Measured on the
#: 2-core reference machine, otherwise idle (``benchmarks/bench_speed.py``, star3d-r4 on
#: A100-SXM4-40GB): ``S`` = 0.6-0.8 s, ``t`` = 2.3 ms; 400 configurations took 0.92 s serially and
#: 1.29 s on a pool of two, 1200 took 2.82 s and 2.03 s: the break-even lies near 600. On a busy
#: machine the workers share the cores with other work, so the threshold keeps a margin.
AUTO_PARALLEL_MIN_CONFIGS = 1000

#: Ways to start pool workers, safest first. ``fork`` is not among them: forking a process
#: that runs threads (numpy's, a Dask client's) can deadlock the child, and Python 3.12+ warns
#: about it; ``forkserver`` forks from a clean single-threaded server, ``spawn`` starts afresh.
SAFE_START_METHODS = ("forkserver", "spawn")

#: Configurations whose wave volumes a serial prediction prepares together
#: (:meth:`warpspeed.predict.Predictor.prefetch`): a ranking's 56 blocks of one folding in one go,
#: well within the wave model's memo (:data:`warpspeed.memory.wave.wave_model.MEMO_SIZE`).
PREFETCH_CONFIGS = 256


def check_executor(executor: object, what: str = "executor") -> None:
    """Refuse (:class:`TypeError` naming ``what``) an executor that is neither ``None``, ``"auto"``
    nor a :class:`concurrent.futures.Executor` (anything with ``submit``, such as Dask's)."""
    if executor is None or executor == "auto" or (not isinstance(executor, str) and callable(getattr(executor, "submit",
                                                                                                    None))):
        return
    raise TypeError(f"{what} must be None (serial), 'auto' (a process pool where it pays) or a "
                    f"concurrent.futures.Executor, got {type(executor).__name__} {executor!r}")


def pool_pays(configs: int, workers: int) -> bool:
    """Whether a local pool of ``workers`` processes predicts ``configs`` configurations sooner
    than this process alone: the break-even ``N = S / (t (1 - 1/w))`` of
    :data:`AUTO_PARALLEL_MIN_CONFIGS`, which is that of two workers, scaled to ``workers``
    (``AUTO_PARALLEL_MIN_CONFIGS x (1 - 1/2) / (1 - 1/w)``: 1000 on 2 cores, 667 on 4, 572 on 8);
    never with one CPU."""
    if workers < 2:
        return False
    return configs >= AUTO_PARALLEL_MIN_CONFIGS * (1 - 1 / 2) / (1 - 1 / workers)


def process_pool(max_workers: int | None = None) -> ProcessPoolExecutor:
    """A local process pool whose workers start with a safe method (see :data:`SAFE_START_METHODS`).

    Every pool warpspeed creates (the ``"auto"`` executor, ``--jobs``, studies) comes from here.
    """
    available = multiprocessing.get_all_start_methods()
    method = next(m for m in SAFE_START_METHODS if m in available)
    return ProcessPoolExecutor(max_workers=max_workers, mp_context=multiprocessing.get_context(method),
                               initializer=die_with_parent, initargs=(os.getpid(),))


#: Seconds between a pool worker's checks that the process that made its pool still lives
#: (:func:`die_with_parent`).
PARENT_CHECK_S = 0.5


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists and has not exited (a zombie, exited but not yet reaped,
    counts as gone: Linux's ``/proc/<pid>/stat`` state ``Z``)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rpartition(")")[2].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return True


def die_with_parent(owner: int) -> None:
    """Pool worker initializer: the worker ends when the process ``owner`` that made the pool ends,
    even by ``kill -9`` (which gives the pool no chance to stop its workers; a forkserver worker's
    parent is the forkserver, which outlives it). A daemon thread checks every
    :data:`PARENT_CHECK_S` seconds that ``owner`` still runs and ends the worker when it does not."""
    import threading
    import time

    def watch() -> None:
        while _alive(owner):
            time.sleep(PARENT_CHECK_S)
        os._exit(1)

    threading.Thread(target=watch, name="warpspeed-owner-watch", daemon=True).start()


def _has_power(row: "RankRow") -> bool:
    return not math.isnan(row.watts)


@dataclass(frozen=True)
class RankRow:
    """One ranked configuration. Volumes are bytes per lup; rates lups/s.

    ``error`` is set (and the numbers are NaN) when the configuration cannot be predicted. The
    fields are the row's record: its JSON object (``warpspeed rank --json``) and its CSV columns
    (:data:`RANK_COLUMNS`) are derived from them (:mod:`warpspeed.files.records`).
    """

    config: Config = recorded(flatten=True, identity=True)
    lups_per_s: float
    limiter: str
    #: lups/s per limiter (JSON ``limiters``; CSV ``<limiter>_lups_per_s`` per roofline limiter)
    limits: dict[str, float] = recorded(key="limiters", names=LIMITERS, pattern="{}_lups_per_s")
    l1_cycles_per_lup: float
    l2_load_bytes_per_lup: float
    l2_store_bytes_per_lup: float
    dram_load_bytes_per_lup: float
    dram_store_bytes_per_lup: float
    blocks_per_sm: int = recorded(cell=int)
    occupancy_limiter: str
    registers: int = recorded(cell=int)
    error: str | None = recorded(default=None, failure=True, cell=error_text)
    #: The time model ``lups_per_s`` comes from, and what dominates its time (for the roofline
    #: the limiter; for the interval model the largest CPI-stack entry); in the JSON object, not
    #: in the CSV row.
    model: str = recorded(default=DEFAULT_TIME_MODEL, csv=False)
    explanation: str = recorded(default="", csv=False)
    #: Board power (W) and lattice updates per joule (NaN unless ranked by energy or EDP; in the
    #: JSON object only then).
    watts: float = recorded(default=math.nan, csv=False, json_if=_has_power)
    lups_per_joule: float = recorded(default=math.nan, csv=False, json_if=_has_power)
    #: The configuration's trace when the scoring asks for it (:attr:`Scoring.traces`); in neither
    #: record (``rank --traces`` writes it to its own file).
    trace: Trace | None = recorded(default=None, json=False, csv=False, compare=False, repr=False)

    @property
    def ok(self) -> bool:
        return self.error is None

    @classmethod
    def from_estimate(cls, prediction: "Prediction", config: Config, time: "ModelEstimate",
                      energy: "EnergyEstimate | None" = None, trace: Trace | None = None) -> "RankRow":
        """The row of one predicted configuration from a time model's estimate ``time`` (its rate,
        explanation and figures: the model's own, else the prediction's,
        :func:`~warpspeed.model_protocol.prediction_figures`) and, when ranked by energy, the power
        model's ``energy`` (the rate it was computed at, watts, lups per joule)."""
        f = time.figures if time.figures is not None else prediction_figures(prediction)
        occ = prediction.launch.occupancy
        return cls(
            config=config, lups_per_s=time.lups_per_s if energy is None else energy.lups_per_s, limiter=f.limiter,
            limits=dict(f.limits), l1_cycles_per_lup=f.l1_cycles_per_lup,
            l2_load_bytes_per_lup=f.l2_load_bytes_per_lup, l2_store_bytes_per_lup=f.l2_store_bytes_per_lup,
            dram_load_bytes_per_lup=f.dram_load_bytes_per_lup, dram_store_bytes_per_lup=f.dram_store_bytes_per_lup,
            blocks_per_sm=occ.blocks_per_sm, occupancy_limiter=occ.limiter, registers=occ.registers_per_thread,
            model=time.model, explanation=time.explanation,
            watts=math.nan if energy is None else energy.watts,
            lups_per_joule=math.nan if energy is None else energy.lups_per_joule, trace=trace,
        )

    @classmethod
    def failed(cls, config: Config, message: str) -> "RankRow":
        """The row of a configuration that could not be predicted: its error, no numbers."""
        nan = math.nan
        return cls(config=config, lups_per_s=nan, limiter="", limits={}, l1_cycles_per_lup=nan,
                   l2_load_bytes_per_lup=nan, l2_store_bytes_per_lup=nan, dram_load_bytes_per_lup=nan,
                   dram_store_bytes_per_lup=nan, blocks_per_sm=0, occupancy_limiter="", registers=0,
                   error=message)


#: Columns of one ranked configuration in CSV files (ranking, study): the configuration, the
#: rate and limiters (lup/s), L1 cycles and L2/DRAM volumes per lup (bytes/lup), occupancy and
#: error; numeric cells are empty in error rows.
RANK_COLUMNS: tuple[str, ...] = csv_columns(RankRow)


@dataclass(frozen=True)
class Ranking:
    """Rows sorted best first (highest predicted lups/s); failed rows last, in input order."""

    kernel: str
    device: str
    rows: tuple[RankRow, ...] = field(default_factory=tuple)

    def best(self) -> RankRow:
        for row in self.rows:
            if row.ok:
                return row
        raise WarpspeedError(f"no configuration of {self.kernel} could be predicted on {self.device}")

    @property
    def failed(self) -> tuple[RankRow, ...]:
        return tuple(r for r in self.rows if not r.ok)


@dataclass(frozen=True)
class Scoring:
    """What a ranking predicts and orders by: the time ``model`` (:data:`warpspeed.models.TIME_MODELS`),
    the ``objective`` (:data:`warpspeed.models.OBJECTIVES`), the SM clock for the power model
    (MHz; None: the device's) and ``exact_waves``: DRAM volumes averaged over every full wave
    instead of the representative wave classes (:class:`warpspeed.predict.Predictor`); ``traces``:
    every row also carries its configuration's trace (:attr:`RankRow.trace`), built from the
    prediction the row was scored on."""

    model: str = DEFAULT_TIME_MODEL
    objective: str = "time"
    clock_mhz: float | None = None
    exact_waves: bool = False
    traces: bool = False

    def __post_init__(self) -> None:
        require_model(self.model)
        require_objective(self.objective)


#: The default: the default time model (:data:`warpspeed.models.DEFAULT_TIME_MODEL`), ranked by
#: lattice updates per second.
DEFAULT_SCORING = Scoring()


def score_prediction(prediction: "Prediction", config: Config, scoring: Scoring = DEFAULT_SCORING) -> RankRow:
    """The ranking row of one predicted configuration under ``scoring`` (time model, objective);
    raises :class:`WarpspeedError` when the model cannot estimate it. The row is built once, from
    the model's estimate (:meth:`RankRow.from_estimate`)."""
    trace = shared_trace(prediction, scoring.model, scoring.objective)
    if scoring.traces and trace is None:
        from warpspeed.trace.build import build_trace

        trace = build_trace(prediction)
    if trace is None and prediction.model is not None and prediction.model.name == scoring.model:
        time = prediction.estimate  # the prediction's own model: its estimate, computed once
    else:
        time = estimate_time(scoring.model, prediction, trace)
    energy = (estimate_energy(prediction, time, clock_mhz=scoring.clock_mhz, trace=trace)
              if scoring.objective != "time" else None)
    return RankRow.from_estimate(prediction, config, time, energy, trace if scoring.traces else None)


def predict_scored(predictor: "Predictor", config: Config, scorings: Sequence[Scoring]) -> tuple[RankRow, ...]:
    """One prediction of ``config``, one row per scoring (an error row where a model fails)."""
    try:
        prediction = predictor.predict(config.block, config.fold)
    except WarpspeedError as exc:
        return tuple(RankRow.failed(config, str(exc)) for _ in scorings)
    rows = []
    for scoring in scorings:
        try:
            rows.append(score_prediction(prediction, config, scoring))
        except WarpspeedError as exc:
            rows.append(RankRow.failed(config, str(exc)))
    return tuple(rows)


def _predict_one(predictor: "Predictor", config: Config, scoring: Scoring = DEFAULT_SCORING) -> RankRow:
    return predict_scored(predictor, config, (scoring,))[0]


def _predict_rows(kernel: Kernel, device: Device, configs: Sequence[Config],
                  curves: CapacityCurves | None = None, scoring: Scoring = DEFAULT_SCORING) -> list[RankRow]:
    """Predict a chunk of configurations with one shared Predictor (runs in workers too)."""
    from warpspeed.predict import Predictor

    predictor = Predictor(kernel, device, curves, exact_waves=scoring.exact_waves, model=scoring.model)
    predictor.prefetch([(c.block, c.fold) for c in configs])
    return [_predict_one(predictor, c, scoring) for c in configs]


def _chunks(items: Sequence[Config], parts: int) -> list[list[Config]]:
    size = max(1, math.ceil(len(items) / parts))
    return [list(items[i:i + size]) for i in range(0, len(items), size)]


def predict_configs(kernel: Kernel, device: Device, configs: Sequence[Config],
                    executor: Executor | None | str = "auto",
                    progress: Callable[[int], None] | None = None,
                    curves: CapacityCurves | None = None, scoring: Scoring = DEFAULT_SCORING,
                    shared: SharedModels | None = None) -> list[RankRow]:
    """Predict ``configs`` in input order.

    ``executor``: ``None`` runs serially in this process; an Executor runs chunks on it;
    ``"auto"`` uses a local process pool where it pays (:func:`pool_pays`).
    ``progress`` is called with the number of configurations finished so far. ``curves``:
    capacity curves instead of the device family's; ``scoring``: the time model and objective;
    ``shared``: wave models shared with the other predictions of a ranking (serial runs only).
    """
    from warpspeed.predict import Predictor

    check_executor(executor)
    configs = list(configs)
    workers = os.cpu_count() or 1
    if executor == "auto":
        executor = None
        if pool_pays(len(configs), workers):
            with process_pool(workers) as pool:
                return predict_configs(kernel, device, configs, pool, progress, curves, scoring)
    if executor is None:
        predictor = Predictor(kernel, device, curves, exact_waves=scoring.exact_waves, shared=shared,
                              model=scoring.model)
        rows: list[RankRow] = []
        for config in configs:
            if len(rows) % PREFETCH_CONFIGS == 0:
                predictor.prefetch([(c.block, c.fold) for c in configs[len(rows):len(rows) + PREFETCH_CONFIGS]])
            rows.append(_predict_one(predictor, config, scoring))
            if progress:
                progress(len(rows))
        return rows
    chunks = _chunks(configs, 4 * workers)
    futures = [executor.submit(_predict_rows, kernel, device, chunk, curves, scoring) for chunk in chunks]
    rows = []
    for fut in futures:
        rows.extend(fut.result())
        if progress:
            progress(len(rows))
    return rows


def rank(kernel: Kernel, device: Device, configs: Iterable[Config] | None = None,
         executor: Executor | None | str = "auto",
         progress: Callable[[int], None] | None = None,
         curves: CapacityCurves | None = None, scoring: Scoring = DEFAULT_SCORING) -> Ranking:
    """Predict and sort ``configs`` best first (default: the 1024-thread space the kernel's
    domain can use, :func:`warpspeed.launch.space.configuration_space`); ``curves``: capacity
    curves instead of the device family's; ``scoring``: time model and objective."""
    space = list(configs) if configs is not None else configuration_space(kernel)
    rows = predict_configs(kernel, device, space, executor, progress, curves, scoring)
    return Ranking(kernel=kernel.name, device=device.name, rows=sort_rows(rows, scoring.objective))


#: Significant digits of the rates the ranking compares: rates equal to this many digits are a
#: tie (the same configuration computed in another summation order differs in the last bits of a
#: double, and must not change the order).
SORT_DIGITS = 12


def _key(value: float) -> float:
    """``value`` rounded to :data:`SORT_DIGITS` significant digits (infinities and NaN kept)."""
    return float(f"{value:.{SORT_DIGITS - 1}e}") if math.isfinite(value) else value


def _headroom_key(row: RankRow) -> tuple:
    """Sort key: the four limits in ascending order, larger first. The first entry is the
    prediction; equal predictions (e.g. all FP-bound) are decided by the headroom of the next
    tightest limiter, then by block and fold so the order is total."""
    limits = sorted(row.limits.values()) if row.limits else [row.lups_per_s]
    return (tuple(-_key(v) for v in limits), row.config.block, row.config.fold)


def _objective_key(objective: str) -> Callable[[RankRow], tuple]:
    """Sort key for ``objective``: lups/s (``time``), lups per joule (``energy``) or the
    energy-delay product per lup, 1 / (lups/J x lups/s) (``edp``); ties by the roofline headroom."""
    if objective == "energy":
        return lambda r: (-_key(r.lups_per_joule), -_key(r.lups_per_s), *_headroom_key(r))
    if objective == "edp":
        return lambda r: (-_key(r.lups_per_joule * r.lups_per_s), -_key(r.lups_per_s), *_headroom_key(r))
    return lambda r: (-_key(r.lups_per_s), *_headroom_key(r))


def sort_rows(rows: Iterable[RankRow], objective: str = "time") -> tuple[RankRow, ...]:
    """Best first by ``objective`` (``time``: highest lups/s, ties by the next limiters' headroom,
    then block and fold); failed rows last in input order."""
    rows = list(rows)
    ok = sorted((r for r in rows if r.ok), key=_objective_key(require_objective(objective)))
    return tuple(ok + [r for r in rows if not r.ok])


def rank_per_fold(kernels: Mapping[tuple[int, int, int], Kernel], device: Device,
                  blocks: Callable[[Kernel], Sequence[tuple[int, int, int]]],
                  executor: Executor | None | str = "auto",
                  progress: Callable[[int], None] | None = None,
                  curves: CapacityCurves | None = None, scoring: Scoring = DEFAULT_SCORING) -> Ranking:
    """Rank every folding with its own kernel (code generators compile one kernel per folding).

    ``kernels`` maps each folding to its kernel; ``blocks(kernel)`` gives the candidate blocks
    of that kernel. Foldings whose kernels are equal (and carry the same generated code, which the
    trace compiles) are predicted in one batch, so a kernel that does not change with the folding
    is ranked exactly as :func:`rank` ranks it.
    """
    groups: list[tuple[Kernel, list[Config]]] = []
    for fold, kernel in kernels.items():
        configs = [Config(tuple(b), tuple(fold)) for b in blocks(kernel)]  # type: ignore[arg-type]
        for known, known_configs in groups:
            if known == kernel and known.code == kernel.code:
                known_configs.extend(configs)
                break
        else:
            groups.append((kernel, configs))
    from warpspeed.predict import SharedModels

    rows: list[RankRow] = []
    shared = SharedModels()  # the foldings' kernels differ in registers, not in their wave volumes
    for kernel, configs in groups:
        done = len(rows)
        rows.extend(predict_configs(kernel, device, configs, executor,
                                    (lambda n, base=done: progress(base + n)) if progress else None, curves,
                                    scoring, shared))
    name = next(iter(kernels.values())).name
    return Ranking(kernel=name, device=device.name, rows=sort_rows(rows, scoring.objective))
