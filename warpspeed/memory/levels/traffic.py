"""Bytes per lattice update between each cache level and the next, and each level's limit.

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

import math
from dataclasses import dataclass, replace
from typing import Mapping

from warpspeed.hardware.caches import CacheLevel
from warpspeed.hardware.device import Device
from warpspeed.memory.capacity.curves import CapacityCurves
from warpspeed.memory.dram import DramVolumes, dram_volumes
from warpspeed.memory.capacity.terms import curve_oversubscriptions, l2_oversubscription
from warpspeed.memory.wave import GridWaveVolumes, PerDim, WaveVolumes
from warpspeed.units import GIGA


@dataclass(frozen=True)
class LevelTraffic:
    """One level: bytes per lup it loads from and stores to the next level, and the lups/s its
    bandwidth allows (None: not modelled)."""

    name: str
    scope: str
    load_bytes_per_lup: float
    store_bytes_per_lup: float
    lups_per_s: float | None

    def as_dict(self) -> dict:
        return {"name": self.name, "scope": self.scope, "load_bytes_per_lup": self.load_bytes_per_lup,
                "store_bytes_per_lup": self.store_bytes_per_lup, "lups_per_s": self.lups_per_s}


def bandwidth_limit(level: CacheLevel | None, bytes_per_lup: float) -> float | None:
    """lups/s the level's bandwidth allows for ``bytes_per_lup`` served; None when unknown."""
    if level is None or level.bandwidth_gb_s is None:
        return None
    return level.bandwidth_gb_s * GIGA / bytes_per_lup if bytes_per_lup > 0 else math.inf


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


def level_traffic(levels: tuple[CacheLevel, ...], first_load: float, first_store: float, first_limit: float,
                  gl1_load: float | None, gl1_limit: float | None, l2_dram: DramVolumes, l2_limit: float,
                  dram: DramVolumes) -> tuple[LevelTraffic, ...]:
    """The per-level traffic from the volumes the predictor computed (module docstring):
    ``first_*`` the first level's, ``gl1_*`` the shader-array level's (None without one),
    ``l2_dram`` the misses at the L2, ``dram`` what reaches DRAM."""
    out = []
    for level in levels:
        if level.scope == "cu":
            out.append(LevelTraffic(level.name, level.scope, first_load, first_store, first_limit))
        elif level.scope == "shader_array":
            out.append(LevelTraffic(level.name, level.scope, gl1_load if gl1_load is not None else first_load,
                                    first_store, gl1_limit))
        elif level.scope == "device":
            out.append(LevelTraffic(level.name, level.scope, l2_dram.load_bytes_per_lup, l2_dram.store_bytes_per_lup,
                                    l2_limit))
        else:
            served = l2_dram.load_bytes_per_lup + l2_dram.store_bytes_per_lup
            out.append(LevelTraffic(level.name, level.scope, dram.load_bytes_per_lup, dram.store_bytes_per_lup,
                                    bandwidth_limit(level, served)))
    return tuple(out)
