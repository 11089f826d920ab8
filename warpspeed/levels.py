"""The four-limiter roofline (Ernst et al., JPDC 2023, section 2) and the plain two-limiter roofline.

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
from typing import Mapping

from warpspeed.hardware.device import Device
from warpspeed.units import GIGA

#: Names of the four limiters, in report order.
LIMITERS = ("fp", "l1", "l2", "dram")
#: Limiters that scale with the SM clock: FP and L1 count SM cycles; the L2 and RDNA's graphics
#: L1 are taken to run in the SM clock domain too (an assumption: their clocks are not
#: documented); DRAM and a memory-side cache do not scale.
CLOCKED_LIMITS = ("fp", "l1", "l2", "gl1")


def _rate(capacity_per_s: float, demand_per_lup: float) -> float:
    return capacity_per_s / demand_per_lup if demand_per_lup > 0 else math.inf


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
    def seconds_per_lup(self) -> dict[str, float]:
        """Each level's time for the configuration's demand, seconds per lattice update with the
        whole device working (0 for a level without demand): the components every time model
        starts from. The roofline takes their maximum."""
        return {k: 1.0 / v if v > 0 and math.isfinite(v) else 0.0 for k, v in self.limits.items()}

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
        rate = self.lups_per_s
        return rate * self.flops_per_lup / GIGA if math.isfinite(rate) else 0.0


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
