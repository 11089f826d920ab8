"""Calibrating a family's energies to measured board power (``warpspeed power-fit``).

The public measurements (gpu-benches ``gpu-roofline``: a float streaming kernel whose inner loop
of fused multiply-adds grows, at full occupancy, board power and SM clock per run) exercise two
kinds of activity, FP32 instructions and DRAM streaming, plus the floor. The fit therefore
determines three numbers, with everything else tied to them by AccelWattch's published Volta
values (Kandiah et al., MICRO 2021, and its artifact's ``accelwattch_sass_sim.xml`` for the
Quadro GV100 as quoted in the model's documentation):

- ``lane_op_j``: energy per lane operation (every instruction a thread issues);
- ``dram_sector_j``: energy per 32 B DRAM sector; the L2 and L1 sector energies follow with the
  Volta ratios 0.85 / 1.52 and 0.20 / 1.52 (DRAM+MC 1.52 nJ, L2+NoC 0.85 nJ, L1 0.20 nJ per sector,
  derived from the artifact's hardware profile);
- ``floor_w``: static plus constant power with all SMs active and 32 lanes per warp, split as on
  Volta: constant 32.33 W of 70.95 W (constant + int/FP static at 32 lanes: 18.62 + 31 x 0.645 W);
  the static part split into first lane and further lanes likewise; idle power per SM from Volta's
  0.283 W x this device's SMs' share (not exercised: the benchmark fills every SM).

Model per run: ``P = R (n_op e_op s^2 + (n_DRAM + (0.85 n_L2 + 0.20 n_L1) / 1.52 s^2) e_DRAM) +
floor (q + (1 - q) s)`` with ``s = f / f_ref`` and ``q`` the constant share. The rate ``R`` is
warpspeed's prediction of the benchmark (:mod:`warpspeed.power.benchmark`) at the run's clock.
The three unknowns are found by bounded linear least squares of the relative errors
(``scipy.optimize.lsq_linear``, unknowns >= 0).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np
from scipy.optimize import lsq_linear

from warpspeed.errors import WarpspeedError
from warpspeed.power.benchmark import BLOCK_THREADS, roofline_benchmark
from warpspeed.power.model import SECTOR_BYTES, activity, rate_at_clock

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device

#: Volta (Quadro GV100, 80 SMs) anchors of AccelWattch, watts and joules (see the module docstring).
VOLTA_CONSTANT_W = 32.32522272
VOLTA_STATIC_FIRST_W = 18.6179906  # int+FP category, first lane
VOLTA_STATIC_ADD_W = 0.645228013  # int+FP category, each further lane
VOLTA_IDLE_SM_W = 0.28279166
VOLTA_SMS = 80
VOLTA_DRAM_SECTOR_J = 1.52e-9
VOLTA_L2_SECTOR_J = 0.85e-9
VOLTA_L1_SECTOR_J = 0.20e-9
#: Lanes per warp.
WARP_LANES = 32
#: Weight of the row tying the static : constant split to Volta's (weak: 1 % of one run's weight).
RIDGE_WEIGHT = 0.01
#: Voltage floors tried (supply voltage relative to the reference clock's): 0 (voltage follows the
#: clock all the way) and 0.50 ... 1.00 in steps of 0.025.
V_MIN_CANDIDATES = (0.0, *np.round(np.arange(0.5, 1.0001, 0.025), 3))
#: Columns a measurement CSV must have.
REQUIRED_COLUMNS = ("its", "clock_mhz", "watts")


@dataclass(frozen=True)
class Run:
    """One measured run: inner-loop FMAs, SM clock (MHz), board power (W) and, when measured, the
    achieved GFLOP/s (then the run's rate is the measured one, else warpspeed's prediction)."""

    its: int
    clock_mhz: float
    watts: float
    gflop_s: float | None = None


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
    try:
        lines = [line for line in p.read_text().splitlines() if line and not line.startswith("#")]
    except OSError as exc:
        raise WarpspeedError(f"cannot read {p}: {exc.strerror}") from None
    reader = csv.DictReader(lines)
    missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise WarpspeedError(f"{p}: missing column(s) {', '.join(missing)}; need {', '.join(REQUIRED_COLUMNS)}")
    runs = []
    for n, row in enumerate(reader, 2):
        try:
            gflop = float(row["gflop_s"]) if row.get("gflop_s") else None
            runs.append(Run(int(row["its"]), float(row["clock_mhz"]), float(row["watts"]), gflop))
        except (TypeError, ValueError):
            raise WarpspeedError(f"{p}: row {n} is not numeric in its, clock_mhz, watts") from None
    if len(runs) < 3:
        raise WarpspeedError(f"{p}: {len(runs)} runs; the fit needs at least 3")
    return runs


def _constant_share() -> float:
    static = VOLTA_STATIC_FIRST_W + (WARP_LANES - 1) * VOLTA_STATIC_ADD_W
    return VOLTA_CONSTANT_W / (VOLTA_CONSTANT_W + static)


def _predicted(device: "Device", its_values) -> dict[int, tuple]:
    """Per inner-loop length: the benchmark's activity, predicted rate and roofline limits."""
    from warpspeed.predict import Predictor

    out = {}
    for its in sorted(set(its_values)):
        p = Predictor(roofline_benchmark(its), device).predict((BLOCK_THREADS, 1, 1))
        out[its] = (activity(p.trace()), p.lups_per_s, dict(p.roofline.limits))
    return out


