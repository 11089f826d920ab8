"""Calibrating a family's energies to measured board power (``warpspeed power-fit``).

The public measurements (gpu-benches ``gpu-roofline``: a float streaming kernel whose inner loop
of fused multiply-adds grows, at full occupancy, board power and SM clock per run) exercise two
kinds of activity, FP32 instructions and DRAM streaming, plus the floor. The fit therefore
determines three numbers; everything else is tied to them by AccelWattch's published Volta values
(Kandiah et al., MICRO 2021, and its artifact: the ``volta-gv100`` family) and by the core-energy
priors (``priors.toml``):

- ``fp32_lane_j``: energy of one FP32 FMA lane; every core component's energy is this times its
  prior ratio (:func:`warpspeed.power.params.core_ratios`), so the column is
  ``R sum_c n_c ratio_c s^2``;
- ``dram_sector_j``: energy per 32 B DRAM sector; the L2 and L1 sector energies follow with the
  Volta ratios (L2+NoC / DRAM+MC and L1 / DRAM+MC per sector);
- ``floor_w``: static plus constant power with all SMs active at the benchmark's category and
  lanes, split as on Volta: constant : static(int+FP, 32 lanes); the static part split into first
  lane and further lanes likewise; idle power per SM in Volta's proportion to static.

Model per run: ``P = R (sum_c n_c ratio_c e_fp32 s^2 + (n_DRAM + (e_L2 n_L2 + e_L1 n_L1) / e_DRAM s^2)
e_DRAM) + floor (q + (1 - q) s)`` with ``s = f / f_ref`` and ``q`` the constant share. The rate
``R`` is the run's measured rate, or warpspeed's prediction of the benchmark
(:mod:`warpspeed.power.benchmark`) at the run's clock. The three unknowns are found by bounded
linear least squares of the relative errors (``scipy.optimize.lsq_linear``, unknowns >= 0).
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from warpspeed.errors import WarpspeedError
from warpspeed.files.atomic import write_text_atomic
from warpspeed.files.text import read_text
from warpspeed.hardware.ranges import FLOAT_RANGES
from warpspeed.power.benchmark import BLOCK_THREADS, roofline_benchmark
from warpspeed.power.board import activity, rate_at_clock
from warpspeed.units import SECTOR_BYTES, WARP_LANES
from warpspeed.power.params import (
    BASE_CATEGORY,
    CATEGORY_FAMILY,
    PLAUSIBLE_V_MIN,
    assumed_floor,
    category_ratios,
    core_ratios,
    load_family,
)
from warpspeed.units import GIGA, KILO

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device


@dataclass(frozen=True)
class Anchors:
    """AccelWattch's Volta values the fit ties the unfitted parameters to (watts, joules)."""

    constant_w: float
    first_lane_w: float  # int+FP static, first lane
    add_lane_w: float  # int+FP static, each further lane
    idle_sm_w: float
    sms: int
    dram_sector_j: float
    l2_sector_j: float
    l1_sector_j: float

    @property
    def static_32_w(self) -> float:
        return self.first_lane_w + (WARP_LANES - 1) * self.add_lane_w


def volta_anchors() -> Anchors:
    """The anchors from the ``volta-gv100`` family file."""
    family = load_family(CATEGORY_FAMILY)
    st, dyn = family["static"], family["dynamic"]
    return Anchors(st["constant_w"], st["first_lane_w"], st["add_lane_w"], st["idle_sm_w"], int(st["reference_sms"]),
                   dyn["dram_sector_j"], dyn["l2_sector_j"], dyn["l1_sector_j"])


#: Weight of the row tying the static : constant split to Volta's (weak: 1 % of one run's weight).
RIDGE_WEIGHT = 0.01
#: Voltage floors tried (supply voltage relative to the reference clock's): 0 (voltage follows the
#: clock all the way) and 0.50 ... 1.00 in steps of 0.025.
V_MIN_CANDIDATES = (0.0, *np.round(np.arange(0.5, 1.0001, 0.025), 3))
#: Relative cost difference below which two voltage floors fit the runs equally well (a tie: runs
#: whose clocks all lie above both floors cannot tell them apart).
V_MIN_TIE = 1e-9
#: Columns a measurement CSV must have.
REQUIRED_COLUMNS = ("its", "clock_mhz", "watts")
#: Fewest runs, and the least rank of their design, that determine the three fitted quantities
#: (FP32 lane energy, DRAM sector energy and the floor).
MIN_RUNS = 3


