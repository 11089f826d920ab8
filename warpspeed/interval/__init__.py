"""The AMALI interval model: kernel cycles as a CPI stack of Nsight Compute stall reasons.

:data:`~warpspeed.interval.time_model.INTERVAL` is the time model ``warpspeed predict/rank
--model interval`` run: it builds the configuration's trace (:mod:`warpspeed.trace`) and runs
:func:`~warpspeed.interval.cpi_stack.interval_model` on it with the device's ``[interval]``
parameters (:func:`~warpspeed.interval.params.interval_params`).

The names below are imported on first use (PEP 562), so that a module of this package (the
launch-cost constants the calibration reports) loads without the model.
"""

from __future__ import annotations

from warpspeed.lazy import lazy_exports


def _cpi_stack():
    from warpspeed.interval import cpi_stack

    return cpi_stack


def _params():
    from warpspeed.interval import params

    return params


def _time_model():
    from warpspeed.interval import time_model

    return time_model


__getattr__, __dir__, __all__ = lazy_exports(globals(), {
    _cpi_stack: ("STACK_KEYS", "IntervalResult", "interval_model"),
    _params: ("IntervalParameterError", "IntervalParams", "interval_params"),
    _time_model: ("INTERVAL", "IntervalModel"),
})
