"""Each level's demand, capacity and time as one typed list (:class:`LevelDemand`, the
predictor's ``Prediction.levels``), the four-limiter roofline over it (Ernst et al., JPDC 2023,
section 2) and the plain two-limiter roofline.

A configuration's time has one component per level, from the SM's FP pipes outwards: ``fp``,
the first level ``l1``, RDNA's graphics L1 ``gl1``, the ``l2``, a memory-side cache ``mall`` and
``dram``. Each :class:`LevelDemand` holds what the level serves per lattice update (FP
instructions, first-level cycles, bytes), what it serves per second at this launch (its
capacity), the bytes it requests from the next level outwards and its cache size, and its limit
alone, ``capacity / demand`` lups/s (the one place that divides the two). The roofline is the
tightest limit (the largest time); the time models combine the same list differently.

lups/s = min of

* FP:   SMs x clock x FP lanes per SM for the dtype / FP instructions per lup;
* L1:   SMs x clock / L1 cycles per lup (one wavefront per SM and cycle);
* L2:   L2 bandwidth / (L2 -> L1 load + L1 -> L2 store bytes per lup);
* DRAM: DRAM bandwidth / (DRAM load + store bytes per lup), with the bandwidth the launch can
  achieve given its bytes in flight (:mod:`warpspeed.memory.dram_bandwidth`) where the caller
  supplies it, else the device's sustained bandwidth.

A limiter whose demand is zero (no FP work, no traffic) imposes no limit (infinity).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

from warpspeed.hardware.device import Device
from warpspeed.units import GIGA

if TYPE_CHECKING:  # the record layout loads without numpy, sympy and islpy
    from warpspeed.memory.dram import DramVolumes
    from warpspeed.memory.sectors import DramSectors

#: Names of the four limiters, in report order.
LIMITERS = ("fp", "l1", "l2", "dram")
#: Limiters that scale with the SM clock: FP, L1 and the in-core time (``sm``) count SM cycles;
#: the L2 and RDNA's graphics L1 are taken to run in the SM clock domain too (an assumption: their
#: clocks are not documented); DRAM and a memory-side cache do not scale.
CLOCKED_LIMITS = ("fp", "l1", "l2", "gl1", "sm")


def _rate(capacity_per_s: float, demand_per_lup: float) -> float:
    return capacity_per_s / demand_per_lup if demand_per_lup > 0 else math.inf


def gflops(lups_per_s: float, flops_per_lup: float) -> float:
    """GFLOP/s at ``lups_per_s`` (0 when the rate is infinite or the kernel has no flop counts)."""
    return lups_per_s * flops_per_lup / GIGA if math.isfinite(lups_per_s) else 0.0


@dataclass(frozen=True)
class LevelDemand:
    """One level of a configuration (module docstring), computed once by the predictor.

    Attributes:
        key: the component's name in limits and times (``fp``, ``sm``: the in-core time, ``l1``,
            ``gl1``, ``l2``, ``mall``, ``dram``).
        name, scope: the level's name in the device file (``FP`` and ``DRAM`` for the pipes and
            the memory) and its scope (``sm``, ``cu``, ``shader_array``, ``device``,
            ``memory_side``, ``dram``).
        load_bytes_per_lup, store_bytes_per_lup: bytes per lup the level loads from and stores
            to the next level outwards (DRAM: its own loads and stores).
        demand_per_lup: what the level serves per lup, in ``unit`` (``instructions``: FP
            instructions; ``cycles``: first-level wavefront cycles per SM; ``bytes``: its inner
            neighbour's loads and stores).
        capacity_per_s: what the whole device serves per second at this launch's occupancy, in
            ``unit`` (None: not modelled, the device file gives no bandwidth).
        capacity_bytes: the cache's bytes per instance (None for the FP pipes and DRAM).
        bandwidth_gb_s: the byte levels' bandwidth at this launch (DRAM: achievable with the
            launch's bytes in flight, :mod:`warpspeed.memory.dram_bandwidth`), GB/s.
        lups_per_s: the level's limit alone, ``capacity / demand`` (infinite without demand; None
            when not modelled).
        sectors: DRAM: its volume by the sector coverage of the block rows
            (:class:`~warpspeed.memory.sectors.DramSectors`).
    """

    key: str
    name: str
    scope: str
    load_bytes_per_lup: float
    store_bytes_per_lup: float
    demand_per_lup: float
    unit: str
    capacity_per_s: float | None
    capacity_bytes: int | None
    bandwidth_gb_s: float | None
    lups_per_s: float | None
    sectors: DramSectors | None = None

    @property
    def seconds_per_lup(self) -> float:
        """The level's time, seconds per lattice update with the whole device working (0 without
        demand or when not modelled)."""
        v = self.lups_per_s
        return 1.0 / v if v is not None and v > 0 and math.isfinite(v) else 0.0


def level(key: str, name: str, scope: str, load: float, store: float, demand: float, unit: str,
          capacity_per_s: float | None, capacity_bytes: int | None = None, bandwidth_gb_s: float | None = None,
          sectors: DramSectors | None = None) -> LevelDemand:
    """One :class:`LevelDemand`, its limit ``capacity / demand``."""
    limit = None if capacity_per_s is None else _rate(capacity_per_s, demand)
    return LevelDemand(key, name, scope, load, store, demand, unit, capacity_per_s, capacity_bytes, bandwidth_gb_s,
                       limit, sectors)


def level_demands(device: Device, dtype: str, *, fp_instructions_per_lup: float, l1_cycles_per_lup: float,
                  first_load: float, first_store: float, gl1_load: float | None, l2_served: float,
                  l2_dram: DramVolumes, dram: DramVolumes, dram_bandwidth_gb_s: float,
                  sectors: DramSectors | None = None,
                  sm_cycles_per_lup: float | None = None) -> tuple[LevelDemand, ...]:
    """Every level of a configuration from the SM outwards (module docstring), from the volumes
    the predictor computed: ``first_*`` the first level's requests (the L2 -> L1 load with its
    capacity misses, the write-through stores), ``gl1_load`` what a shader-array level requests
    from the L2 (None without one), ``l2_served`` the loads and stores the L2 serves, ``l2_dram``
    the misses at the L2, ``dram`` what reaches DRAM at ``dram_bandwidth_gb_s``; ``sm_cycles_per_lup``
    the in-core time, SM cycles per lup on one SM (:mod:`warpspeed.incore`; None: no instruction
    facts for the device, and no ``sm`` entry)."""
    clock_hz = device.clock_ghz * GIGA
    out = [level("fp", "FP", "sm", 0.0, 0.0, fp_instructions_per_lup, "instructions",
                 device.sms * clock_hz * device.fp_lanes_per_sm(dtype))]
    if sm_cycles_per_lup is not None:
        out.append(level("sm", "SM", "sm", 0.0, 0.0, sm_cycles_per_lup, "cycles", device.sms * clock_hz))
    for cache in device.levels:
        bandwidth = cache.bandwidth_gb_s
        per_s = None if bandwidth is None else bandwidth * GIGA
        if cache.scope == "cu":
            out.append(level("l1", cache.name, cache.scope, first_load, first_store, l1_cycles_per_lup, "cycles",
                             device.sms * clock_hz, cache.bytes))
        elif cache.scope == "shader_array":
            out.append(level("gl1", cache.name, cache.scope, gl1_load if gl1_load is not None else first_load,
                             first_store, first_load, "bytes", per_s, cache.bytes, bandwidth))
        elif cache.scope == "device":
            out.append(level("l2", cache.name, cache.scope, l2_dram.load_bytes_per_lup, l2_dram.store_bytes_per_lup,
                             l2_served, "bytes", device.l2.bandwidth_gb_s * GIGA, cache.bytes, device.l2.bandwidth_gb_s))
        else:
            out.append(level("mall", cache.name, cache.scope, dram.load_bytes_per_lup, dram.store_bytes_per_lup,
                             l2_dram.load_bytes_per_lup + l2_dram.store_bytes_per_lup, "bytes", per_s, cache.bytes,
                             bandwidth))
    total = dram.load_bytes_per_lup + dram.store_bytes_per_lup
    out.append(level("dram", "DRAM", "dram", dram.load_bytes_per_lup, dram.store_bytes_per_lup, total, "bytes",
                     dram_bandwidth_gb_s * GIGA, None, dram_bandwidth_gb_s, sectors))
    return tuple(out)


@dataclass(frozen=True)
class Roofline:
    """Limits in lattice updates per second; ``limiter`` names the smallest."""

    fp_lups_per_s: float
    l1_lups_per_s: float
    l2_lups_per_s: float
    dram_lups_per_s: float
    flops_per_lup: float
    dram_bandwidth_gb_s: float  # the DRAM bandwidth the DRAM limit was computed with [GB/s]
    #: Limits of further cache levels (:mod:`warpspeed.memory.levels`), by level, after L2.
    extra: tuple[tuple[str, float], ...] = ()

    @property
    def limits(self) -> dict[str, float]:
        base = {"fp": self.fp_lups_per_s, "l1": self.l1_lups_per_s, "l2": self.l2_lups_per_s}
        return {**base, **dict(self.extra), "dram": self.dram_lups_per_s}

    @property
    def lups_per_s(self) -> float:
        return min(self.limits.values())

    @property
    def limiter(self) -> str:
        limits = self.limits
        return min(limits, key=lambda k: limits[k])

    @property
    def gflops(self) -> float:
        """Predicted GFLOP/s (0 when the kernel has no flop counts)."""
        return gflops(self.lups_per_s, self.flops_per_lup)

    @classmethod
    def of(cls, levels: tuple[LevelDemand, ...], flops_per_lup: float) -> "Roofline":
        """The roofline over ``levels`` (:func:`level_demands`): each modelled level's limit, the
        further levels' (``gl1``, ``mall``) after the L2."""
        limits = {lv.key: lv.lups_per_s for lv in levels if lv.lups_per_s is not None}
        dram = next(lv for lv in levels if lv.key == "dram")
        return cls(limits["fp"], limits["l1"], limits["l2"], limits["dram"], flops_per_lup,
                   dram.bandwidth_gb_s or 0.0, tuple((k, v) for k, v in limits.items() if k not in LIMITERS))