#: Longest inner loop of a run (FMAs per element pair): eight times the longest of the published
#: gpu-roofline runs (512, ``fits/data/public/gpu-roofline``); the benchmark is FP-bound long before.
MAX_ITS = 4096
#: Highest SM clock of a run, MHz: the highest device clock a device file may give
#: (:data:`warpspeed.hardware.ranges.FLOAT_RANGES`).
MAX_RUN_CLOCK_MHZ = FLOAT_RANGES["clock_ghz"][1] * KILO


#: Plausible clocks of a run, relative to the device's highest clock (``clock_ghz``): from the
#: lowest clock the model accepts (:data:`warpspeed.hardware.clock.MIN_CLOCK_FRACTION`) to 25 %
#: above it (a margin for boards factory-clocked above the reference part; no built-in run exceeds 1.0).
RUN_CLOCK_HEADROOM = 1.25
#: Plausible board power of a run, relative to the device's ``[device]`` ``power_limit_w``: at most
#: twice the limit (boards exceed it only in millisecond excursions, never in a sampled median),
#: at least 1 % of it (a powered board never draws less).
RUN_POWER_HEADROOM = 2.0
RUN_POWER_FLOOR = 0.01
#: Plausible achieved GFLOP/s of a run: at most the device's FP32 peak (SMs x clock x FP32 lanes x
#: 2 flops per FMA) times this margin for clocks above ``clock_ghz``.
RUN_RATE_HEADROOM = RUN_CLOCK_HEADROOM
#: Largest relative error of a fit that ``power-fit`` writes: about three times the largest error
#: of the calibrated families shipped (7.8 %, ``warpspeed/power/families/*.toml`` provenance); a
#: worse fit means the runs do not follow the model (another kernel, throttling, wrong columns).
MAX_FIT_ERROR = 0.25


def check_run_on(device: "Device", run: Run) -> Run:
    """``run`` if its clock, watts and GFLOP/s are plausible for ``device`` (relative to the
    device's own clock, power limit and FP32 peak: the constants above), else a one-line error."""
    from warpspeed.hardware.clock import MIN_CLOCK_FRACTION

    low, high = MIN_CLOCK_FRACTION * device.clock_mhz, RUN_CLOCK_HEADROOM * device.clock_mhz
    if not low <= run.clock_mhz <= high:
        raise WarpspeedError(f"clock_mhz {run.clock_mhz:g} is not a clock {device.name} runs at; allowed: "
                             f"{low:g} to {high:g} MHz ({MIN_CLOCK_FRACTION:g} to {RUN_CLOCK_HEADROOM:g} x its "
                             f"{device.clock_mhz:g} MHz)")
    limit = device.power_limit_w
    if limit is not None:
        low, high = RUN_POWER_FLOOR * limit, RUN_POWER_HEADROOM * limit
        if not low <= run.watts <= high:
            raise WarpspeedError(f"watts {run.watts:g} is not a board power of {device.name}; allowed: {low:g} to "
                                 f"{high:g} W ({RUN_POWER_FLOOR:g} to {RUN_POWER_HEADROOM:g} x its {limit:g} W limit)")
    if run.gflop_s is not None:
        peak = device.sms * device.clock_ghz * device.fp32_lanes_per_sm * 2 * RUN_RATE_HEADROOM
        if run.gflop_s > peak:
            raise WarpspeedError(f"gflop_s {run.gflop_s:g} is more than {device.name} can compute; allowed: at "
                                 f"most {peak:g} ({RUN_RATE_HEADROOM:g} x its FP32 peak)")
    return run


def _check_runs_on(device: "Device", runs: Sequence[Run]) -> None:
    """:func:`check_run_on` of every run, the first failure a one-line error naming its number.
    Its checks are ranges of one field each, so when the runs with the lowest and highest clock
    and watts and the highest GFLOP/s pass, every run passes: only those are checked, and every
    run in order when one of them fails."""
    _, clock, watts, gflop = _run_arrays(runs)
    extremes = {int(np.argmin(clock)), int(np.argmax(clock)), int(np.argmin(watts)), int(np.argmax(watts))}
    if not np.all(np.isnan(gflop)):
        extremes.add(int(np.nanargmax(gflop)))
    try:
        for index in extremes:
            check_run_on(device, runs[index])
    except WarpspeedError:
        for n, run in enumerate(runs, 1):
            try:
                check_run_on(device, run)
            except WarpspeedError as exc:
                raise WarpspeedError(f"run {n}: {exc}") from None


