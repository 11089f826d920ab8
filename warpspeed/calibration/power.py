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
from warpspeed.power.board import activity, rate_at_clock, voltage_ratio
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
#: Plausible board power of a run, relative to the device's ``[power]`` ``power_limit_w``: at most
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
    table = device.tables.get("power")
    limit = table.get("power_limit_w") if isinstance(table, dict) else None
    if isinstance(limit, (int, float)) and not isinstance(limit, bool):
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


def read_runs(path: str | Path) -> list[Run]:
    """Runs from a measurement CSV (``#`` comment lines allowed; columns its, clock_mhz, watts)."""
    p = Path(path)
    text = read_text(p, "runs file")
    numbered = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip() and not line.startswith("#")]
    reader = csv.DictReader([line for _, line in numbered])
    missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise WarpspeedError(f"{p}: missing column(s) {', '.join(missing)}; need {', '.join(REQUIRED_COLUMNS)}")
    runs = []
    for (n, _), row in zip(numbered[1:], reader):
        if None in row or any(row.get(c) is None for c in REQUIRED_COLUMNS):
            raise WarpspeedError(f"{p} line {n}: the row has another number of cells than the header; "
                                 "give one cell per column")
        try:
            its = int(row["its"])
            clock, watts = float(row["clock_mhz"]), float(row["watts"])
            gflop = float(row["gflop_s"]) if (row.get("gflop_s") or "").strip() else None
        except ValueError:
            raise WarpspeedError(f"{p} line {n}: its, clock_mhz, watts or gflop_s is not a number (got "
                                 f"{row['its']!r}, {row['clock_mhz']!r}, {row['watts']!r}, {row.get('gflop_s')!r}); "
                                 "its is an integer, the others decimal numbers") from None
        try:
            runs.append(check_run(Run(its, clock, watts, gflop)))
        except WarpspeedError as exc:
            raise WarpspeedError(f"{p} line {n}: {exc}") from None
    if len(runs) < MIN_RUNS:
        raise WarpspeedError(f"{p}: too few runs (got {len(runs)}); the fit needs at least {MIN_RUNS}")
    return runs


def measured_lups_per_s(run: Run) -> float:
    """The run's measured rate in updates of the benchmark description per second: its GFLOP/s
    over the description's flops per update (:mod:`warpspeed.power.benchmark`)."""
    if run.gflop_s is None:
        raise WarpspeedError(f"run with its = {run.its} has no gflop_s: its measured rate is unknown")
    return run.gflop_s * GIGA / roofline_benchmark(run.its).flops.flops


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


def design(device: "Device", runs: Sequence[Run], v_min_rel: float = 0.0, measured_rate: bool = True,
           predicted: dict[int, tuple] | None = None) -> np.ndarray:
    """The runs' columns ``[FP32-lane-weighted core activity/s, weighted DRAM sectors/s, static
    factor s, 1]`` (see the module docstring); the static column is in units of the int+FP static
    power at 32 lanes."""
    cache = predicted if predicted is not None else _predicted(device, (r.its for r in runs))
    volta, ratios = volta_anchors(), core_ratios()
    rows = []
    for run in runs:
        act, rate, limits = cache[run.its]
        if measured_rate and run.gflop_s is not None:
            r = measured_lups_per_s(run)
        else:
            r = rate_at_clock(rate, limits, run.clock_mhz, device.clock_mhz)
        s = voltage_ratio(run.clock_mhz, device.clock_mhz, v_min_rel)
        cached = (volta.l2_sector_j * act.l2_sectors + volta.l1_sector_j * act.l1_sectors) / volta.dram_sector_j
        core = sum(n * ratios[c] for c, n in act.core.items())
        rows.append([r * core * s * s, r * (act.dram_sectors + cached * s * s),
                     s * _static_share(act.category, act.active_lanes), 1.0])
    return np.array(rows)


def _solve(a: np.ndarray, watts: np.ndarray):
    """Relative least squares, plus one weak row tying the static : constant split to Volta's
    (it decides the split only when the runs cannot: all at one clock)."""
    q = _constant_share()
    tie = RIDGE_WEIGHT * np.array([0.0, 0.0, q, -(1 - q)]) / np.mean(watts)
    a_w = np.vstack([a / watts[:, None], tie])
    b_w = np.concatenate([np.ones(len(watts)), [0.0]])
    from scipy.optimize import lsq_linear  # imported by the fit only: predictions do not need scipy

    with np.errstate(invalid="ignore"):  # trf's step selection multiplies an infinite stride by 0 at a bound
        return lsq_linear(a_w, b_w, bounds=(0.0, np.inf))


def fit_family(device: "Device", runs: Sequence[Run], source: str) -> FitResult:
    """Fit ``fp32_lane_j``, ``dram_sector_j``, the floor and the voltage floor ``v_min_rel`` of
    ``device``'s family to ``runs`` (the voltage floor by a scan of :data:`V_MIN_CANDIDATES`, the
    rest by least squares for each)."""
    if len(runs) < MIN_RUNS:
        raise WarpspeedError(f"too few runs (got {len(runs)}); the fit needs at least {MIN_RUNS}")
    for n, run in enumerate(runs, 1):
        check_run(run)
        try:
            check_run_on(device, run)
        except WarpspeedError as exc:
            raise WarpspeedError(f"run {n}: {exc}") from None
    watts = np.array([r.watts for r in runs])
    predicted = _predicted(device, (r.its for r in runs))
    _require_determined(design(device, runs, V_MIN_CANDIDATES[0], predicted=predicted), watts, runs)
    best, costs = None, []
    for v_min in V_MIN_CANDIDATES:
        a = design(device, runs, v_min, predicted=predicted)
        solution = _solve(a, watts)
        costs.append(solution.cost)
        if best is None or solution.cost < best[2].cost - 1e-12:
            best = (v_min, a, solution)
    v_min, a, solution = best
    clock = voltage_floor(V_MIN_CANDIDATES, costs, v_min)
    e_fp32, e_dram, static, constant = (float(x) for x in solution.x)
    errors = tuple(float(e) for e in (a @ solution.x - watts) / watts)
    worst = int(np.argmax(np.abs(errors)))
    if not all(math.isfinite(e) for e in errors) or abs(errors[worst]) > MAX_FIT_ERROR:
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
    return FitResult(family, errors, tuple(runs))


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
