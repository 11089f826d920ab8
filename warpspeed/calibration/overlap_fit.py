"""Fit the overlap model's two fitted constants across kernels, and judge them by leaving one out.

The overlap model (:mod:`warpspeed.overlap`) has two constants that no document gives: the exponent
``p`` of the smooth maximum of the first-level and DRAM times and the L1 miss stage's request rate.
Everything else it combines is computed once per configuration
(:class:`~warpspeed.overlap.combine.OverlapResult`), so a fit re-combines the stored components
for each candidate pair (:func:`~warpspeed.overlap.combine.combine`) without predicting again.

The criterion is the mean over kernels of each kernel's mean absolute percentage error (MAPE) of
the rates, so a kernel with many configurations does not outweigh one with few. The candidates are
a grid (:data:`EXPONENTS` x :data:`REQUEST_RATES`): the criterion is flat near its minimum
(within 0.3 points over a step of the grid), so a finer search would report digits the data do not
support.

:func:`leave_one_kernel_out` gives, per kernel, the error with the constants fitted on all kernels
(in-sample) and with the constants fitted on the other kernels alone (left out): how well the
constants transfer to a kernel they were not fitted on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence, TypeVar

from warpspeed.errors import WarpspeedError
from warpspeed.overlap.combine import OverlapResult, combine

#: A grid point of a fit (a constant, or a tuple of constants).
K = TypeVar("K")

#: Candidate exponents of the smooth maximum (p -> infinity: the roofline's perfect overlap; 1: none).
EXPONENTS = (2.0, 2.5, 3.0, 3.5, 4.0, 5.0)
#: Candidate L1 -> L2 requests per cycle and SM.
REQUEST_RATES = (0.45, 0.5, 0.55, 0.62, 0.7, 0.8, 0.9)

#: One kernel's configurations: the components and the measured rate (lattice updates per second).
Samples = Sequence[tuple[OverlapResult, float]]


def mape_percent(samples: Samples, exponent: float, requests_per_cycle: float) -> float:
    """Mean absolute percentage error of the rates of ``samples`` with these constants."""
    if not samples:
        raise WarpspeedError("no configurations to compare")
    total = 0.0
    for components, measured in samples:
        seconds = combine(components, exponent, requests_per_cycle)[0]
        total += abs(1.0 / seconds / measured - 1.0)
    return 100.0 * total / len(samples)


@dataclass(frozen=True)
class OverlapFit:
    """The constants that minimise the mean of the kernels' MAPEs, and each kernel's MAPE with them."""

    exponent: float
    requests_per_cycle: float
    kernels: tuple[str, ...]
    mape_percent: Mapping[str, float]


def _grid(kernels: Mapping[str, Samples]) -> dict[tuple[float, float], dict[str, float]]:
    return {(p, r): {name: mape_percent(s, p, r) for name, s in kernels.items()}
            for p in EXPONENTS for r in REQUEST_RATES}


def least_mean(grid: Mapping[K, Mapping[str, float]], names: Sequence[str]) -> K:
    """The grid point whose MAPEs over ``names`` have the least mean (ties: the smallest point)."""
    return min(grid, key=lambda point: (sum(grid[point][n] for n in names) / len(names), point))


def fit_overlap(kernels: Mapping[str, Samples]) -> OverlapFit:
    """The grid point with the least mean per-kernel MAPE over ``kernels`` (at least two)."""
    if len(kernels) < 2:
        raise WarpspeedError(f"fitting the overlap constants needs at least two kernels, got {len(kernels)}")
    grid = _grid(kernels)
    p, r = least_mean(grid, list(kernels))
    return OverlapFit(p, r, tuple(kernels), dict(grid[(p, r)]))


@dataclass(frozen=True)
class LeftOut:
    """One kernel: its MAPE with the constants fitted on every kernel and on the others alone."""

    kernel: str
    in_sample_percent: float
    left_out_percent: float
    left_out_exponent: float
    left_out_requests_per_cycle: float


def leave_one_kernel_out(kernels: Mapping[str, Samples]) -> tuple[OverlapFit, tuple[LeftOut, ...]]:
    """The fit on all ``kernels`` (at least three) and, per kernel, the error left out."""
    if len(kernels) < 3:
        raise WarpspeedError(f"leaving one kernel out needs at least three kernels, got {len(kernels)}")
    grid = _grid(kernels)
    names = list(kernels)
    p, r = least_mean(grid, names)
    out = []
    for name in names:
        lp, lr = least_mean(grid, [n for n in names if n != name])
        out.append(LeftOut(name, grid[(p, r)][name], grid[(lp, lr)][name], lp, lr))
    return OverlapFit(p, r, tuple(names), dict(grid[(p, r)])), tuple(out)
