"""What the model says about one launch configuration: :class:`Prediction`, plain data.

:class:`warpspeed.predict.Predictor` makes predictions; the time models
(:mod:`warpspeed.models`), the ranking (:mod:`warpspeed.rank`), the trace
(:mod:`warpspeed.trace`) and the JSON summary (:mod:`warpspeed.summary`) read them. This module
imports none of them, so that every one of them can depend on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol

from warpspeed.errors import WarpspeedError

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device
    from warpspeed.kernel.description import Kernel
    from warpspeed.launch.geometry import LaunchInfo
    from warpspeed.memory.dram import DramVolumes
    from warpspeed.memory.footprint import BlockFootprint
    from warpspeed.memory.l1 import L1Cycles
    from warpspeed.memory.l1_misses import L1MissCosts
    from warpspeed.memory.wave.average import GridWaveVolumes
    from warpspeed.memory.dram_bandwidth import DramBandwidth
    from warpspeed.memory.sectors import DramSectors
    from warpspeed.levels import LevelDemand, Roofline, TwoLimiter


class Estimator(Protocol):
    """What a prediction asks of its time model (:class:`warpspeed.model_protocol.TimeModel`)."""

    name: str
    about: Any  # ModelAbout: reads_l1_misses

    def estimate(self, prediction: "Prediction", trace: Any = None, **options: Any) -> Any:
        ...


@dataclass(frozen=True)
class Prediction:
    """Everything the model says about one launch configuration: the demand of every level, computed
    once (:class:`~warpspeed.predict.Predictor`), and the time model that combines it.

    ``kernel`` and ``device`` are the kernel description and the device the prediction was made
    for (their names: :attr:`kernel_name`, :attr:`device_name`). Volumes are bytes per lattice
    update (lup), rates lups per second. :attr:`lups_per_s` is the rate of the predictor's time
    model (:attr:`model`; by default warpspeed's default, the one ``warpspeed predict`` and
    ``rank`` report), computed on first use (:attr:`estimate`); the roofline's figures are
    :attr:`roofline`'s.
    """

    kernel: Kernel = field(repr=False)
    device: Device = field(repr=False)
    launch: LaunchInfo
    l1: L1Cycles
    footprint: BlockFootprint
    l1_oversubscription: float  # L1 allocation of a block over the L1 capacity (memory.capacity.terms)
    l2_load_bytes_per_lup: float  # L2 -> L1, compulsory plus L1 capacity misses
    l2_load_per_field: dict[str, float]
    wave: GridWaveVolumes  # the classes of full waves and their averages
    dram: DramVolumes  # what reaches DRAM (behind a memory-side cache if any), averaged over the full waves
    two_limiter: TwoLimiter
    dram_bandwidth: DramBandwidth
    #: Every level's demand, capacity and limit, from the FP pipes to DRAM (:mod:`warpspeed.levels`):
    #: what every time model combines.
    levels: tuple[LevelDemand, ...] = ()
    #: The first level's costs with the block's first-touch and capacity misses (the same pass
    #: over the warp instructions as :attr:`l1`, :func:`warpspeed.memory.l1_misses.first_level_demand`).
    l1_misses: L1MissCosts | None = field(default=None, repr=False)
    #: The time model whose estimate this prediction reports (:attr:`estimate`): the predictor's.
    model: Estimator | None = field(default=None, repr=False, compare=False)

    @property
    def kernel_name(self) -> str:
        return self.kernel.name

    @property
    def device_name(self) -> str:
        return self.device.name

    @property
    def clock_ghz(self) -> float:
        """The SM clock the L1 and FP limiters assume, GHz."""
        return self.device.clock_ghz

    @property
    def l2_store_bytes_per_lup(self) -> float:
        return self.footprint.l2_store_bytes_per_lup

    def level(self, key: str) -> LevelDemand:
        """The level ``key`` of :attr:`levels` (``fp``, ``l1``, ``l2``, ``dram``, ...)."""
        for lv in self.levels:
            if lv.key == key:
                return lv
        raise WarpspeedError(f"no level {key!r} in this prediction; levels: {', '.join(lv.key for lv in self.levels)}")

    @property
    def cache_levels(self) -> tuple[LevelDemand, ...]:
        """The cache levels among :attr:`levels`, from the SIMDs outwards (``Device.levels``)."""
        return tuple(lv for lv in self.levels if lv.capacity_bytes is not None)

    @property
    def dram_sectors(self) -> DramSectors | None:
        """The DRAM volume by the sector coverage of the block's rows (:mod:`warpspeed.memory.sectors`)."""
        return self.level("dram").sectors

    @cached_property
    def roofline(self) -> Roofline:
        """The four-limiter roofline over :attr:`levels`: each level's limit alone and the tightest
        (the roofline time model's figures, :mod:`warpspeed.roofline`)."""
        from warpspeed.levels import Roofline

        return Roofline.of(self.levels, self.kernel.flops.flops)

    @cached_property
    def estimate(self) -> Any:
        """The :attr:`model`'s estimate of this configuration
        (:class:`~warpspeed.model_protocol.ModelEstimate`: rate, time, cycles, what dominates),
        computed on first use."""
        if self.model is None:
            raise WarpspeedError("this prediction was made without a time model; make it with "
                                 "warpspeed.Predictor or warpspeed.predict")
        return self.model.estimate(self)

    @property
    def lups_per_s(self) -> float:
        """The rate of the predictor's time model, lattice updates per second (:attr:`estimate`):
        the rate ``warpspeed predict`` and ``rank`` report for the same model."""
        return self.estimate.lups_per_s

    @property
    def limiter(self) -> str:
        """What dominates the time model's time (``estimate.explanation``: the limiter of the
        roofline and the overlap model, the largest CPI-stack entry of the interval model, ...)."""
        return self.estimate.explanation