def _positive(value: object) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            and value > 0)


@dataclass(frozen=True)
class Run:
    """One measured run: inner-loop FMAs, SM clock (MHz), board power (W) and, when measured, the
    achieved GFLOP/s (then the run's rate is the measured one, else warpspeed's prediction).

    A measured run (:func:`check_run`) has an integer ``its`` from 0 to :data:`MAX_ITS`, a clock
    of finite MHz above 0 and at most :data:`MAX_RUN_CLOCK_MHZ`, and watts and GFLOP/s that are
    finite numbers above 0."""

    its: int
    clock_mhz: float
    watts: float
    gflop_s: float | None = None


def check_run(run: Run) -> Run:
    """``run`` if it is a measured run (see :class:`Run`), else a one-line WarpspeedError."""
    if isinstance(run.its, bool) or not isinstance(run.its, int) or not 0 <= run.its <= MAX_ITS:
        raise WarpspeedError(f"its is not an inner-loop length (got {run.its!r}); allowed: an integer from 0 "
                             f"to {MAX_ITS}")
    if not _positive(run.clock_mhz) or run.clock_mhz > MAX_RUN_CLOCK_MHZ:
        raise WarpspeedError(f"clock_mhz is not an SM clock (got {run.clock_mhz!r}); allowed: a finite number "
                             f"of MHz above 0 and at most {MAX_RUN_CLOCK_MHZ:g}")
    if not _positive(run.watts):
        raise WarpspeedError(f"watts is not a board power (got {run.watts!r}); allowed: a finite number above 0")
    if run.gflop_s is not None and not _positive(run.gflop_s):
        raise WarpspeedError(f"gflop_s is not a rate (got {run.gflop_s!r}); allowed: a finite number above 0, "
                             "or an empty cell")
    return run


@dataclass(frozen=True)
class FitResult:
    """The fitted family (a TOML-ready dict) and the per-run relative errors of the fit."""

    family: dict
    errors: tuple[float, ...]
    runs: tuple[Run, ...]

    @property
    def mape(self) -> float:
        return float(np.mean(np.abs(self.errors)))

    @property
    def max_error(self) -> float:
        return float(np.max(np.abs(self.errors)))


class RunTable(Sequence[Run]):
    """Runs as columns (numpy arrays in run order; ``gflop_s`` NaN where not measured), as
    :func:`read_runs` reads them: a sequence of :class:`Run` (each made when asked for) whose
    fit works on the arrays."""

    def __init__(self, its: np.ndarray, clock_mhz: np.ndarray, watts: np.ndarray, gflop_s: np.ndarray) -> None:
        self.its, self.clock_mhz, self.watts, self.gflop_s = its, clock_mhz, watts, gflop_s

    def __len__(self) -> int:
        return len(self.its)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        gflop = float(self.gflop_s[index])
        return Run(int(self.its[index]), float(self.clock_mhz[index]), float(self.watts[index]),
                   None if math.isnan(gflop) else gflop)

    def __iter__(self):
        for its, clock, watts, gflop in zip(self.its.tolist(), self.clock_mhz.tolist(), self.watts.tolist(),
                                            self.gflop_s.tolist()):
            yield Run(its, clock, watts, None if math.isnan(gflop) else gflop)


