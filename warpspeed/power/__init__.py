"""The power model: board power, energy per lattice update, clock scaling, the power limit.

:data:`~warpspeed.power.energy_model.ENERGY` is what ``warpspeed predict --json`` (``power``),
``rank --objective energy|edp`` and ``warpspeed dvfs`` call: the configuration's trace
(:mod:`warpspeed.trace`) gives the activity, a time model the rate, the device's ``[power]``
table and family file the energies, its ``[device]`` power limit and reference clock the board (:mod:`warpspeed.power.params`).

The names below are imported on first use (PEP 562), so that a module of this package (the
parameter files the calibration reports) loads without the model.
"""

from __future__ import annotations

from warpspeed.lazy import lazy_exports


def _board():
    from warpspeed.power import board

    return board


def _params():
    from warpspeed.power import params

    return params


def _energy_model():
    from warpspeed.power import energy_model

    return energy_model


__getattr__, __dir__, __all__ = lazy_exports(globals(), {
    _board: ("Activity", "PowerBreakdown", "activity", "board_power", "power_at", "rate_at_clock", "static_category", "static_power"),
    _params: ("PowerParameterError", "PowerParams", "power_params"),
    _energy_model: ("ENERGY", "EnergyModel", "breakdown"),
})
