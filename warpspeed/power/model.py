"""Board power, energy per lattice update and the clock: an AccelWattch-style model on the trace.

Kandiah, Peverelle, Khairy, Pan, Manjunath, Rogers, Aamodt, Hardavellas, "AccelWattch: A Power
Modeling Framework for Modern GPUs", MICRO 2021, eqs 1-5 and 9-11, in steady state: per lattice
update (lup) an activity vector, and the rate R (lups/s) of the time model.

    P = R x E_dyn + P_static(y) x k / N + P_idle x (N - k) + P_const                 (eq 10, 11)
    E_dyn = n_op e_op s^2 + n_L1 e_L1 s^2 + n_L2 e_L2 s^2 + n_DRAM e_DRAM              (eq 11)
    P_static(y) = first_lane + add_lane (y - 1)                                      (eq 4, linear)

- activity per lup (:func:`activity`): ``n_op`` = instructions a thread issues / cells per
  thread (every instruction counted as one lane operation, issue and register access included);
  ``n_L1`` = (L1 load + L1 -> L2 store bytes) / 32 B, ``n_L2`` = (L2 -> L1 + L1 -> L2 bytes) / 32,
  ``n_DRAM`` = DRAM load + store bytes / 32; ``y`` = the trace's active lanes per warp; ``k`` =
  SMs with blocks, averaged over the waves (the last wave of a grid may leave SMs idle);
- clock (eqs 2, 3): the supply voltage follows the clock, ``s = V / V_ref = max(f / f_ref,
  v_min_rel)``; core energies scale with ``s^2``, static and idle power with ``s``, DRAM energy and
  constant power not at all. The rate follows the roofline: the FP, L1 and L2 limits scale with the
  clock, the DRAM limit does not (:func:`rate_at_clock`);
- power limit: above the board's limit the clock is lowered until the power equals the limit
  (bisection), and the rate with it (``throttled``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

from warpspeed.errors import WarpspeedError
from warpspeed.power.params import PowerParams
from warpspeed.trace.build import SECTOR_BYTES

#: Roofline limits that scale with the SM clock (the DRAM limit does not).
CLOCKED_LIMITS = ("fp", "l1", "l2")
#: Bisection steps for the throttled clock (relative resolution 2^-40).
BISECTION_STEPS = 40
#: Lowest clock the throttle search considers, relative to the requested clock.
MIN_CLOCK_FRACTION = 0.05


@dataclass(frozen=True)
class Activity:
    """Per lattice update: lane operations and 32 B sectors at L1, L2 and DRAM; active lanes per
    warp ``y`` and time-averaged active SMs ``k``."""

    lane_ops: float
    l1_sectors: float
    l2_sectors: float
    dram_sectors: float
    active_lanes: float
    active_sms: float


@dataclass(frozen=True)
class PowerBreakdown:
    """Watts by component at ``clock_mhz`` and the rate ``lups_per_s`` there."""

    clock_mhz: float
    lups_per_s: float
    components: dict[str, float]
    throttled: bool = False

    @property
    def watts(self) -> float:
        return sum(self.components.values())

    @property
    def lups_per_joule(self) -> float:
        return self.lups_per_s / self.watts

    def as_dict(self, params: PowerParams) -> dict:
        watts = self.watts
        return {"watts": watts, "clock_mhz": self.clock_mhz, "lups_per_s": self.lups_per_s,
                "energy_per_lup_j": 1.0 / self.lups_per_joule, "lups_per_joule": self.lups_per_joule,
                "throttled": self.throttled, "power_limit_w": params.power_limit_w,
                "components_w": dict(self.components),
                "components_pj_per_lup": {k: 1e12 * v / self.lups_per_s for k, v in self.components.items()},
                "floor_share": (self.components["static"] + self.components["idle_sm"] + self.components["constant"])
                / watts, "family": params.family, "status": params.provenance.get("status", "")}


def active_sms(blocks: int, blocks_per_sm: int, sms: int) -> float:
    """SMs with blocks, averaged over the waves: full waves use every SM, the last one
    ``ceil(remaining blocks / blocks per SM)``."""
    per_wave = blocks_per_sm * sms
    full, rest = divmod(blocks, per_wave)
    waves = full + (1 if rest else 0)
    return (full * sms + (min(sms, math.ceil(rest / blocks_per_sm)) if rest else 0)) / waves


def activity(trace: Mapping) -> Activity:
    """The activity per lup of a ``warpspeed-trace`` document (see the module docstring)."""
    launch, totals = trace["launch"], trace["memory"]["totals"]
    cells = launch["cells_per_thread"]
    return Activity(
        lane_ops=trace["instructions"]["full_path_instructions"] / cells,
        l1_sectors=(totals["l1_load_bytes_per_lup"] + totals["l2_store_bytes_per_lup"]) / SECTOR_BYTES,
        l2_sectors=(totals["l2_load_bytes_per_lup"] + totals["l2_store_bytes_per_lup"]) / SECTOR_BYTES,
        dram_sectors=(totals["dram_load_bytes_per_lup"] + totals["dram_store_bytes_per_lup"]) / SECTOR_BYTES,
        active_lanes=launch["active_lanes_per_warp"],
        active_sms=active_sms(launch["blocks"], launch["blocks_per_sm"], trace["device"]["sms"]))


def rate_at_clock(rate: float, limits: Mapping[str, float], clock_mhz: float, base_mhz: float) -> float:
    """``rate`` (lups/s at ``base_mhz``) at ``clock_mhz``: scaled by how the roofline's minimum moves
    when its FP, L1 and L2 limits scale with the clock."""
    if not limits:
        return rate
    scale = clock_mhz / base_mhz
    moved = min(v * scale if k in CLOCKED_LIMITS else v for k, v in limits.items() if v is not None)
    base = min(v for v in limits.values() if v is not None)
    return rate * moved / base


def power_at(act: Activity, params: PowerParams, rate: float, clock_mhz: float) -> PowerBreakdown:
    """Watts by component at ``clock_mhz`` for ``rate`` lups/s (no power limit applied)."""
    s = max(clock_mhz / params.reference_clock_mhz, params.v_min_rel)
    n = params.sms
    k = min(act.active_sms, n)
    static = (params.first_lane_w + params.add_lane_w * (act.active_lanes - 1)) * (k / n) * s if k > 0 else 0.0
    return PowerBreakdown(clock_mhz=clock_mhz, lups_per_s=rate, components={
        "compute": rate * act.lane_ops * params.lane_op_j * s * s,
        "l1": rate * act.l1_sectors * params.l1_sector_j * s * s,
        "l2": rate * act.l2_sectors * params.l2_sector_j * s * s,
        "dram": rate * act.dram_sectors * params.dram_sector_j,
        "static": static,
        "idle_sm": params.idle_sm_w * (n - k) * s,
        "constant": params.constant_w,
    })


def board_power(act: Activity, params: PowerParams, rate: float, limits: Mapping[str, float], base_mhz: float,
                clock_mhz: float | None = None) -> PowerBreakdown:
    """Power at ``clock_mhz`` (default: ``base_mhz``, the clock ``rate`` and ``limits`` hold at),
    throttled to the board's power limit when it would exceed it."""
    if rate <= 0 or not math.isfinite(rate):
        raise WarpspeedError("the power model needs a positive, finite rate (lups/s)")
    f = clock_mhz if clock_mhz is not None else base_mhz
    full = power_at(act, params, rate_at_clock(rate, limits, f, base_mhz), f)
    if full.watts <= params.power_limit_w:
        return full
    low, high = f * MIN_CLOCK_FRACTION, f
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (low + high)
        if power_at(act, params, rate_at_clock(rate, limits, mid, base_mhz), mid).watts > params.power_limit_w:
            high = mid
        else:
            low = mid
    capped = power_at(act, params, rate_at_clock(rate, limits, low, base_mhz), low)
    return PowerBreakdown(capped.clock_mhz, capped.lups_per_s, capped.components, throttled=True)
