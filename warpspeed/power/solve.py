"""AccelWattch's calibration equations for users with per-unit measurements.

The built-in families are fitted to public board-power runs of one kernel type
(:mod:`warpspeed.calibration.power`). A user who can run microbenchmarks on a GPU can determine
more: Kandiah et al., "AccelWattch: A Power Modeling Framework for Modern GPUs", MICRO 2021,
eqs 6-8 (idle-SM power from runs on all and on fewer SMs) and eqs 13-14 (energies per activity
from many microbenchmarks, with orderings between them).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from warpspeed.errors import WarpspeedError

#: Solver tolerance of the constrained fit (on the scaled unknowns, which are of order 1).
TOLERANCE = 1e-12


def idle_sm_power(constant_w: float, runs: Sequence[tuple[float, int, float, int]]) -> float:
    """Power of one idle SM (W), eqs 6-8: per benchmark ``(watts with all N SMs, N, watts with
    n active SMs, n)``, the power per active SM is ``(P_N - P_const) / N``; the idle SMs of the
    partial run draw ``P_n - P_const - n P_active``, per idle SM divided by ``N - n``; the result
    is the geometric mean over the benchmarks."""
    per_idle = []
    for p_all, sms, p_part, active in runs:
        if not 0 <= active < sms:
            raise WarpspeedError(f"active SMs must be fewer than all {sms} SMs and not negative, got {active}")
        per_active = (p_all - constant_w) / sms
        idle = (p_part - constant_w - per_active * active) / (sms - active)
        if idle <= 0:
            raise WarpspeedError(f"run ({p_all} W on {sms} SMs, {p_part} W on {active}) gives no idle power "
                                 f"({idle:.3g} W per SM): check the constant power")
        per_idle.append(idle)
    if not per_idle:
        raise WarpspeedError("the idle-SM fit needs at least one benchmark")
    from scipy.stats import gmean  # imported by the fit only: predictions do not need scipy

    return float(gmean(per_idle))


def constrained_energies(activity_per_s: np.ndarray, dynamic_w: np.ndarray,
                         order: Sequence[tuple[int, int]] = (), relative: bool = False) -> np.ndarray:
    """Energies per activity (J), eqs 13-14: least squares of ``activity_per_s @ e = dynamic_w``
    (one row per benchmark, one column per component, the dynamic part of the measured power in W),
    ``e >= 0``, with ``e[a] <= e[b]`` for every ``(a, b)`` of ``order``; ``relative`` weights each
    row by ``1 / dynamic_w`` (relative errors). Solved with ``scipy.optimize.minimize``
    (``trust-constr``) on unknowns scaled to order 1."""
    a = np.asarray(activity_per_s, dtype=float)
    b = np.asarray(dynamic_w, dtype=float)
    if a.ndim != 2 or b.shape != (a.shape[0],):
        raise WarpspeedError(f"activity must be benchmarks x components and power one value per benchmark, "
                             f"got {a.shape} and {b.shape}")
    scale = np.max(np.abs(a), axis=0)
    if np.any(scale == 0):
        raise WarpspeedError("every component needs activity in at least one benchmark")
    weight = 1.0 / b if relative else np.ones_like(b)
    from scipy.optimize import LinearConstraint, minimize  # imported by the fit only

    aw, bw = (a / scale) * weight[:, None], b * weight

    def cost(y: np.ndarray) -> float:
        r = aw @ y - bw
        return float(r @ r)

    def grad(y: np.ndarray) -> np.ndarray:
        return 2.0 * aw.T @ (aw @ y - bw)

    constraints = []
    if order:
        g = np.zeros((len(order), a.shape[1]))
        for row, (lo, hi) in enumerate(order):
            g[row, lo], g[row, hi] = 1.0 / scale[lo], -1.0 / scale[hi]
        constraints.append(LinearConstraint(g, -np.inf, 0.0))
    start = np.linalg.lstsq(aw, bw, rcond=None)[0].clip(min=0.0)
    result = minimize(cost, start, jac=grad, method="trust-constr", constraints=constraints,
                      bounds=[(0.0, np.inf)] * a.shape[1], options={"gtol": TOLERANCE, "xtol": TOLERANCE})
    return result.x / scale