def _run_arrays(runs: Sequence[Run]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(its, clock MHz, watts, GFLOP/s or NaN) of ``runs`` as arrays."""
    if isinstance(runs, RunTable):
        return runs.its, runs.clock_mhz, runs.watts, runs.gflop_s
    return (np.fromiter((r.its for r in runs), np.int64, len(runs)),
            np.fromiter((r.clock_mhz for r in runs), float, len(runs)),
            np.fromiter((r.watts for r in runs), float, len(runs)),
            np.fromiter((np.nan if r.gflop_s is None else r.gflop_s for r in runs), float, len(runs)))


def check_runs(runs: Sequence[Run]) -> None:
    """:func:`check_run` of every run; the first failure is a one-line error naming the run's
    number (1-based)."""
    found = first_bad_run(runs)
    if found is not None:
        raise WarpspeedError(f"run {found[0] + 1}: {found[1]}")


def first_bad_run(runs: Sequence[Run]) -> tuple[int, WarpspeedError] | None:
    """The index of the first run :func:`check_run` refuses, and its error; None when every run
    passes. The checks run on arrays (a million runs in a fraction of a second); :func:`check_run`
    words the error of the run found."""
    if not runs:
        return None
    if isinstance(runs, RunTable):  # numbers already: the checks on the arrays
        whole, clock, watts, gflop = runs.its, runs.clock_mhz, runs.watts, runs.gflop_s
        with np.errstate(invalid="ignore"):
            ok = ((whole >= 0) & (whole <= MAX_ITS) & np.isfinite(clock) & (clock > 0) & (clock <= MAX_RUN_CLOCK_MHZ)
                  & np.isfinite(watts) & (watts > 0) & (np.isnan(gflop) | (np.isfinite(gflop) & (gflop > 0))))
        for index in np.flatnonzero(~ok):
            try:
                check_run(runs[int(index)])
            except WarpspeedError as exc:
                return int(index), exc
        return None
    its = np.array([r.its if isinstance(r.its, int) and not isinstance(r.its, bool) else -1 for r in runs],
                   dtype=object)
    values = np.array([(r.clock_mhz, r.watts, np.nan if r.gflop_s is None else r.gflop_s) for r in runs], dtype=object)
    try:
        numbers = values.astype(float)
        whole = its.astype(np.int64)
    except (TypeError, ValueError, OverflowError):
        bad = np.arange(len(runs))  # a value of another type: find it run by run
    else:
        clock, watts, gflop = numbers[:, 0], numbers[:, 1], numbers[:, 2]
        with np.errstate(invalid="ignore"):
            ok = ((whole >= 0) & (whole <= MAX_ITS) & np.isfinite(clock) & (clock > 0) & (clock <= MAX_RUN_CLOCK_MHZ)
                  & np.isfinite(watts) & (watts > 0) & (np.isnan(gflop) | (np.isfinite(gflop) & (gflop > 0))))
        bad = np.flatnonzero(~ok)
    for index in bad:
        try:
            check_run(runs[int(index)])
        except WarpspeedError as exc:
            return int(index), exc
    return None


def read_runs(path: str | Path) -> RunTable:
    """Runs from a measurement CSV (``#`` comment lines allowed; columns its, clock_mhz, watts and
    optionally gflop_s). The file is read once, the rows' numbers converted and checked as arrays,
    so a million runs take seconds."""
    p = Path(path)
    text = read_text(p, "runs file")
    numbered = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip() and not line.startswith("#")]
    quoted = '"' in text
    header = [c.strip() for c in (next(csv.reader([numbered[0][1]])) if quoted else numbered[0][1].split(","))] \
        if numbered else []
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise WarpspeedError(f"{p}: missing column(s) {', '.join(missing)}; need {', '.join(REQUIRED_COLUMNS)}")
    columns = [header.index(c) for c in ("its", "clock_mhz", "watts")]
    gflop_column = header.index("gflop_s") if "gflop_s" in header else None
    lines = [n for n, _ in numbered[1:]]
    data = [line for _, line in numbered[1:]]
    width = len(header)
    if quoted:  # csv.reader: a row's cells, quotes removed
        rows = list(csv.reader(data))
        lengths = [len(row) for row in rows]
    else:  # without quotes a row's cells are its text split at the commas
        lengths = [line.count(",") + 1 for line in data]
    for length, n in zip(lengths, lines):
        if length != width:
            raise WarpspeedError(f"{p} line {n}: the row has another number of cells than the header; "
                                 "give one cell per column")
    if quoted:
        cells = [rows[i][j] for j in range(width) for i in range(len(rows))]
        column = lambda j: cells[j * len(rows):(j + 1) * len(rows)]  # noqa: E731
    else:
        wanted = {j: [] for j in (*columns, gflop_column) if j is not None}
        for start in range(0, len(data), _CHUNK_LINES):  # in chunks: only the wanted cells stay
            flat = ",".join(data[start:start + _CHUNK_LINES]).split(",")
            for j, cells_j in wanted.items():
                cells_j.extend(flat[j::width])
        column = wanted.__getitem__
    try:  # numpy parses each distinct cell text once (a campaign repeats its settings)
        its = _converted(column(columns[0]), lambda texts: np.array([t.strip() for t in texts], dtype=str)
                         .astype(np.int64), np.int64)
        clock, watts = (_converted(column(c), lambda texts: np.array(texts, dtype=str).astype(float), float)
                        for c in columns[1:])
        gflop = (np.full(len(data), np.nan) if gflop_column is None else
                 _converted(column(gflop_column), lambda texts: np.array(
                     [float(t.strip()) if t.strip() else np.nan for t in texts], dtype=float), float))
    except (ValueError, OverflowError):
        for n, line in zip(lines, data):  # find the row and say what is wrong with it
            row = next(csv.reader([line])) if quoted else line.split(",")
            try:
                gflop_text = row[gflop_column].strip() if gflop_column is not None else ""
                int(row[columns[0]]), float(row[columns[1]]), float(row[columns[2]])
                float(gflop_text) if gflop_text else None
                if not -2**63 <= int(row[columns[0]]) < 2**63:  # numpy's int64 overflows
                    raise WarpspeedError(f"{p} line {n}: its is not an inner-loop length (got "
                                         f"{row[columns[0]].strip()!r}); allowed: an integer from 0 to {MAX_ITS}")
            except ValueError:
                raise WarpspeedError(f"{p} line {n}: its, clock_mhz, watts or gflop_s is not a number (got "
                                     f"{row[columns[0]]!r}, {row[columns[1]]!r}, {row[columns[2]]!r}, "
                                     f"{row[gflop_column] if gflop_column is not None else None!r}); "
                                     "its is an integer, the others decimal numbers") from None
        raise
    runs = RunTable(its, clock, watts, gflop)
    found = first_bad_run(runs)
    if found is not None:
        raise WarpspeedError(f"{p} line {lines[found[0]]}: {found[1]}")
    if len(runs) < MIN_RUNS:
        raise WarpspeedError(f"{p}: too few runs (got {len(runs)}); the fit needs at least {MIN_RUNS}")
    return runs


#: Lines split at a time by :func:`read_runs` (bounds the memory of the cells it does not read).
_CHUNK_LINES = 1 << 16


def _converted(cells: list[str], convert, dtype) -> np.ndarray:
    """``convert`` (texts -> array) applied to each distinct text of ``cells`` once, spread back
    to the cells."""
    distinct = list(dict.fromkeys(cells))
    values = dict(zip(distinct, convert(distinct).tolist())) if distinct else {}
    return np.array(list(map(values.__getitem__, cells)), dtype=dtype)


def measured_lups_per_s(run: Run, flops_per_lup: float | None = None) -> float:
    """The run's measured rate in updates of the benchmark description per second: its GFLOP/s
    over the description's flops per update (:mod:`warpspeed.power.benchmark`; ``flops_per_lup``:
    those flops when the caller has them already)."""
    if run.gflop_s is None:
        raise WarpspeedError(f"run with its = {run.its} has no gflop_s: its measured rate is unknown")
    flops = roofline_benchmark(run.its).flops.flops if flops_per_lup is None else flops_per_lup
    return run.gflop_s * GIGA / flops


def _constant_share() -> float:
    volta = volta_anchors()
    return volta.constant_w / (volta.constant_w + volta.static_32_w)


def _predicted(device: "Device", its_values) -> dict[int, tuple]:
    """Per inner-loop length: the benchmark's activity, predicted rate and roofline limits."""
    from warpspeed.predict import Predictor
    from warpspeed.trace.build import build_trace

    out = {}
    for its in sorted(set(its_values)):
        p = Predictor(roofline_benchmark(its), device).predict((BLOCK_THREADS, 1, 1))
        out[its] = (activity(build_trace(p)), p.roofline.lups_per_s, dict(p.roofline.limits))
    return out