def limits_at_clock(limits: dict[str, float], scale: float) -> dict[str, float]:
    """``limits`` (lups/s) with the SM clock multiplied by ``scale``: :data:`CLOCKED_LIMITS` scale,
    the others stay."""
    return {k: v * scale if k in CLOCKED_LIMITS else v for k, v in limits.items()}


def four_limiter(device: Device, dtype: str, fp_instructions_per_lup: float, flops_per_lup: float,
                 l1_cycles_per_lup: float, l2_bytes_per_lup: float, dram_bytes_per_lup: float,
                 dram_bandwidth_gb_s: float | None = None,
                 extra_limits: Mapping[str, float] | None = None) -> Roofline:
    """The four limiters of the model (see the module docstring). Volumes in bytes per lup.

    ``dram_bandwidth_gb_s``: the achievable DRAM bandwidth of the launch [GB/s]; ``None`` uses the
    device's sustained ``dram_bandwidth_gb_s``; ``extra_limits``: lups/s of further cache levels
    (``gl1``, ``mall``: :mod:`warpspeed.memory.levels`), which join the minimum.
    """
    clock_hz = device.clock_ghz * GIGA
    dram_gb_s = device.dram_bandwidth_gb_s if dram_bandwidth_gb_s is None else dram_bandwidth_gb_s
    fp_capacity = device.sms * clock_hz * device.fp_lanes_per_sm(dtype)
    return Roofline(
        fp_lups_per_s=_rate(fp_capacity, fp_instructions_per_lup),
        l1_lups_per_s=_rate(device.sms * clock_hz, l1_cycles_per_lup),
        l2_lups_per_s=_rate(device.l2.bandwidth_gb_s * GIGA, l2_bytes_per_lup),
        dram_lups_per_s=_rate(dram_gb_s * GIGA, dram_bytes_per_lup),
        flops_per_lup=flops_per_lup,
        dram_bandwidth_gb_s=dram_gb_s,
        extra=tuple((extra_limits or {}).items()),
    )


@dataclass(frozen=True)
class TwoLimiter:
    """The classic roofline: FP peak and DRAM bandwidth with compulsory volumes only."""

    fp_lups_per_s: float
    dram_lups_per_s: float

    @property
    def lups_per_s(self) -> float:
        return min(self.fp_lups_per_s, self.dram_lups_per_s)

    @property
    def limiter(self) -> str:
        return "fp" if self.fp_lups_per_s < self.dram_lups_per_s else "dram"


def two_limiter(device: Device, dtype: str, fp_instructions_per_lup: float,
                compulsory_dram_bytes_per_lup: float) -> TwoLimiter:
    """FP and DRAM limits with the compulsory DRAM volume (no cache effects)."""
    clock_hz = device.clock_ghz * GIGA
    return TwoLimiter(
        fp_lups_per_s=_rate(device.sms * clock_hz * device.fp_lanes_per_sm(dtype), fp_instructions_per_lup),
        dram_lups_per_s=_rate(device.dram_bandwidth_gb_s * GIGA, compulsory_dram_bytes_per_lup),
    )
