"""What the model says about one launch configuration: :class:`Prediction`, plain data.

:class:`warpspeed.predict.Predictor` makes predictions; the time models
(:mod:`warpspeed.models`), the ranking (:mod:`warpspeed.rank`), the trace
(:mod:`warpspeed.trace`) and the JSON summary (:mod:`warpspeed.summary`) read them. This module
imports none of them, so that every one of them can depend on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device
    from warpspeed.kernel.description import Kernel
    from warpspeed.launch.geometry import LaunchInfo
    from warpspeed.memory.dram import DramVolumes
    from warpspeed.memory.footprint import BlockFootprint
    from warpspeed.memory.l1 import L1Cycles
    from warpspeed.memory.l1_misses import L1MissCosts
    from warpspeed.memory.levels.traffic import LevelTraffic
    from warpspeed.memory.wave.average import GridWaveVolumes
    from warpspeed.memory.dram_bandwidth import DramBandwidth
    from warpspeed.memory.sectors import DramSectors
    from warpspeed.roofline.limits import Roofline, TwoLimiter


@dataclass(frozen=True)
class Prediction:
    """Everything the model says about one launch configuration: the demand of every level, computed
    once (:class:`~warpspeed.predict.Predictor`), and the roofline's combination of it.

    ``kernel`` and ``device`` are the kernel description and the device the prediction was made
    for (their names: :attr:`kernel_name`, :attr:`device_name`). Volumes are bytes per lattice
    update (lup), rates lups per second.
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
    roofline: Roofline
    two_limiter: TwoLimiter
    dram_bandwidth: DramBandwidth
    #: Traffic and limit of every cache level, from the SIMDs outwards (:mod:`warpspeed.memory.levels`).
    levels: tuple[LevelTraffic, ...] = ()
    #: The first level's costs with the block's first-touch and capacity misses (the same pass
    #: over the warp instructions as :attr:`l1`, :func:`warpspeed.memory.l1_misses.first_level_demand`).
    l1_misses: L1MissCosts | None = field(default=None, repr=False)
    #: The DRAM volume by the sector coverage of the block's rows (:mod:`warpspeed.memory.sectors`).
    dram_sectors: DramSectors | None = field(default=None, repr=False)

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

    @property
    def lups_per_s(self) -> float:
        """The four-limiter roofline's rate, lattice updates per second (:attr:`roofline`). The
        rate warpspeed reports by default (``warpspeed predict``, ``rank``) is the default time
        model's: :func:`warpspeed.time_estimate` (``warpspeed.time_estimate(p).lups_per_s``)."""
        return self.roofline.lups_per_s

    @property
    def limiter(self) -> str:
        """The roofline's limiter (``fp``, ``l1``, ``l2`` or ``dram``); the default time model's
        explanation is ``warpspeed.time_estimate(p).explanation``."""
        return self.roofline.limiter