def _static_share(category: str, lanes: float) -> float:
    """Static power of ``category`` at ``lanes`` relative to int+FP at 32 lanes (linear model)."""
    volta, ratios = volta_anchors(), category_ratios()
    rf, ra = ratios[category]
    return (rf * volta.first_lane_w + ra * volta.add_lane_w * (lanes - 1)) / volta.static_32_w


@dataclass(frozen=True)
class RunColumns:
    """Per run, what the design's columns are made of (arrays in run order), so a fit that scans
    the voltage floors builds them once: the rate (lups/s: measured, else predicted at the run's
    clock), the clock relative to the device's, the FP32-lane-weighted core activity, the DRAM
    sectors and the L1/L2 sectors in DRAM-sector energy, and the static share at the run's lanes."""

    rate: np.ndarray
    clock_rel: np.ndarray
    core: np.ndarray
    dram: np.ndarray
    cached: np.ndarray
    static: np.ndarray


def run_columns(device: "Device", runs: Sequence[Run], measured_rate: bool = True,
                predicted: dict[int, tuple] | None = None) -> RunColumns:
    """:class:`RunColumns` of ``runs``: what depends on a run's inner-loop length is computed once
    per length (the benchmark kernel is built once per length, not once per run)."""
    cache = predicted if predicted is not None else _predicted(device, _run_arrays(runs)[0].tolist())
    volta, ratios = volta_anchors(), core_ratios()
    its_values = sorted(cache)
    table = np.array([[sum(n * ratios[c] for c, n in act.core.items()), act.dram_sectors,
                       (volta.l2_sector_j * act.l2_sectors + volta.l1_sector_j * act.l1_sectors) / volta.dram_sector_j,
                       _static_share(act.category, act.active_lanes), roofline_benchmark(its).flops.flops]
                      for its in its_values for act, _, _ in (cache[its],)], dtype=float).reshape(len(its_values), 5)
    its, clock, _, gflop = _run_arrays(runs)
    row = np.searchsorted(np.array(its_values, dtype=np.int64), its) if len(its_values) else its
    measured = ~np.isnan(gflop) if measured_rate else np.zeros(len(runs), dtype=bool)
    rate = np.empty(len(runs))
    if measured.any():  # measured_lups_per_s, on arrays: GFLOP/s over the benchmark's flops per update
        rate[measured] = gflop[measured] * GIGA / table[row[measured], 4]
    at_clock: dict[tuple[int, float], float] = {}
    for index in np.flatnonzero(~measured):  # predicted rates, once per (its, clock)
        key = (int(its[index]), float(clock[index]))
        if key not in at_clock:
            _, predicted_rate, limits = cache[key[0]]
            at_clock[key] = rate_at_clock(predicted_rate, limits, key[1], device.clock_mhz)
        rate[index] = at_clock[key]
    per_run = table[row]
    return RunColumns(rate=rate, clock_rel=clock / device.clock_mhz, core=per_run[:, 0], dram=per_run[:, 1],
                      cached=per_run[:, 2], static=per_run[:, 3])


