"""The four-limiter roofline as a time model (:class:`~warpspeed.model_protocol.TimeModel`): the rate every
prediction carries (:mod:`warpspeed.levels`), as a :class:`~warpspeed.model_protocol.ModelEstimate`."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from warpspeed.model_protocol import ModelAbout, ModelEstimate, TimeModelBase
from warpspeed.units import GIGA

if TYPE_CHECKING:
    from warpspeed.prediction import Prediction
    from warpspeed.trace.document import Trace


def roofline_estimate(prediction: "Prediction") -> ModelEstimate:
    """The roofline as a :class:`ModelEstimate` (cycles at the device's SM clock)."""
    lups = prediction.roofline.lups_per_s
    domain = prediction.launch.launch.domain
    seconds = math.prod(domain) / lups if lups > 0 else math.inf
    return ModelEstimate(ROOFLINE.name, lups, seconds, seconds * prediction.clock_ghz * GIGA,
                         prediction.roofline.limiter)


class RooflineModel(TimeModelBase):
    """The paper's four-limiter roofline (Ernst et al., JPDC 2023, section 2); no options."""

    name = "roofline"
    about = ModelAbout(
        help="the paper's four-limiter roofline (no launch cost)",
        own_limits=True, style=("s", "black", "none"),  # hollow squares
        limits_note="FP, L1, L2, DRAM: the limit each imposes, Glup/s.")

    def estimate(self, prediction: "Prediction", trace: "Trace | None" = None, **options: Any) -> ModelEstimate:
        return roofline_estimate(prediction)


#: The roofline time model.
ROOFLINE = RooflineModel()
