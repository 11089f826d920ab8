"""The overlap model: the roofline's volumes with the L1's miss wavefronts and request rate, the
unhidden latency at the end of each wave of blocks, and a smooth maximum of the first-level and
DRAM times (:mod:`warpspeed.overlap.model`; constants and their sources:
:mod:`warpspeed.overlap.params`).

:func:`estimate` is what ``warpspeed predict/rank/compare --model overlap`` call.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from warpspeed.overlap.model import COMPONENTS, OverlapResult, overlap_model
from warpspeed.overlap.params import OverlapParams, overlap_params

if TYPE_CHECKING:
    from warpspeed.models import ModelEstimate
    from warpspeed.predict import Prediction


def estimate(prediction: "Prediction", **options: Any) -> "ModelEstimate":
    """The overlap model's estimate of ``prediction``'s configuration (no options)."""
    from warpspeed.models import GHZ, ModelEstimate

    result = overlap_model(prediction, overlap_params(prediction.device_spec))
    lups = math.prod(prediction.launch.launch.domain)
    seconds = lups / result.lups_per_s if result.lups_per_s > 0 else math.inf
    return ModelEstimate("overlap", result.lups_per_s, seconds, seconds * prediction.clock_ghz * GHZ,
                         result.limiter, result.as_dict())


__all__ = ["COMPONENTS", "OverlapParams", "OverlapResult", "estimate", "overlap_model", "overlap_params"]