def design(device: "Device", runs: Sequence[Run], v_min_rel: float = 0.0, measured_rate: bool = True,
           predicted: dict[int, tuple] | None = None) -> np.ndarray:
    """The runs' columns ``[lane ops/s, weighted DRAM sectors/s, static factor s, 1]`` (see the module docstring)."""
    cache = predicted if predicted is not None else _predicted(device, (r.its for r in runs))
    rows = []
    for run in runs:
        act, rate, limits = cache[run.its]
        if measured_rate and run.gflop_s is not None:
            r = run.gflop_s * 1e9 / roofline_benchmark(run.its).flops.flops
        else:
            r = rate_at_clock(rate, limits, run.clock_mhz, device.clock_mhz)
        s = max(run.clock_mhz / (device.clock_mhz), v_min_rel)
        cached = (VOLTA_L2_SECTOR_J * act.l2_sectors + VOLTA_L1_SECTOR_J * act.l1_sectors) / VOLTA_DRAM_SECTOR_J
        rows.append([r * act.lane_ops * s * s, r * (act.dram_sectors + cached * s * s), s, 1.0])
    return np.array(rows)


def _solve(a: np.ndarray, watts: np.ndarray):
    """Relative least squares, plus one weak row tying the static : constant split to Volta's
    (it decides the split only when the runs cannot: all at one clock)."""
    q = _constant_share()
    tie = RIDGE_WEIGHT * np.array([0.0, 0.0, q, -(1 - q)]) / np.mean(watts)
    a_w = np.vstack([a / watts[:, None], tie])
    b_w = np.concatenate([np.ones(len(watts)), [0.0]])
    return lsq_linear(a_w, b_w, bounds=(0.0, np.inf))


def fit_family(device: "Device", runs: Sequence[Run], source: str) -> FitResult:
    """Fit ``lane_op_j``, ``dram_sector_j``, the floor and the voltage floor ``v_min_rel`` of
    ``device``'s family to ``runs`` (the voltage floor by a scan of :data:`V_MIN_CANDIDATES`, the
    rest by least squares for each)."""
    watts = np.array([r.watts for r in runs])
    predicted = _predicted(device, (r.its for r in runs))
    best = None
    for v_min in V_MIN_CANDIDATES:
        a = design(device, runs, v_min, predicted=predicted)
        solution = _solve(a, watts)
        if best is None or solution.cost < best[2].cost - 1e-12:
            best = (v_min, a, solution)
    v_min, a, solution = best
    e_op, e_dram, static, constant = (float(x) for x in solution.x)
    errors = tuple(float(e) for e in (a @ solution.x - watts) / watts)
    volta_static = VOLTA_STATIC_FIRST_W + (WARP_LANES - 1) * VOLTA_STATIC_ADD_W
    family = {
        "dynamic": {"lane_op_j": e_op, "dram_sector_j": e_dram,
                    "l2_sector_j": e_dram * VOLTA_L2_SECTOR_J / VOLTA_DRAM_SECTOR_J,
                    "l1_sector_j": e_dram * VOLTA_L1_SECTOR_J / VOLTA_DRAM_SECTOR_J},
        "static": {"first_lane_w": static * VOLTA_STATIC_FIRST_W / volta_static,
                   "add_lane_w": static * VOLTA_STATIC_ADD_W / volta_static,
                   "idle_sm_w": VOLTA_IDLE_SM_W * static / volta_static * VOLTA_SMS / device.sms,
                   "constant_w": constant},
        "clock": {"v_min_rel": v_min},
        "provenance": {"status": "calibrated", "device": device.name, "data": source, "runs": len(runs),
                       "method": "bounded linear least squares of relative errors (scipy.optimize.lsq_linear); "
                                 "lane_op_j, dram_sector_j and the floor fitted, the rest tied to AccelWattch's "
                                 "Volta values (warpspeed.power.calibrate)",
                       "mape": float(np.mean(np.abs(errors))), "max_error": float(np.max(np.abs(errors))),
                       "sector_bytes": SECTOR_BYTES},
    }
    return FitResult(family, errors, tuple(runs))


def write_family(result: FitResult, path: str | Path, name: str) -> Path:
    """Write the fitted family file (TOML) with a header naming what it was fitted to."""
    import tomli_w

    p = Path(path)
    prov = result.family["provenance"]
    header = (f"# Power-model family {name!r}: fitted by `warpspeed power-fit` to {prov['runs']} runs of {prov['data']}\n"
              f"# on {prov['device']}; mean |error| {100 * result.mape:.2f} %, largest {100 * result.max_error:.2f} %.\n"
              "# Energies in joules, powers in watts; see warpspeed.power.params for the keys.\n")
    p.write_text(header + tomli_w.dumps(result.family))
    return p
