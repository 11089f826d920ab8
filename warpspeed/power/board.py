"""Board power, energy per lattice update and the clock: an AccelWattch-style model on the trace.

Kandiah, Peverelle, Khairy, Pan, Manjunath, Rogers, Aamodt, Hardavellas, "AccelWattch: A Power
Modeling Framework for Modern GPUs", MICRO 2021, eqs 1-5 and 9-11, in steady state: per lattice
update (lup) an activity vector, and the rate R (lups/s) of the time model.

    P = R x E_dyn + P_static(cat, y) x k / N + P_idle x (N - k) + P_const              (eq 10, 11)
    E_dyn = sum_c n_c e_c s^2 + n_L1 e_L1 s^2 + n_L2 e_L2 s^2 + n_DRAM e_DRAM           (eq 11)
    P_static(y) = first + add (y - 1)                      (eq 4, linear)
                = first + add_hw (y - 1), y <= 16;  first + add_hw (y / 2 - 1), y > 16
                  with add_hw = 31 add / 15                 (eq 5, half-warp: y = 16 and 32 equal)

- activity per lup (:func:`activity`, from the trace's ``activity_per_thread``): the core
  components c (:data:`~warpspeed.power.params.CORE_COMPONENTS`): warp instructions issued =
  instructions / (F y); lane operations per unit, tensor multiply-adds and 32-bit register
  accesses = per-thread counts / F (F cells per thread, y active lanes per warp: inactive lanes
  do no work); ``n_L1`` = (L1 load + L1 -> L2 store bytes) / 32 B, ``n_L2`` = (L2 -> L1 + L1 -> L2
  bytes) / 32, ``n_DRAM`` = DRAM load + store bytes / 32; ``k`` = SMs with blocks, averaged over
  the waves (the last wave of a grid may leave SMs idle, and power-gated idle SMs draw only
  ``P_idle``; with no SM active the board draws ``P_const`` only); ``cat`` = the static category
  of the units the kernel uses (:func:`static_category`);
- clock (eqs 2, 3): the supply voltage follows the clock, ``s = V / V_ref = max(f / f_ref,
  v_min_rel)``, or the family's voltage-frequency table where it has one (:func:`voltage_ratio`); core energies scale with ``s^2``, static and idle power with ``s``, DRAM energy and
  constant power not at all. The rate follows the roofline: the FP, L1 and L2 limits scale with the
  clock, the DRAM limit does not (:func:`rate_at_clock`);
- power limit: above the board's limit the clock is lowered until the power equals the limit
  (bisection), and the rate with it (``throttled``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from warpspeed.errors import WarpspeedError
from warpspeed.hardware.clock import MIN_CLOCK_FRACTION as LOWEST_CLOCK_FRACTION
from warpspeed.levels import limits_at_clock
from warpspeed.power.params import CORE_COMPONENTS, PowerParams
from warpspeed.units import SECTOR_BYTES, WARP_LANES
from warpspeed.trace.document import Trace

#: Bisection steps for the throttled clock (relative resolution 2^-40).
BISECTION_STEPS = 40
#: Lowest clock the throttle search considers, relative to the requested clock.
MIN_CLOCK_FRACTION = 0.05
#: Lowest clock a board throttles to, relative to the device's clock (``base_mhz``): the lowest
#: clock the model accepts (:data:`warpspeed.hardware.clock.MIN_CLOCK_FRACTION`).
LOWEST_THROTTLE_FRACTION = LOWEST_CLOCK_FRACTION
HALF_WARP_LANES = 16
#: Per-thread activity keys of the trace -> core component.
_TRACE_KEYS = {"issue": "issue", "int": "int", "int_mul": "int_mul", "fp32": "fp32", "fp64": "fp64", "sfu": "sfu",
               "tensor_fma": "tensor_fmas", "register_access": "register_accesses"}
#: Units whose use decides the static category.
_CATEGORY_UNITS = ("int", "int_mul", "fp32", "fp64", "sfu", "tensor_fma")


@dataclass(frozen=True)
class Activity:
    """Per lattice update: the core components' activity (:data:`CORE_COMPONENTS`) and 32 B
    sectors at L1, L2 and DRAM; active lanes per warp ``y``, time-averaged active SMs ``k`` and the
    static category."""

    core: Mapping[str, float]
    l1_sectors: float
    l2_sectors: float
    dram_sectors: float
    active_lanes: float
    active_sms: float
    category: str


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

    def as_dict(self, params: PowerParams, category: str = "") -> dict:
        watts = self.watts
        return {"watts": watts, "clock_mhz": self.clock_mhz, "lups_per_s": self.lups_per_s,
                "energy_per_lup_j": 1.0 / self.lups_per_joule, "lups_per_joule": self.lups_per_joule,
                "throttled": self.throttled, "power_limit_w": params.power_limit_w,
                "components_w": dict(self.components),
                "components_pj_per_lup": {k: 1e12 * v / self.lups_per_s for k, v in self.components.items()},
                "floor_share": (self.components["static"] + self.components["idle_sm"] + self.components["constant"])
                / watts, "static_category": category, "static_model": params.static_model,
                "family": params.family, "status": params.provenance.get("status", "")}


def active_sms(blocks: int, blocks_per_sm: int, sms: int) -> float:
    """SMs with blocks, averaged over the waves: full waves use every SM, the last one
    ``ceil(remaining blocks / blocks per SM)``."""
    per_wave = blocks_per_sm * sms
    full, rest = divmod(blocks, per_wave)
    waves = full + (1 if rest else 0)
    return (full * sms + (min(sms, math.ceil(rest / blocks_per_sm)) if rest else 0)) / waves


def static_category(used: Mapping[str, float]) -> str:
    """AccelWattch's static category of a kernel from the units it uses (counts > 0): integer and
    FP32 with FP64, a special-function or a tensor unit, integer and FP32 alone, integer only (adds,
    multiplies or both), nothing (light); any other mix (an FP64 kernel without FP32 among them)
    gets the geometric mean of the categories."""
    units = {u for u in _CATEGORY_UNITS if used.get(u, 0) > 0}
    integer = bool(units & {"int", "int_mul"})
    rest = units - {"int", "int_mul"}
    if not units:
        return "light"
    if not rest:
        return "int" if units == {"int", "int_mul"} else ("int_mul" if "int_mul" in units else "int_add")
    if integer and "fp32" in rest:
        extra = rest - {"fp32"}
        if not extra:
            return "int_fp"
        if len(extra) == 1:
            return {"fp64": "int_fp_dp", "sfu": "int_fp_sfu", "tensor_fma": "int_fp_tensor"}[extra.pop()]
    return "geomean"


def static_power(params: PowerParams, category: str, lanes: float) -> float:
    """Chip-wide static power (W) of all SMs active at the reference voltage with ``lanes`` active
    lanes per warp: eq 4 (linear) or eq 5 (half-warp), by the family's model."""
    first, add = params.static_w[category]
    if params.static_model == "linear":
        return first + add * (lanes - 1)
    add_hw = add * (WARP_LANES - 1) / (HALF_WARP_LANES - 1)
    return first + add_hw * (lanes - 1 if lanes <= HALF_WARP_LANES else lanes / 2 - 1)


