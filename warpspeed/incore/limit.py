"""The in-core component of one configuration: SM cycles per lattice update the SMs need to issue
and execute it (:mod:`warpspeed.incore.core_time`), which the predictor adds to its levels as
``sm`` (:func:`warpspeed.levels.level_demands`) beside the memory levels."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from warpspeed.incore.core_time import CoreTime, core_time
from warpspeed.incore.mix import description_mix, thread_loads

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device
    from warpspeed.kernel.description import Kernel
    from warpspeed.launch.geometry import LaunchInfo
    from warpspeed.memory.addresses import CompiledKernel


def resident_warps(info: "LaunchInfo", sms: int) -> float:
    """Warps resident per SM that have work: the occupancy's blocks per SM, fewer where one wave of the
    grid does not fill them (``wave.blocks`` over the SMs), times the warps per block and the share of
    the grid's threads that have a cell (``Launch.active_thread_share``: idle threads of the blocks at
    the domain's edges hide no latency)."""
    occ = info.occupancy
    return (min(float(occ.blocks_per_sm), info.wave.blocks / sms) * occ.warps_per_block
            * info.launch.active_thread_share)


def load_latency(device: "Device", l2_load_bytes_per_lup: float, dram_load_bytes_per_lup: float) -> float:
    """Load-to-use latency [SM cycles] of the farthest level that serves the loads (a thread waits for
    its slowest load): DRAM's where any load bytes come from DRAM, else the L2's where any come
    from the L2, else the first level's (the device's pointer-chase latencies)."""
    lat = device.latencies
    if dram_load_bytes_per_lup > 0:
        return lat.dram_total
    if l2_load_bytes_per_lup > 0:
        return lat.l1 + lat.l2
    return lat.l1


def configuration_core_time(kernel: "Kernel", device: "Device", info: "LaunchInfo", compiled: "CompiledKernel",
                            owner: np.ndarray, latency: float | None = None) -> CoreTime | None:
    """The in-core terms of ``kernel`` launched as ``info`` (``owner``: the fold copies' merged loads,
    :func:`~warpspeed.memory.addresses.merged_copies`; ``latency``: the loads' latency in SM cycles,
    :func:`load_latency`, ``None`` for the first level's); ``None`` where the device has no
    instruction facts."""
    is_load, _ = compiled.load_mask
    mix = description_mix(kernel, info.launch.cells_per_thread, thread_loads(is_load, owner))
    return core_time(mix, device, resident_warps(info, device.sms), latency)
