"""The overlap model as a time model (:class:`~warpspeed.model_protocol.TimeModel`; the model itself:
:mod:`warpspeed.overlap.combine`, its constants :mod:`warpspeed.overlap.params`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Sequence

from warpspeed.model_protocol import Component, ModelAbout, ModelEstimate, RowFigures, TimeModelBase
from warpspeed.units import GIGA

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device
    from warpspeed.prediction import Prediction
    from warpspeed.trace.document import Trace

#: The part whose timed stencil configurations fitted the overlap model's exponent and miss-stage
#: request rate (``fits/data/H200/``; :mod:`warpspeed.overlap.params`).
FITTED_ON = "H200"
#: The parts whose gpu-roofline runs fitted the exponent that joins the in-core time to the memory
#: time (:data:`warpspeed.overlap.params.CORE_OVERLAP_EXPONENT`).
CORE_FITTED_ON = ("A100-SXM4-40GB", "A40", "L40")


class OverlapModel(TimeModelBase):
    """The roofline's volumes with the L1's miss wavefronts and request rate, the unhidden latency
    at the end of each wave of blocks, a smooth maximum of the first-level and DRAM times, the DRAM
    cost of partly covered sectors, the knee of resident blocks, block dispatch and launch
    overhead; its rows carry its own four limits. No options."""

    name = "overlap"
    about = ModelAbout(
        help=("the overlap model (the roofline's volumes with L1 miss wavefronts, the L1 miss stage's request rate, "
              "the unhidden latency at the end of each wave of blocks, imperfect overlap of L1 and DRAM, the DRAM "
              "cost of partly covered sectors, block dispatch and launch overhead)"),
        own_limits=True, reads_l1_misses=True, style=("D", "tab:green"),
        limits_note=("FP, L1, L2, DRAM: each component's time alone as a rate, Glup/s (L1 with the miss "
                     "wavefronts, requests and wave-end latency); the overlap model combines L1 and DRAM "
                     "imperfectly, so the prediction can lie below all four (docs/overlap.md)."))

    def estimate(self, prediction: "Prediction", trace: "Trace | None" = None, **options: Any) -> ModelEstimate:
        # the model's modules need numpy and the compiled kernel: loaded when a model runs
        from warpspeed.overlap.combine import overlap_model
        from warpspeed.overlap.params import overlap_params

        result = overlap_model(prediction, overlap_params(prediction.device))
        lups = math.prod(prediction.launch.launch.domain)
        seconds = lups / result.lups_per_s if result.lups_per_s > 0 else math.inf
        limits = result.limits
        figures = RowFigures(limits, result.limiter or min(limits, key=limits.__getitem__), result.l1_cycles_per_lup,
                             result.l2_load_bytes_per_lup, result.l2_store_bytes_per_lup,
                             result.dram_load_bytes_per_lup, result.dram_store_bytes_per_lup)
        return ModelEstimate(self.name, result.lups_per_s, seconds, seconds * prediction.clock_ghz * GIGA,
                             result.limiter, result.as_dict(), figures)

    def provenance(self, device: "Device") -> Sequence[Component]:
        """The overlap model's fitted constants: the exponent and (NVIDIA) the request rate on six
        kernels timed on the H200; the in-core exponent on the gpu-roofline runs of three parts."""
        return (Component("overlap constants", FITTED_ON, "six kernels' timings", device.name == FITTED_ON),
                Component("in-core overlap exponent", ", ".join(CORE_FITTED_ON), "gpu-roofline runs",
                          device.name in CORE_FITTED_ON))


#: The overlap time model (the default, :data:`warpspeed.models.DEFAULT_TIME_MODEL`).
OVERLAP = OverlapModel()