def design_from(columns: RunColumns, v_min_rel: float = 0.0) -> np.ndarray:
    """The design matrix (see :func:`design`) of :class:`RunColumns` at the voltage floor
    ``v_min_rel``: the supply voltage relative to the reference clock's is
    :func:`~warpspeed.power.board.voltage_ratio`'s, the clock ratio down to the floor."""
    s = np.maximum(columns.clock_rel, v_min_rel)
    return np.column_stack([columns.rate * columns.core * s * s, columns.rate * (columns.dram + columns.cached * s * s),
                            s * columns.static, np.ones_like(s)])


def design(device: "Device", runs: Sequence[Run], v_min_rel: float = 0.0, measured_rate: bool = True,
           predicted: dict[int, tuple] | None = None) -> np.ndarray:
    """The runs' columns ``[FP32-lane-weighted core activity/s, weighted DRAM sectors/s, static
    factor s, 1]`` (see the module docstring); the static column is in units of the int+FP static
    power at 32 lanes."""
    return design_from(run_columns(device, runs, measured_rate, predicted), v_min_rel)


@dataclass(frozen=True)
class _Solution:
    """A least-squares solution: the parameters and half the sum of squared relative residuals
    (scipy's ``cost``)."""

    x: np.ndarray
    cost: float


def _solve(a: np.ndarray, watts: np.ndarray) -> _Solution:
    """Relative least squares, plus one weak row tying the static : constant split to Volta's
    (it decides the split only when the runs cannot: all at one clock). The rows are first
    reduced to the triangular factor of their QR decomposition (the same minimizer, four rows
    instead of one per run), so a million runs cost one pass over them; the cost is then
    evaluated on every row."""
    q = _constant_share()
    tie = RIDGE_WEIGHT * np.array([0.0, 0.0, q, -(1 - q)]) / np.mean(watts)
    a_w = np.vstack([a / watts[:, None], tie])
    b_w = np.concatenate([np.ones(len(watts)), [0.0]])
    from scipy.optimize import lsq_linear  # imported by the fit only: predictions do not need scipy

    r_factor = np.linalg.qr(a_w, mode="r")  # a_w = Q R; Q^T b = R^-T a_w^T b (Q is never formed)
    try:
        reduced_a, reduced_b = r_factor, np.linalg.solve(r_factor.T, a_w.T @ b_w)
    except np.linalg.LinAlgError:  # a singular R: solve the whole problem
        reduced_a, reduced_b = a_w, b_w
    with np.errstate(invalid="ignore"):  # trf's step selection multiplies an infinite stride by 0 at a bound
        x = lsq_linear(reduced_a, reduced_b, bounds=(0.0, np.inf)).x
    residual = a_w @ x - b_w
    return _Solution(x, 0.5 * float(residual @ residual))


