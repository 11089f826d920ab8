"""The power model: board power, energy per lattice update, clock scaling, the power limit.

:func:`estimate` is what ``warpspeed predict --json`` (``power``), ``rank --objective energy|edp``
and ``warpspeed dvfs`` call: the configuration's trace (:meth:`warpspeed.predict.Prediction.trace`)
gives the activity, a time model the rate, the device's ``[power]`` table and family file the
energies (:mod:`warpspeed.power.params`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from warpspeed.hardware.clock import check_clock_mhz
from importlib import import_module

#: Where each public name is defined; imported on first use (PEP 562), so that a module of this
#: package (the parameter files the calibration reports) loads without the model.
_EXPORTS = {
    **dict.fromkeys(("Activity", "PowerBreakdown", "activity", "board_power", "power_at", "rate_at_clock",
                     "static_category", "static_power"), "warpspeed.power.model"),
    **dict.fromkeys(("PowerParameterError", "PowerParams", "power_params"), "warpspeed.power.params"),
}

if TYPE_CHECKING:
    from warpspeed.models import EnergyEstimate, ModelEstimate
    from warpspeed.power.model import Activity, PowerBreakdown
    from warpspeed.power.params import PowerParams
    from warpspeed.predict import Prediction


def breakdown(prediction: "Prediction", time: "ModelEstimate", clock_mhz: float | None = None,
              params: PowerParams | None = None, act: Activity | None = None) -> PowerBreakdown:
    """Watts by component for ``prediction`` at the rate ``time`` predicts, at ``clock_mhz``
    (default: the device's clock; else a clock in :func:`warpspeed.hardware.clock.clock_range_mhz`),
    throttled to the board's power limit."""
    from warpspeed.power.model import activity, board_power
    from warpspeed.power.params import power_params

    if clock_mhz is not None:
        clock_mhz = check_clock_mhz(prediction.device_spec, clock_mhz)
    params = params if params is not None else power_params(prediction.device_spec)
    act = act if act is not None else activity(prediction.model_trace)
    return board_power(act, params, time.lups_per_s, prediction.roofline.limits,
                       prediction.device_spec.clock_mhz, clock_mhz)


def estimate(prediction: "Prediction", time: "ModelEstimate", clock_mhz: float | None = None) -> "EnergyEstimate":
    """The power model's :class:`~warpspeed.models.EnergyEstimate` of ``prediction``."""
    from warpspeed.models import EnergyEstimate
    from warpspeed.power.model import activity
    from warpspeed.power.params import power_params

    params = power_params(prediction.device_spec)
    act = activity(prediction.model_trace)
    b = breakdown(prediction, time, clock_mhz, params, act)
    return EnergyEstimate(b.watts, b.clock_mhz, b.lups_per_s, b.lups_per_joule, b.as_dict(params, act.category))


__all__ = ["Activity", "PowerBreakdown", "PowerParameterError", "PowerParams", "activity", "board_power",
           "breakdown", "estimate", "power_at", "power_params", "rate_at_clock", "static_category", "static_power"]


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
