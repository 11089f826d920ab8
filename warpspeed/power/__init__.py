"""The power model: board power, energy per lattice update, clock scaling, the power limit.

:data:`~warpspeed.power.energy_model.ENERGY` is what ``warpspeed predict --json`` (``power``),
``rank --objective energy|edp`` and ``warpspeed dvfs`` call: the configuration's trace
(:mod:`warpspeed.trace`) gives the activity, a time model the rate, the device's ``[power]``
table and family file the energies (:mod:`warpspeed.power.params`).

The names below are imported on first use (PEP 562), so that a module of this package (the
parameter files the calibration reports) loads without the model.
"""

from __future__ import annotations

_MODEL_NAMES = frozenset(("Activity", "PowerBreakdown", "activity", "board_power", "power_at", "rate_at_clock",
                          "static_category", "static_power"))
_PARAMS_NAMES = frozenset(("PowerParameterError", "PowerParams", "power_params"))
_ENERGY_NAMES = frozenset(("ENERGY", "EnergyModel", "breakdown"))

__all__ = sorted(_MODEL_NAMES | _PARAMS_NAMES | _ENERGY_NAMES)


def __getattr__(name: str):
    if name in _MODEL_NAMES:
        from warpspeed.power import model as module
    elif name in _PARAMS_NAMES:
        from warpspeed.power import params as module
    elif name in _ENERGY_NAMES:
        from warpspeed.power import energy_model as module
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
