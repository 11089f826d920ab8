"""The overlap model: the roofline's volumes with the L1's miss wavefronts and request rate, the
unhidden latency at the end of each wave of blocks, and a smooth maximum of the first-level and
DRAM times (:mod:`warpspeed.overlap.combine`; constants and their sources:
:mod:`warpspeed.overlap.params`).

:data:`~warpspeed.overlap.time_model.OVERLAP` is the time model ``warpspeed predict/rank/compare
--model overlap`` run. The names below are imported on first use (PEP 562), so that the registry
of the time models (:mod:`warpspeed.models`) loads without numpy.
"""

from __future__ import annotations

from warpspeed.lazy import lazy_exports


def _combine():
    from warpspeed.overlap import combine

    return combine


def _params():
    from warpspeed.overlap import params

    return params


def _time_model():
    from warpspeed.overlap import time_model

    return time_model


__getattr__, __dir__, __all__ = lazy_exports(globals(), {
    _combine: ("COMPONENTS", "OverlapResult", "overlap_model"),
    _params: ("OverlapParams", "overlap_params"),
    _time_model: ("OVERLAP", "OverlapModel"),
})
