"""The overlap model as a time model (:class:`~warpspeed.estimate.TimeModel`; the model itself:
:mod:`warpspeed.overlap.model`, its constants :mod:`warpspeed.overlap.params`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from warpspeed.estimate import GHZ, ModelEstimate, TimeModelBase

if TYPE_CHECKING:
    from warpspeed.prediction import Prediction
    from warpspeed.trace.document import Trace


class OverlapModel(TimeModelBase):
    """The roofline's volumes with the L1's miss wavefronts and request rate, the unhidden latency
    at the end of each wave of blocks, a smooth maximum of the first-level and DRAM times, the DRAM
    cost of partly covered sectors, the knee of resident blocks, block dispatch and launch
    overhead; its rows carry its own four limits. No options."""

    name = "overlap"
    own_limits = True
    style = ("D", "tab:green")
    limits_note = ("FP, L1, L2, DRAM: each component's time alone as a rate, Glup/s (L1 with the miss "
                   "wavefronts, requests and wave-end latency); the overlap model combines L1 and DRAM "
                   "imperfectly, so the prediction can lie below all four (docs/overlap.md).")

    def estimate(self, prediction: "Prediction", trace: "Trace | None" = None, **options: Any) -> ModelEstimate:
        # the model's modules need numpy and the compiled kernel: loaded when a model runs
        from warpspeed.overlap.model import overlap_model
        from warpspeed.overlap.params import overlap_params

        result = overlap_model(prediction, overlap_params(prediction.device))
        lups = math.prod(prediction.launch.launch.domain)
        seconds = lups / result.lups_per_s if result.lups_per_s > 0 else math.inf
        return ModelEstimate(self.name, result.lups_per_s, seconds, seconds * prediction.clock_ghz * GHZ,
                             result.limiter, result.as_dict())


#: The overlap time model (the default, :data:`warpspeed.models.DEFAULT_TIME_MODEL`).
OVERLAP = OverlapModel()