def fit_family(device: "Device", runs: Sequence[Run], source: str) -> FitResult:
    """Fit ``fp32_lane_j``, ``dram_sector_j``, the floor and the voltage floor ``v_min_rel`` of
    ``device``'s family to ``runs`` (the voltage floor by a scan of :data:`V_MIN_CANDIDATES`, the
    rest by least squares for each)."""
    if len(runs) < MIN_RUNS:
        raise WarpspeedError(f"too few runs (got {len(runs)}); the fit needs at least {MIN_RUNS}")
    check_runs(runs)
    _check_runs_on(device, runs)
    watts = _run_arrays(runs)[2]
    columns = run_columns(device, runs)
    _require_determined(design_from(columns, V_MIN_CANDIDATES[0]), watts, runs)
    best, costs = None, []
    for v_min in V_MIN_CANDIDATES:
        a = design_from(columns, v_min)
        solution = _solve(a, watts)
        costs.append(solution.cost)
        if best is None or solution.cost < best[2].cost - 1e-12:
            best = (v_min, a, solution)
    v_min, a, solution = best
    clock = voltage_floor(V_MIN_CANDIDATES, costs, v_min)
    e_fp32, e_dram, static, constant = (float(x) for x in solution.x)
    relative = (a @ solution.x - watts) / watts
    errors = tuple(relative.tolist())
    worst = int(np.argmax(np.abs(relative)))
    if not np.all(np.isfinite(relative)) or abs(errors[worst]) > MAX_FIT_ERROR:
        raise WarpspeedError(f"the fit does not follow the runs (largest error {100 * abs(errors[worst]):.1f} % at run "
                             f"{worst + 1}, its = {runs[worst].its}); allowed: at most {100 * MAX_FIT_ERROR:g} %: "
                             "runs of the gpu-roofline benchmark on this device, not throttled")
    volta = volta_anchors()
    family = {
        "dynamic": {"fp32_lane_j": e_fp32, "dram_sector_j": e_dram,
                    "l2_sector_j": e_dram * volta.l2_sector_j / volta.dram_sector_j,
                    "l1_sector_j": e_dram * volta.l1_sector_j / volta.dram_sector_j},
        "static": {"model": "linear",
                   "first_lane_w": static * volta.first_lane_w / volta.static_32_w,
                   "add_lane_w": static * volta.add_lane_w / volta.static_32_w,
                   "idle_sm_w": volta.idle_sm_w * static / volta.static_32_w * volta.sms / device.sms,
                   "constant_w": constant, "reference_sms": device.sms},
        "clock": clock,
        "provenance": {"status": "calibrated", "device": device.name, "data": source, "runs": len(runs),
                       "method": "bounded linear least squares of relative errors (scipy.optimize.lsq_linear); "
                                 f"fp32_lane_j, dram_sector_j and the floor ({BASE_CATEGORY} static at 32 lanes plus constant) "
                                 "fitted; core ratios from priors.toml, the rest tied to AccelWattch's Volta values "
                                 "(warpspeed.calibration.power)",
                       "mape": float(np.mean(np.abs(errors))), "max_error": float(np.max(np.abs(errors))),
                       "sector_bytes": SECTOR_BYTES},
    }
    return FitResult(family, errors, runs if isinstance(runs, RunTable) else tuple(runs))


