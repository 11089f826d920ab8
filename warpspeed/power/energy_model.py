"""The power model as a ranking objective: board power and lattice updates per joule of one
configuration at the rate a time model predicts (:class:`EnergyModel`).

The configuration's trace (:mod:`warpspeed.trace`) gives the activity, a time model the rate,
the device's ``[power]`` table and family file the energies (:mod:`warpspeed.power.params`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from warpspeed.model_protocol import EnergyEstimate, ModelEstimate
from warpspeed.hardware.clock import check_clock_mhz

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device
    from warpspeed.power.board import Activity, PowerBreakdown
    from warpspeed.power.params import PowerParams
    from warpspeed.prediction import Prediction
    from warpspeed.trace.document import Trace


def breakdown(prediction: "Prediction", time: ModelEstimate, clock_mhz: float | None = None,
              params: "PowerParams | None" = None, act: "Activity | None" = None,
              trace: "Trace | None" = None) -> "PowerBreakdown":
    """Watts by component for ``prediction`` at the rate ``time`` predicts, at ``clock_mhz``
    (default: the device's clock; else a clock in :func:`warpspeed.hardware.clock.clock_range_mhz`),
    throttled to the board's power limit (``trace``: the configuration's, when already built)."""
    from warpspeed.power.board import activity, board_power
    from warpspeed.power.params import power_params
    from warpspeed.trace.build import build_trace

    if clock_mhz is not None:
        clock_mhz = check_clock_mhz(prediction.device, clock_mhz)
    params = params if params is not None else power_params(prediction.device)
    act = act if act is not None else activity(trace if trace is not None else build_trace(prediction))
    return board_power(act, params, time.lups_per_s, prediction.roofline.limits,
                       prediction.device.clock_mhz, clock_mhz)


class EnergyModel:
    """The power model (``energy``): what the objectives ``energy`` and ``edp`` rank by, and a
    study's ``energy`` columns."""

    name = "energy"

    def estimate(self, prediction: "Prediction", time: ModelEstimate, clock_mhz: float | None = None,
                 trace: "Trace | None" = None) -> EnergyEstimate:
        """The :class:`~warpspeed.model_protocol.EnergyEstimate` of ``prediction`` at the rate ``time``
        predicts and the SM clock ``clock_mhz`` (default: the device's)."""
        from warpspeed.power.board import activity
        from warpspeed.power.params import power_params
        from warpspeed.trace.build import build_trace

        params = power_params(prediction.device)
        act = activity(trace if trace is not None else build_trace(prediction))
        b = breakdown(prediction, time, clock_mhz, params, act)
        return EnergyEstimate(b.watts, b.clock_mhz, b.lups_per_s, b.lups_per_joule, b.as_dict(params, act.category))

    def require_parameters(self, device: "Device") -> None:
        """A one-line error when ``device`` has no power parameters (``[power]`` and its family)."""
        from warpspeed.power.params import power_params

        power_params(device)

    def __repr__(self) -> str:
        return f"<power model {self.name!r}>"


#: The power model.
ENERGY = EnergyModel()
