"""The AMALI interval model: kernel cycles as a CPI stack of Nsight Compute stall reasons.

:func:`estimate` is what ``warpspeed predict/rank --model interval`` call: it builds the
configuration's trace (:meth:`warpspeed.predict.Prediction.trace`) and runs
:func:`~warpspeed.interval.model.interval_model` on it with the device's ``[interval]``
parameters (:func:`~warpspeed.interval.params.interval_params`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from importlib import import_module

#: Where each public name is defined; imported on first use (PEP 562), so that a module of this
#: package (the launch-cost constants the calibration reports) loads without the model.
_EXPORTS = {
    "STACK_KEYS": "warpspeed.interval.model", "IntervalResult": "warpspeed.interval.model",
    "interval_model": "warpspeed.interval.model", "IntervalParameterError": "warpspeed.interval.params",
    "IntervalParams": "warpspeed.interval.params", "interval_params": "warpspeed.interval.params",
}

if TYPE_CHECKING:
    from warpspeed.models import ModelEstimate
    from warpspeed.predict import Prediction


def estimate(prediction: "Prediction", **options: Any) -> "ModelEstimate":
    """The interval model's estimate of ``prediction``'s configuration (``options``: ``policy``,
    ``dram_writes``, ``floor`` of :func:`~warpspeed.interval.model.interval_model`)."""
    from warpspeed.interval.model import interval_model
    from warpspeed.interval.params import interval_params
    from warpspeed.models import ModelEstimate

    params = interval_params(prediction.device_spec)
    result = interval_model(prediction.model_trace, params, **options)
    return ModelEstimate("interval", result.lups_per_s, result.seconds, result.cycles, result.explanation,
                         result.as_dict())


__all__ = ["STACK_KEYS", "IntervalParameterError", "IntervalParams", "IntervalResult", "estimate",
           "interval_model", "interval_params"]


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