def activity(trace: Trace) -> Activity:
    """The activity per lup of a trace (:class:`~warpspeed.trace.document.Trace`; see the module
    docstring)."""
    launch, totals = trace.launch, trace.memory.totals
    cells = launch.cells_per_thread
    lanes = launch.active_lanes_per_warp
    per_thread = trace.instructions.activity_per_thread
    core = {c: getattr(per_thread, _TRACE_KEYS[c]) / cells for c in CORE_COMPONENTS}
    core["issue"] = per_thread.issue / (cells * lanes) if lanes > 0 else 0.0
    return Activity(
        core=core,
        l1_sectors=(totals.l1_load_bytes_per_lup + totals.l2_store_bytes_per_lup) / SECTOR_BYTES,
        l2_sectors=(totals.l2_load_bytes_per_lup + totals.l2_store_bytes_per_lup) / SECTOR_BYTES,
        dram_sectors=(totals.dram_load_bytes_per_lup + totals.dram_store_bytes_per_lup) / SECTOR_BYTES,
        active_lanes=lanes,
        active_sms=active_sms(launch.blocks, launch.blocks_per_sm, trace.device.sms),
        category=static_category(core))


def rate_at_clock(rate: float, limits: Mapping[str, float], clock_mhz: float, base_mhz: float) -> float:
    """``rate`` (lups/s at ``base_mhz``) at ``clock_mhz``: scaled by how the roofline's minimum moves
    when its clocked limits scale with the clock (:func:`warpspeed.levels.limits_at_clock`)."""
    valid = {k: v for k, v in limits.items() if v is not None}
    if not valid:
        return rate
    return rate * min(limits_at_clock(valid, clock_mhz / base_mhz).values()) / min(valid.values())


