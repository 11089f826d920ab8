"""Bytes per lattice update between each cache level and the next (the predictor puts them, with
each level's capacity and limit, into one list: :func:`warpspeed.levels.level_demands`).

For a level ``X``, ``load`` is what ``X`` requests from the next level outwards and ``store`` what
it writes to it (bytes per lup), so the traffic a level serves is its inner neighbour's. Levels,
from the SIMDs outwards (:attr:`warpspeed.hardware.device.Device.levels`):

- first level (NVIDIA L1, RDNA L0, CDNA vector L1): the block-level fill with the first level's
  capacity misses and the write-through stores (the four-limiter model's L2 -> L1 volume); its
  limit is the first level's cycles (the roofline's L1 limit);
- shader-array level (RDNA GL1): ``compulsory_GL1 + m(o_GL1) (L0 load - compulsory_GL1)`` per
  field, the compulsory volume of the blocks sharing a shader array
  (:mod:`warpspeed.memory.levels.shader_array`), ``o_GL1`` their allocation over the GL1 by the
  first level's oversubscription definition and ``m`` the first level's load curve (no GL1 curve
  has been fitted); stores pass through (write-evict); its limit is its bandwidth over the L0
  loads it serves;
- L2: the wave model's misses at the L2 (layer conditions and capacity misses with the L2's
  capacity), the requests it serves being the GL1's loads where there is one; its limit is the
  roofline's L2 limit;
- memory-side level (Infinity Cache): the same wave model with the memory-side cache's capacity
  in place of the L2's (:func:`memory_side_dram`), its limit its bandwidth over the L2's misses
  and write-backs. What it does not keep is the DRAM traffic.

A level whose bandwidth the device file does not give has no limit (``lups_per_s`` None,
reported as not modelled).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from warpspeed.hardware.device import Device
from warpspeed.memory.capacity.curves import CapacityCurves
from warpspeed.memory.dram import DramVolumes, dram_volumes
from warpspeed.memory.capacity.terms import curve_oversubscriptions, l2_oversubscription
from warpspeed.memory.wave import GridWaveVolumes, PerDim, WaveVolumes


def memory_side_dram(wave: GridWaveVolumes, l2_load: Mapping[str, float], l2_store: Mapping[str, float],
                     device: Device, curves: CapacityCurves | None, capacity_bytes: int) -> DramVolumes:
    """DRAM volumes behind a memory-side cache of ``capacity_bytes``: the wave model's equations
    with the layer and capacity oversubscription factors taken against that capacity instead of
    the L2's (:func:`~warpspeed.memory.capacity.terms.curve_oversubscriptions`,
    :func:`~warpspeed.memory.capacity.terms.l2_oversubscription`), with the device's curves."""
    def at_capacity(v: WaveVolumes) -> WaveVolumes:
        return replace(v, l2_effective_bytes=capacity_bytes,
                       oversubscription=PerDim(*curve_oversubscriptions(v.band_volume_bytes, v.layer_volume_bytes.z,
                                                                        capacity_bytes)),
                       l2_oversubscription=l2_oversubscription(v.allocated_bytes, capacity_bytes))

    scaled = replace(wave, classes=tuple(replace(c, volumes=at_capacity(c.volumes)) for c in wave.classes))
    return dram_volumes(scaled, l2_load, l2_store, device, curves)