def _require_determined(a: np.ndarray, watts: np.ndarray, runs: Sequence[Run]) -> None:
    """A one-line error unless the runs determine the fitted quantities: the relative design's
    columns (FP32 activity, DRAM activity, static and constant power) must have rank of at least
    :data:`MIN_RUNS` (static and constant may coincide when all runs share a clock: the weak
    Volta tie decides their split). Identical runs, or runs that differ only in watts, have rank 1."""
    relative = a / watts[:, None]
    norms = np.linalg.norm(relative, axis=0)
    rank = int(np.linalg.matrix_rank(relative[:, norms > 0] / norms[norms > 0])) if np.any(norms > 0) else 0
    if rank < MIN_RUNS:
        distinct = len({(r.its, r.clock_mhz) for r in runs})
        raise WarpspeedError(f"the runs do not determine the fit (got {distinct} distinct run(s), design rank {rank}); "
                             f"allowed: runs whose inner-loop lengths (its) differ, at least {MIN_RUNS} distinct")


def voltage_floor(candidates: Sequence[float], costs: Sequence[float], chosen: float) -> dict:
    """The ``[clock]`` table of a fit: ``fitted`` when ``chosen`` alone has the least cost; on a tie
    (:data:`V_MIN_TIE`) the floor is ``assumed``, its range the plausible floors
    (:data:`~warpspeed.power.params.PLAUSIBLE_V_MIN`) cut to the tied candidates' span where that
    leaves a range, and ``v_min_rel`` -- the floor of point predictions at other clocks -- the
    middle of that range (:func:`~warpspeed.power.params.assumed_floor`; ``dvfs`` reports the whole
    range). The tied floors fit the runs equally well, so the fitted energies hold for any of them."""
    least = min(costs)
    tied = [v for v, c in zip(candidates, costs) if c <= least * (1 + V_MIN_TIE) + 1e-15]
    if len(tied) == 1:
        return {"v_min_rel": float(chosen), "v_min_status": "fitted"}
    low, high = max(PLAUSIBLE_V_MIN[0], min(tied)), min(PLAUSIBLE_V_MIN[1], max(tied))
    span = [low, high] if low <= high else list(PLAUSIBLE_V_MIN)
    return {"v_min_rel": assumed_floor(span), "v_min_status": "assumed", "v_min_range": [float(v) for v in span]}


def write_family(result: FitResult, path: str | Path, name: str) -> Path:
    """Write the fitted family file (TOML) with a header naming what it was fitted to."""
    import tomli_w

    p = Path(path)
    prov = result.family["provenance"]
    header = (f"# Power-model family {name!r}: fitted by `warpspeed power-fit` to {prov['runs']} runs of {prov['data']}\n"
              f"# on {prov['device']}; mean |error| {100 * result.mape:.2f} %, largest {100 * result.max_error:.2f} %.\n"
              "# Energies in joules, powers in watts; see warpspeed.power.params for the keys.\n")
    write_text_atomic(p, header + tomli_w.dumps(result.family))
    return p


def clock_power_fit(clocks_ghz: Sequence[float], watts: Sequence[float]) -> tuple[float, float, float]:
    """AccelWattch's eq 3 fitted to board power measured at several locked clocks of one kernel:
    ``P(f) = beta f^3 + tau f + P_const`` (voltage proportional to the clock), by linear least
    squares (``numpy.linalg.lstsq``). Returns ``(beta, tau, P_const)`` in W/GHz^3, W/GHz and W; the
    intercept is the constant power the family files hold."""
    f = np.asarray(clocks_ghz, dtype=float)
    p = np.asarray(watts, dtype=float)
    if f.shape != p.shape or f.size < 3:
        raise WarpspeedError(f"the clock fit needs at least 3 (clock, watts) pairs, got {f.size} clocks and {p.size} powers")
    solution, *_ = np.linalg.lstsq(np.column_stack([f ** 3, f, np.ones_like(f)]), p, rcond=None)
    beta, tau, constant = (float(x) for x in solution)
    return beta, tau, constant