def voltage_ratio(clock_mhz: float, reference_mhz: float, v_min_rel: float,
                  table: Sequence[tuple[float, float]] = ()) -> float:
    """Supply voltage at ``clock_mhz`` relative to the reference clock's: interpolated in the
    family's voltage-frequency table ((MHz, relative voltage) points; clamped at its ends) when it
    has one, else proportional to the clock down to ``v_min_rel`` (AccelWattch eq 3: V ~ f)."""
    if table:
        clocks, volts = zip(*table)
        return float(np.interp(clock_mhz, clocks, volts))
    return max(clock_mhz / reference_mhz, v_min_rel)


def power_at(act: Activity, params: PowerParams, rate: float, clock_mhz: float) -> PowerBreakdown:
    """Watts by component at ``clock_mhz`` for ``rate`` lups/s (no power limit applied)."""
    s = voltage_ratio(clock_mhz, params.reference_clock_mhz, params.v_min_rel, params.vf_table)
    n = params.sms
    k = min(act.active_sms, n)
    static = static_power(params, act.category, act.active_lanes) * (k / n) * s if k > 0 else 0.0
    idle = params.idle_sm_w * (n - k) * s if k > 0 else 0.0  # nothing running: the board draws P_const
    core = {c: rate * act.core[c] * params.core_j[c] * s * s for c in CORE_COMPONENTS}
    return PowerBreakdown(clock_mhz=clock_mhz, lups_per_s=rate, components={
        **core,
        "l1": rate * act.l1_sectors * params.l1_sector_j * s * s,
        "l2": rate * act.l2_sectors * params.l2_sector_j * s * s,
        "dram": rate * act.dram_sectors * params.dram_sector_j,
        "static": static,
        "idle_sm": idle,
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
    low, high = max(f * MIN_CLOCK_FRACTION, base_mhz * LOWEST_THROTTLE_FRACTION), f
    low = min(low, high)
    floor = power_at(act, params, rate_at_clock(rate, limits, low, base_mhz), low)
    if floor.watts > params.power_limit_w:
        raise WarpspeedError(f"{params.device}: the kernel draws {floor.watts:.3g} W even at the lowest clock, "
                             f"{low:g} MHz, above the board's power limit of {params.power_limit_w:g} W "
                             "([device] power_limit_w); allowed: a power limit the board can run the kernel at")
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (low + high)
        if power_at(act, params, rate_at_clock(rate, limits, mid, base_mhz), mid).watts > params.power_limit_w:
            high = mid
        else:
            low = mid
    capped = power_at(act, params, rate_at_clock(rate, limits, low, base_mhz), low)
    return PowerBreakdown(capped.clock_mhz, capped.lups_per_s, capped.components, throttled=True)
