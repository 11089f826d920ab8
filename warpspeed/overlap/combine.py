"""The overlap model: the volumes of the four-limiter roofline, with the limits combined the way
a real GPU overlaps them.

The roofline of Ernst et al. (JPDC 2023) takes the minimum of four limits, which assumes that the
FP units, the L1, the L2 and DRAM all work in parallel without getting in each other's way. Timed
on an NVIDIA H200 (the paper's 168 configurations of the 25-point star stencil), the kernels the
roofline calls DRAM-bound reach only 1.7-2.2 TB/s of DRAM bandwidth while the L1 is busy 72-86 %
of the cycles: the roofline is 1.33x too fast at the median. Seven mechanisms, each with its
evidence in Nsight Compute profiles, timings or a microbenchmark that isolates it (``docs/overlap.md``):

1. **L1 misses cost data-stage wavefronts** (:mod:`warpspeed.memory.l1_misses`): one more
   wavefront per missing cache line.
2. **The miss stage sends a limited number of L2 requests per cycle** (one per missing line,
   :data:`~warpspeed.overlap.params.MISS_REQUESTS_PER_CYCLE` per SM).
3. **A wave of blocks ends with a latency nobody hides**: ``drain / (blocks per SM x lups per
   block)`` cycles per lup, ``drain`` the pointer-chase DRAM latency.
4. **The first level and DRAM overlap imperfectly**: their times combine as a smooth maximum,
   ``(t_L1^p + t_DRAM^p)^(1/p)`` (:data:`~warpspeed.overlap.params.OVERLAP_EXPONENT`).
5. **A sector a block row covers only in part is not shared in DRAM** (:mod:`warpspeed.memory.sectors`):
   the DRAM time prices each row by its sectors, a partly covered one at one transfer for a load
   and two for a store (:func:`dram_sector_cost`).
6. **Resident blocks overlap each other's start and end**: the Little's-law knee sharpens with the
   resident blocks per SM (:func:`launch_dram_gb_s`).
7. **Blocks are dispatched at a limited rate and launches cost a fixed time** (the stored launch fit).

Time per launch = launch overhead + lups x max(smooth max(t_L1, t_DRAM), t_L2, t_FP, t_dispatch,
t_further) with

* ``t_L1 = (max(data-stage and tag wavefronts, L2 requests / rate) + drain / lups per wave of
  an SM) / (SMs x clock)``;
* ``t_FP``, ``t_L2`` and ``t_further`` (the levels a part adds: RDNA's graphics L1, a memory-side
  cache) the roofline's component times (:attr:`~warpspeed.roofline.limits.Roofline.seconds_per_lup`:
  each level's demand over its bandwidth);
* ``t_DRAM = DRAM bytes x sector cost / the launch's DRAM bandwidth``;
* ``t_dispatch`` the block dispatch time per lup.

Every volume and the first level's costs with misses are the prediction's
(:class:`~warpspeed.predict.Predictor` computes each level's demand once); :func:`overlap_components`
turns them into time components; :func:`combine` turns those into a time for given constants (:mod:`warpspeed.calibration.overlap_fit` refits the two fitted ones that way).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

from warpspeed.memory.first_level import first_level
from warpspeed.memory.l1_misses import L1MissCosts
from warpspeed.memory.sectors import sector_cost
from warpspeed.errors import WarpspeedError
from warpspeed.overlap.params import OverlapParams
from warpspeed.roofline.limits import LIMITERS
from warpspeed.units import GIGA

if TYPE_CHECKING:
    from warpspeed.prediction import Prediction

#: The components of the time, in report order: the roofline's limiter names.
COMPONENTS = LIMITERS


@dataclass(frozen=True)
class OverlapResult:
    """The overlap model's verdict on one configuration.

    Attributes:
        lups_per_s: lattice updates per second.
        seconds_per_lup: the time components (:data:`COMPONENTS`) in seconds per lattice update
            per device, before they are combined.
        limiter: the largest component; ``l1`` is split into ``l1`` (data stage) and
            ``l1_requests`` (the miss stage's request rate) by which of the two is larger.
        l1: the first level's costs with misses.
        l1_cycles_per_lup: first-level cycles per lup and SM: the larger of the wavefronts and the
            requests at the miss stage's rate.
        drain_cycles_per_lup: the unhidden wave-end latency per lup and SM (cycles).
        l2_load_bytes_per_lup, l2_store_bytes_per_lup, dram_load_bytes_per_lup,
        dram_store_bytes_per_lup: the volumes the times were computed with (bytes per lup).
        overlap_exponent: p of the smooth maximum of t_L1 and t_DRAM.
        dram_sector_cost: DRAM sector transfers per byte of the volume (partly covered sectors).
        dispatch_seconds_per_lup: the block scheduler's time per lup.
        launch_overhead_s: seconds per launch before the first block (added to the launch's time).
        dram_bandwidth_gb_s: the DRAM bandwidth of the launch.
    """

    lups_per_s: float
    seconds_per_lup: Mapping[str, float]
    limiter: str
    l1: L1MissCosts
    l1_cycles_per_lup: float
    drain_cycles_per_lup: float
    l2_load_bytes_per_lup: float
    l2_store_bytes_per_lup: float
    dram_load_bytes_per_lup: float
    dram_store_bytes_per_lup: float
    overlap_exponent: float
    dram_sector_cost: float = 1.0
    dispatch_seconds_per_lup: float = 0.0
    launch_overhead_s: float = 0.0
    dram_bandwidth_gb_s: float = 0.0

    @property
    def limits(self) -> dict[str, float]:
        """Each component alone as a rate (lups/s; infinite for a component without work), in the
        roofline's limiter names."""
        return {k: 1.0 / v if v > 0 else math.inf for k, v in self.seconds_per_lup.items()}

    def as_dict(self) -> dict:
        """JSON-ready details (``predict --json``'s ``overlap``)."""
        return {
            "lups_per_s": self.lups_per_s,
            "limiter": self.limiter,
            "limits": self.limits,
            "seconds_per_glup": {k: v * GIGA for k, v in self.seconds_per_lup.items()},
            "l1_data_wavefronts_per_lup": self.l1.data_wavefronts_per_lup,
            "l1_requests_per_lup": self.l1.requests_per_lup,
            "l1_cycles_per_lup": self.l1_cycles_per_lup,
            "drain_cycles_per_lup": self.drain_cycles_per_lup,
            "l1_capacity_miss_rate": self.l1.capacity_miss_rate,
            "l2_load_bytes_per_lup": self.l2_load_bytes_per_lup,
            "l2_store_bytes_per_lup": self.l2_store_bytes_per_lup,
            "dram_load_bytes_per_lup": self.dram_load_bytes_per_lup,
            "dram_store_bytes_per_lup": self.dram_store_bytes_per_lup,
            "overlap_exponent": self.overlap_exponent,
            "dram_sector_cost": self.dram_sector_cost,
            "dispatch_seconds_per_glup": self.dispatch_seconds_per_lup * GIGA,
            "launch_overhead_s": self.launch_overhead_s,
            "dram_bandwidth_gb_s": self.dram_bandwidth_gb_s,
        }


def smooth_max(a: float, b: float, p: float) -> float:
    """``(a^p + b^p)^(1/p)`` for non-negative ``a``, ``b`` (computed scaled, so no overflow)."""
    top = max(a, b)
    if top <= 0 or math.isinf(top):
        return top
    return top * ((a / top) ** p + (b / top) ** p) ** (1.0 / p)


@dataclass(frozen=True)
class OverlapComponents:
    """What the overlap model combines, computed once per configuration (seconds per lattice update
    per device unless said otherwise); :func:`combine` turns them into a time for any exponent and
    request rate (the fit of those two constants re-combines without recomputing them).

    Attributes:
        fp, l2: the roofline's FP and L2 times (:attr:`~warpspeed.roofline.limits.Roofline.seconds_per_lup`).
        further: the roofline's times of the levels a part adds (RDNA's graphics L1, a memory-side
            cache), by level.
        dram: the DRAM time with the partial-sector cost, at the launch's DRAM bandwidth with the
            knee of its resident blocks.
        l1_wavefront_cycles, l1_requests_per_lup, drain_cycles: first-level cycles per lup and SM
            (data and tag wavefronts with misses), L2 requests per lup and SM, unhidden wave-end
            cycles per lup and SM.
        requests_limited: whether the miss stage's request rate applies (NVIDIA L1TEX).
        dispatch: the block scheduler's time per lup (one block per ``block_dispatch_s`` and SM).
        sm_hz: SMs x clock (cycles per second of the device).
        launch_overhead_s, lups: seconds per launch before the first block runs; lups per launch.
    """

    fp: float
    l2: float
    further: tuple[tuple[str, float], ...]
    dram: float
    l1_wavefront_cycles: float
    l1_requests_per_lup: float
    drain_cycles: float
    requests_limited: bool
    dispatch: float
    sm_hz: float
    launch_overhead_s: float
    lups: int
    l1: L1MissCosts
    l2_load_bytes_per_lup: float
    l2_store_bytes_per_lup: float
    dram_load_bytes_per_lup: float
    dram_store_bytes_per_lup: float
    dram_sector_cost: float
    dram_bandwidth_gb_s: float


def dram_sector_cost(prediction: "Prediction", params: OverlapParams) -> float:
    """The factor on the time of ``prediction``'s DRAM volume from the partial-sector cost
    (dimensionless; 1 with the mechanism off or for rows that start and end on sector boundaries):
    per field, its load and
    store volume weighted by the sector cost of the block's rows (:mod:`warpspeed.memory.sectors`),
    over the whole volume. The sector cost prices every partly covered sector, so the capacity
    curve's partial-store reads (the same sectors, evicted before they were complete) are left out
    of the weighted volume rather than counted a second time."""
    dram = prediction.dram
    total = dram.load_bytes_per_lup + dram.store_bytes_per_lup
    if total <= 0 or (params.partial_sector_load_cost == 1.0 and params.partial_sector_store_cost == 1.0):
        return 1.0
    kernel, launch = prediction.kernel, prediction.launch.launch
    row = launch.block[0] * launch.fold[0]
    weighted = 0.0
    for name in prediction.footprint.per_field:
        f = dram.field(name)
        load, store = (f.load_bytes_per_lup - f.partial_store_read_bytes_per_lup,
                       f.store_bytes_per_lup - f.partial_store_read_bytes_per_lup)
        if load:
            weighted += load * sector_cost(kernel, name, "load", row, params.partial_sector_load_cost)
        if store:
            weighted += store * sector_cost(kernel, name, "store", row, params.partial_sector_store_cost)
    return weighted / total


#: Resident blocks per SM of the gpu-stream runs the Little's-law curve was fitted on (the benchmark
#: forces two with shared-memory padding; gpu-benches gpu-stream, the files' ``blocks_per_sm``).
CURVE_BLOCKS_PER_SM = 2


def launch_dram_gb_s(prediction: "Prediction") -> float:
    """The DRAM bandwidth of the launch (GB/s): the achievable bandwidth of the Little's-law curve,
    with the curve's knee sharpened by the resident blocks per SM.

    The curve (device file ``dram_curve_*``: peak ``B``, latency ``L``, sharpness ``p``) was fitted
    on gpu-stream, which holds two blocks per SM; its soft knee is the SM's ramp into and out of each
    block, when fewer bytes are in flight than in the steady state. With ``k`` resident blocks the
    other ``k - 1`` blocks cover one block's ramp, so the knee sharpens: exponent ``p x max(1, k /
    2)``, and the peak ``B`` is reached where the curve fitted on two blocks stays below it.
    Measured on an H200 (``fits/data/H200/mech-stream.csv``: a one-cell-per-thread copy): 3.6-3.8 TB/s
    at 4 and 8 blocks of 512 and 256 threads, where the two-block curve gives 3.0 TB/s; this rule gives
    3.65 and 3.87 TB/s. At one or two blocks the launch keeps the fitted curve (and its cap, the
    device's sustained bandwidth)."""
    from warpspeed.hardware.dram_curve import BandwidthParams, achievable_bandwidth

    bandwidth, device = prediction.dram_bandwidth, prediction.device
    k = prediction.launch.occupancy.blocks_per_sm
    if k <= CURVE_BLOCKS_PER_SM or not device.has_dram_curve or bandwidth.bytes_in_flight <= 0:
        return bandwidth.achievable_gb_s
    sharper = BandwidthParams(device.dram_curve_peak_gb_s, device.dram_curve_latency_ns,
                              device.dram_curve_sharpness * k / CURVE_BLOCKS_PER_SM)
    return float(achievable_bandwidth(bandwidth.bytes_in_flight, sharper))


def overlap_components(prediction: "Prediction", params: OverlapParams) -> OverlapComponents:
    """The components of ``prediction``'s configuration with ``params`` (module docstring)."""
    device, info = prediction.device, prediction.launch
    costs = prediction.l1_misses
    if costs is None:
        raise WarpspeedError("the overlap model needs the first level's miss costs of the prediction "
                             "(warpspeed.predict.Predictor computes them)")
    dram_load, dram_store = prediction.dram.load_bytes_per_lup, prediction.dram.store_bytes_per_lup
    sectors = dram_sector_cost(prediction, params) if device.vendor == "nvidia" else 1.0
    l2_load = prediction.l2_load_bytes_per_lup

    occ = info.occupancy
    lups_per_block = info.launch.threads_per_block * info.launch.cells_per_thread
    lups_per_wave = occ.blocks_per_sm * lups_per_block
    drain = params.drain_cycles / lups_per_wave if lups_per_wave > 0 else math.inf
    sm_hz = device.sms * device.clock_ghz * GIGA
    levels = prediction.roofline.seconds_per_lup
    dram_gb_s = launch_dram_gb_s(prediction)
    return OverlapComponents(
        fp=levels["fp"], l2=levels["l2"],
        further=tuple((k, v) for k, v in levels.items() if k not in LIMITERS),
        dram=(dram_load + dram_store) * sectors / (dram_gb_s * GIGA),
        l1_wavefront_cycles=costs.cycles_per_lup, l1_requests_per_lup=costs.requests_per_lup,
        drain_cycles=drain, requests_limited=first_level(device).models_misses,
        dispatch=params.block_dispatch_s / (lups_per_block * device.sms) if lups_per_block > 0 else 0.0,
        sm_hz=sm_hz, launch_overhead_s=params.launch_overhead_s, lups=math.prod(info.launch.domain), l1=costs,
        l2_load_bytes_per_lup=l2_load, l2_store_bytes_per_lup=prediction.l2_store_bytes_per_lup,
        dram_load_bytes_per_lup=dram_load, dram_store_bytes_per_lup=dram_store, dram_sector_cost=sectors,
        dram_bandwidth_gb_s=dram_gb_s)


def combine(c: OverlapComponents, exponent: float, requests_per_cycle: float) -> tuple[float, dict[str, float], float, str]:
    """Seconds per lattice update of one launch (launch overhead included), the time components
    (:data:`COMPONENTS`, seconds per lup), the first-level cycles per lup and SM, and the limiter:
    ``max(smooth max(t_L1, t_DRAM), t_L2, t_FP, t_dispatch, t_further levels)`` plus the launch
    overhead per lup."""
    requests = c.l1_requests_per_lup / requests_per_cycle if c.requests_limited else 0.0
    l1_cycles = max(c.l1_wavefront_cycles, requests)
    t = dict(zip(COMPONENTS, (c.fp, (l1_cycles + c.drain_cycles) / c.sm_hz, c.l2, c.dram)))
    further = dict(c.further)
    body = max(smooth_max(t["l1"], t["dram"], exponent), t["l2"], t["fp"], c.dispatch, *further.values())
    limiter = max(COMPONENTS, key=lambda k: t[k])
    level = max(further, key=further.__getitem__, default=None)
    if level is not None and further[level] > max(t[limiter], c.dispatch):
        limiter = level
    elif c.dispatch > t[limiter]:
        limiter = "dispatch"
    elif limiter == "l1" and requests > c.l1_wavefront_cycles:
        limiter = "l1_requests"
    return body + c.launch_overhead_s / c.lups, t, l1_cycles, limiter


def overlap_model(prediction: "Prediction", params: OverlapParams) -> OverlapResult:
    """The overlap model of ``prediction``'s configuration with ``params`` (module docstring)."""
    c = overlap_components(prediction, params)
    seconds, t, l1_cycles, limiter = combine(c, params.overlap_exponent, params.miss_requests_per_cycle)
    return OverlapResult(
        lups_per_s=1.0 / seconds if seconds > 0 else math.inf, seconds_per_lup=t, limiter=limiter, l1=c.l1,
        l1_cycles_per_lup=l1_cycles, drain_cycles_per_lup=c.drain_cycles, l2_load_bytes_per_lup=c.l2_load_bytes_per_lup,
        l2_store_bytes_per_lup=c.l2_store_bytes_per_lup, dram_load_bytes_per_lup=c.dram_load_bytes_per_lup,
        dram_store_bytes_per_lup=c.dram_store_bytes_per_lup, overlap_exponent=params.overlap_exponent,
        dram_sector_cost=c.dram_sector_cost, dispatch_seconds_per_lup=c.dispatch,
        launch_overhead_s=c.launch_overhead_s, dram_bandwidth_gb_s=c.dram_bandwidth_gb_s)
