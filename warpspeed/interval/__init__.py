"""The AMALI interval model: kernel cycles as a CPI stack of Nsight Compute stall reasons.

:data:`~warpspeed.interval.time_model.INTERVAL` is the time model ``warpspeed predict/rank
--model interval`` run: it builds the configuration's trace (:mod:`warpspeed.trace`) and runs
:func:`~warpspeed.interval.model.interval_model` on it with the device's ``[interval]``
parameters (:func:`~warpspeed.interval.params.interval_params`).

The names below are imported on first use (PEP 562), so that a module of this package (the
launch-cost constants the calibration reports) loads without the model.
"""

from __future__ import annotations

_MODEL_NAMES = frozenset(("STACK_KEYS", "IntervalResult", "interval_model"))
_PARAMS_NAMES = frozenset(("IntervalParameterError", "IntervalParams", "interval_params"))
_TIME_MODEL_NAMES = frozenset(("INTERVAL", "IntervalModel"))

__all__ = sorted(_MODEL_NAMES | _PARAMS_NAMES | _TIME_MODEL_NAMES)


def __getattr__(name: str):
    if name in _MODEL_NAMES:
        from warpspeed.interval import model as module
    elif name in _PARAMS_NAMES:
        from warpspeed.interval import params as module
    elif name in _TIME_MODEL_NAMES:
        from warpspeed.interval import time_model as module
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
