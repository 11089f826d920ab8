"""Clock sweeps: power, rate and energy per lattice update against the SM clock, and the
energy-optimal clock as a range over the voltage floors the family's data cannot tell apart.

Below the clock at which the supply voltage reaches its floor, lowering the clock no longer lowers
the voltage, so static energy per update grows while dynamic energy stays: the clock of the most
lups per joule depends on the floor. Where a family's floor is assumed (``v_min_status``,
:mod:`warpspeed.power.params`), :func:`optimum` reports the optimum at every floor of its plausible
range (:data:`FLOOR_STEPS` floors) and gives the span of the per-floor optima, never one point.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from warpspeed.hardware.clock import MIN_CLOCK_FRACTION
from warpspeed.power.board import Activity, PowerBreakdown, activity, board_power
from warpspeed.power.params import PowerParams, power_params
from warpspeed.trace.build import build_trace
from warpspeed.units import MICRO, NANO

if TYPE_CHECKING:
    from warpspeed.model_protocol import ModelEstimate
    from warpspeed.prediction import Prediction

#: Clocks of a default sweep, relative to the device's clock: 30 % to 100 % in 15 steps.
DEFAULT_FRACTIONS = tuple(np.round(np.linspace(0.3, 1.0, 15), 4))
#: Clocks searched for the optimum, relative to the device's clock: 10 % (the lowest clock the
#: model accepts, :data:`warpspeed.hardware.clock.MIN_CLOCK_FRACTION`) to 100 % in steps of 0.5 %.
OPTIMUM_FRACTIONS = tuple(np.round(np.linspace(MIN_CLOCK_FRACTION, 1.0, 181), 4))
#: Relative difference in lups per joule below which two clocks count as equally good.
TIE = 1e-9
#: Voltage floors evaluated across an assumed floor range (its ends included).
FLOOR_STEPS = 13


@dataclass(frozen=True)
class FloorOptimum:
    """The most lups per joule at one voltage floor ``v_min_rel``: ``clock_mhz``, the (low, high)
    clocks that reach it (a plateau where neither power nor rate changes with the clock, else
    low = high), and the point at the high end (its clock may be a throttled one)."""

    v_min_rel: float
    clock_mhz: tuple[float, float]
    point: PowerBreakdown


@dataclass(frozen=True)
class Optimum:
    """The energy-optimal clock: ``clock_mhz`` (low, high), every clock optimal at some floor, and
    ``lups_per_joule`` (low, high) over the voltage floors ``v_min_rel`` (low, high); ``v_min_status`` says how the floor is known
    (``assumed``: the span of plausible floors; ``fitted`` or ``given``: one floor, low = high)."""

    clock_mhz: tuple[float, float]
    lups_per_joule: tuple[float, float]
    v_min_rel: tuple[float, float]
    v_min_status: str
    per_floor: tuple[FloorOptimum, ...]

    def as_dict(self) -> dict:
        return {"clock_mhz": list(self.clock_mhz), "lups_per_joule": list(self.lups_per_joule),
                "v_min_rel": list(self.v_min_rel), "v_min_status": self.v_min_status,
                "per_floor": [{"v_min_rel": f.v_min_rel, "clock_mhz": list(f.clock_mhz),
                               "lups_per_joule": f.point.lups_per_joule, "watts": f.point.watts,
                               "lups_per_s": f.point.lups_per_s} for f in self.per_floor]}


@dataclass(frozen=True)
class ClockSweep:
    """Power breakdowns at increasing clocks at the family's voltage floor ``v_min_rel``, and the
    optimum.

    ``requested_mhz[i]`` is the clock asked for at point ``i``; ``points[i].clock_mhz`` is the
    clock it runs at, lower where the board power limit throttles it."""

    points: tuple[PowerBreakdown, ...]
    requested_mhz: tuple[float, ...]
    optimum: Optimum
    v_min_rel: float = 0.0


def best_points(points: Sequence[PowerBreakdown]) -> list[PowerBreakdown]:
    """The points with the most lups per joule (one voltage floor's optimum), equal within
    :data:`TIE` (a plateau: below the floor's clock, with the rate unchanged, power and rate both
    stay), in increasing clock order."""
    most = max(p.lups_per_joule for p in points)
    return sorted((p for p in points if p.lups_per_joule >= most * (1 - TIE)), key=lambda b: b.clock_mhz)


def floors(params: PowerParams) -> tuple[float, ...]:
    """The voltage floors the optimum is evaluated at: :data:`FLOOR_STEPS` across an assumed range,
    else the family's one floor."""
    low, high = params.v_min_bounds
    if params.vf_table or low == high:
        return (params.v_min_rel if params.vf_table else low,)
    return tuple(float(v) for v in np.linspace(low, high, FLOOR_STEPS))


def optimum(act: Activity, params: PowerParams, rate: float, limits: Mapping[str, float], base_mhz: float,
            clocks_mhz: Sequence[float] | None = None) -> Optimum:
    """The clock of the most lups per joule at every floor of :func:`floors` over ``clocks_mhz``
    (default :data:`OPTIMUM_FRACTIONS` of ``base_mhz``; ``rate`` in lups/s at ``base_mhz``), and the
    span of the per-floor optima."""
    clocks = clocks_mhz if clocks_mhz is not None else [base_mhz * f for f in OPTIMUM_FRACTIONS]
    per_floor = []
    for v in floors(params):
        p = replace(params, v_min_rel=v)
        best = best_points([board_power(act, p, rate, limits, base_mhz, f) for f in clocks])
        per_floor.append(FloorOptimum(v, (best[0].clock_mhz, best[-1].clock_mhz), best[-1]))
    eff = [o.point.lups_per_joule for o in per_floor]
    status = "given" if params.vf_table else params.v_min_status
    return Optimum((min(o.clock_mhz[0] for o in per_floor), max(o.clock_mhz[1] for o in per_floor)), (min(eff), max(eff)), (per_floor[0].v_min_rel, per_floor[-1].v_min_rel),
                   status, tuple(per_floor))


def sweep(prediction: "Prediction", time: "ModelEstimate", clocks_mhz: Sequence[float] | None = None) -> ClockSweep:
    """The configuration at every clock of ``clocks_mhz`` (default: :data:`DEFAULT_FRACTIONS` of
    the device's clock) and its :func:`optimum`."""
    params = power_params(prediction.device)
    base = prediction.device.clock_mhz
    clocks = clocks_mhz if clocks_mhz is not None else [base * f for f in DEFAULT_FRACTIONS]
    act = activity(build_trace(prediction))
    limits = prediction.roofline.limits
    return ClockSweep(tuple(board_power(act, params, time.lups_per_s, limits, base, f) for f in clocks),
                      tuple(float(f) for f in clocks), optimum(act, params, time.lups_per_s, limits, base),
                      params.v_min_rel)


def sweep_figure(curves: dict[str, ClockSweep], title: str = ""):
    """Lups/s and lups/J against the clock, one line per configuration, the optimum's clock range
    shaded."""
    from warpspeed.files.figure import new_figure

    fig = new_figure(7.0, 6.0)
    top, bottom = fig.add_subplot(2, 1, 1), fig.add_subplot(2, 1, 2)
    for label, s in curves.items():
        f = [p.clock_mhz for p in s.points]
        line, = top.plot(f, [p.lups_per_s * NANO for p in s.points], marker="o", ms=3, label=label)
        bottom.plot(f, [p.lups_per_joule * MICRO for p in s.points], marker="o", ms=3, color=line.get_color())
        low, high = s.optimum.clock_mhz
        bottom.axvspan(low, max(high, low + 1.0), color=line.get_color(), alpha=0.15)
    top.set_ylabel("Glup/s")
    bottom.set_ylabel("Mlup/J (shaded: optimal clocks)")
    bottom.set_xlabel("SM clock, MHz")
    top.set_title(title, fontsize=9)
    top.legend(fontsize=8)
    return fig
