"""Fit the exponent with which the overlap model joins the SM's in-core time to the memory time,
and judge it by leaving one part out.

The overlap model (:func:`warpspeed.overlap.combine.combine`) takes
``(t_mem^r + t_SM^r)^(1/r)`` of the memory time ``t_mem`` (the smooth maximum of the first level
and DRAM) and the in-core time ``t_SM`` (:mod:`warpspeed.incore`). The kernel that moves the two
against each other is gpu-benches' gpu-roofline (D. Ernst, https://github.com/te42kyfo/gpu-benches,
``fits/data/public/gpu-roofline/<part>.csv``; :func:`warpspeed.power.benchmark.roofline_benchmark`):
a DRAM stream with a growing number of FMAs per element, whose time is the DRAM time at the start,
the in-core time at the end and both in between.

Every stored loop length of each part is one point (the median GFLOP/s over the node's GPUs,
converted to lattice updates per second with the description's flops per update), predicted at the
run's median measured SM clock: the clocked components (:data:`warpspeed.levels.CLOCKED_LIMITS`)
scale with the clock, DRAM does not. The A40 and L40 ran under their power cap, below the device
files' clocks, at the FP-heavy end; at the nominal clock that difference would enter the exponent.
The criterion is the mean over parts of each part's MAPE on the grid :data:`EXPONENTS`;
:func:`leave_one_part_out` gives each part's error with the exponent fitted on the others, and
with ``max`` (no overlap loss, ``r`` = infinity) for comparison.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from warpspeed.calibration.overlap_fit import least_mean
from warpspeed.errors import WarpspeedError
from warpspeed.levels import CLOCKED_LIMITS
from warpspeed.overlap.combine import OverlapResult, combine
from warpspeed.units import GIGA, KILO

#: Candidate exponents r (a grid of quarter steps; the criterion is flat within 0.1 point over one).
EXPONENTS = tuple(2.0 + 0.25 * i for i in range(33))
#: gpu-roofline parts and their built-in devices (the H200 file is held out).
PARTS = (("a100-40", "A100-SXM4-40GB"), ("a40", "A40"), ("l40", "L40"))

#: One part's loop lengths: (its, components at the measured clock, measured lups/s).
Points = Sequence[tuple[int, OverlapResult, float]]


def at_clock(c: OverlapResult, scale: float) -> OverlapResult:
    """``c`` with the SM clock multiplied by ``scale``: the clocked times divided by it, the SMs'
    cycles per second multiplied by it (first-level cycles), DRAM and dispatch unchanged."""
    further = tuple((k, v / scale if k in CLOCKED_LIMITS else v) for k, v in c.further)
    return dataclasses.replace(c, fp=c.fp / scale, l2=c.l2 / scale, further=further, sm_hz=c.sm_hz * scale)


def part_points(part: str, device_name: str) -> list[tuple[int, OverlapResult, float]]:
    """Every loop length of ``part``'s stored gpu-roofline runs (module docstring)."""
    from warpspeed.calibration.power import read_runs
    from warpspeed.files.stored import stored_file
    from warpspeed.hardware.device import load_device
    from warpspeed.overlap.combine import overlap_model
    from warpspeed.overlap.params import overlap_params
    from warpspeed.power.benchmark import BLOCK_THREADS, roofline_benchmark
    from warpspeed.predict import Predictor

    device = load_device(device_name)
    params = overlap_params(device)
    runs = read_runs(stored_file("public", "gpu-roofline", f"{part}.csv"))
    out = []
    for its in sorted({int(i) for i in runs.its}):
        rows = runs.its == its
        kernel = roofline_benchmark(its)
        lups = float(np.median(runs.gflop_s[rows])) * GIGA / kernel.flops.flops
        clock_ghz = float(np.median(runs.clock_mhz[rows])) / KILO
        c = overlap_model(Predictor(kernel, device).predict((BLOCK_THREADS, 1, 1)), params)
        out.append((its, at_clock(c, clock_ghz / device.clock_ghz), lups))
    return out


def errors_percent(points: Points, exponent: float, core_exponent: float, requests_per_cycle: float) -> list[float]:
    """``100 (predicted - measured) / measured`` per point with the core exponent ``core_exponent``
    (``math.inf``: the plain maximum)."""
    if not points:
        raise WarpspeedError("no loop lengths to compare")
    return [100.0 * (1.0 / combine(c, exponent, requests_per_cycle, core_exponent)[0] / m - 1.0) for _, c, m in points]


def mape_percent(points: Points, exponent: float, core_exponent: float, requests_per_cycle: float) -> float:
    """Mean absolute percentage error of :func:`errors_percent`."""
    e = errors_percent(points, exponent, core_exponent, requests_per_cycle)
    return sum(abs(x) for x in e) / len(e)


@dataclass(frozen=True)
class PartLeftOut:
    """One part: its MAPE with the plain maximum, in-sample and with the exponent of the others."""

    part: str
    max_percent: float
    in_sample_percent: float
    left_out_percent: float
    left_out_exponent: float


@dataclass(frozen=True)
class CoreOverlapFit:
    """The exponent with the least mean per-part MAPE, and each part left out."""

    exponent: float
    parts: tuple[PartLeftOut, ...]


def leave_one_part_out(points: Mapping[str, Points], exponent: float, requests_per_cycle: float) -> CoreOverlapFit:
    """The fit over every part of ``points`` (at least three) and each part left out; ``exponent``
    and ``requests_per_cycle`` are the overlap model's other two constants."""
    if len(points) < 3:
        raise WarpspeedError(f"leaving one part out needs at least three parts, got {len(points)}")
    grid = {r: {n: mape_percent(p, exponent, r, requests_per_cycle) for n, p in points.items()} for r in EXPONENTS}
    names = list(points)
    r_all = least_mean(grid, names)
    out = []
    for name in names:
        r = least_mean(grid, [n for n in names if n != name])
        out.append(PartLeftOut(name, mape_percent(points[name], exponent, math.inf, requests_per_cycle),
                               grid[r_all][name], grid[r][name], r))
    return CoreOverlapFit(r_all, tuple(out))


def fit_stored() -> CoreOverlapFit:
    """:func:`leave_one_part_out` on the stored runs of :data:`PARTS` with the shipped overlap
    constants (they are the same on the three parts: no ``[overlap]`` table)."""
    from warpspeed.hardware.device import load_device
    from warpspeed.overlap.params import overlap_params

    params = overlap_params(load_device(PARTS[0][1]))
    points = {name: part_points(part, name) for part, name in PARTS}
    return leave_one_part_out(points, params.overlap_exponent, params.miss_requests_per_cycle)
