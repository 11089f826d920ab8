"""The overlap model: the roofline's volumes with the L1's miss wavefronts and request rate, the
unhidden latency at the end of each wave of blocks, and a smooth maximum of the first-level and
DRAM times (:mod:`warpspeed.overlap.model`; constants and their sources:
:mod:`warpspeed.overlap.params`).

:data:`~warpspeed.overlap.time_model.OVERLAP` is the time model ``warpspeed predict/rank/compare
--model overlap`` run. The names below are imported on first use (PEP 562), so that the registry
of the time models (:mod:`warpspeed.models`) loads without numpy.
"""

from __future__ import annotations

_MODEL_NAMES = frozenset(("COMPONENTS", "OverlapResult", "overlap_model"))
_PARAMS_NAMES = frozenset(("OverlapParams", "overlap_params"))
_TIME_MODEL_NAMES = frozenset(("OVERLAP", "OverlapModel"))

__all__ = sorted(_MODEL_NAMES | _PARAMS_NAMES | _TIME_MODEL_NAMES)


def __getattr__(name: str):
    if name in _MODEL_NAMES:
        from warpspeed.overlap import model as module
    elif name in _PARAMS_NAMES:
        from warpspeed.overlap import params as module
    elif name in _TIME_MODEL_NAMES:
        from warpspeed.overlap import time_model as module
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
