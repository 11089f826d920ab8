"""Clock sweeps: power, rate and energy per lattice update against the SM clock."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from warpspeed.power.model import PowerBreakdown

if TYPE_CHECKING:
    from warpspeed.models import ModelEstimate
    from warpspeed.predict import Prediction

#: Clocks of a default sweep, relative to the device's clock: 30 % to 100 % in 15 steps.
DEFAULT_FRACTIONS = tuple(np.round(np.linspace(0.3, 1.0, 15), 4))


@dataclass(frozen=True)
class ClockSweep:
    """Power breakdowns at increasing clocks and the clock of the most lups per joule.

    ``requested_mhz[i]`` is the clock asked for at point ``i``; ``points[i].clock_mhz`` is the
    clock it runs at, lower where the board power limit throttles it."""

    points: tuple[PowerBreakdown, ...]
    requested_mhz: tuple[float, ...]

    @property
    def best(self) -> PowerBreakdown:
        return max(self.points, key=lambda b: b.lups_per_joule)


def sweep(prediction: "Prediction", time: "ModelEstimate", clocks_mhz: Sequence[float] | None = None) -> ClockSweep:
    """The configuration at every clock of ``clocks_mhz`` (default: :data:`DEFAULT_FRACTIONS` of
    the device's clock)."""
    from warpspeed.power import activity, board_power, power_params

    params = power_params(prediction.device_spec)
    base = prediction.device_spec.clock_mhz
    clocks = clocks_mhz if clocks_mhz is not None else [base * f for f in DEFAULT_FRACTIONS]
    act = activity(prediction.model_trace)
    return ClockSweep(tuple(board_power(act, params, time.lups_per_s, prediction.roofline.limits, base, f)
                            for f in clocks), tuple(float(f) for f in clocks))


def sweep_figure(curves: dict[str, ClockSweep], title: str = ""):
    """Lups/s and lups/J against the clock, one line per configuration, the best clock marked."""
    from warpspeed.plots import new_figure

    fig = new_figure(7.0, 6.0)
    top, bottom = fig.add_subplot(2, 1, 1), fig.add_subplot(2, 1, 2)
    for label, s in curves.items():
        f = [p.clock_mhz for p in s.points]
        line, = top.plot(f, [p.lups_per_s * 1e-9 for p in s.points], marker="o", ms=3, label=label)
        bottom.plot(f, [p.lups_per_joule * 1e-6 for p in s.points], marker="o", ms=3, color=line.get_color())
        b = s.best
        bottom.plot([b.clock_mhz], [b.lups_per_joule * 1e-6], marker="*", ms=12, color=line.get_color())
    top.set_ylabel("Glup/s")
    bottom.set_ylabel("Mlup/J (star: most per joule)")
    bottom.set_xlabel("SM clock, MHz")
    top.set_title(title, fontsize=9)
    top.legend(fontsize=8)
    return fig
