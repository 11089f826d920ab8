"""The overlap model: the volumes of the four-limiter roofline, with the limits combined the way
a real GPU overlaps them.

The roofline of Ernst et al. (JPDC 2023) takes the minimum of four limits, which assumes that the
FP units, the L1, the L2 and DRAM all work in parallel without getting in each other's way. Timed
on an NVIDIA H200 (the paper's 168 configurations of the 25-point star stencil), the kernels the
roofline calls DRAM-bound reach only 1.7-2.2 TB/s of DRAM bandwidth while the L1 is busy 72-86 %
of the cycles: the roofline is 1.33x too fast at the median. Seven mechanisms, each with its
evidence in Nsight Compute profiles, timings or a microbenchmark that isolates it, and an eighth
for the SM's own time (``docs/overlap.md``):

1. **L1 misses cost data-stage wavefronts** (:mod:`warpspeed.memory.l1_misses`): one more
   wavefront per missing cache line.
2. **The miss stage sends a limited number of L2 requests per cycle** (one per missing line,
   :data:`~warpspeed.overlap.params.MISS_REQUESTS_PER_CYCLE` per SM).
3. **A wave of blocks ends with a latency nobody hides**: ``drain / (blocks per SM x lups per
   block)`` cycles per lup, ``drain`` the pointer-chase DRAM latency, the lups per block those of
   the grid's average block (``Launch.mean_cells_per_block``: the idle threads of the blocks at the
   domain's edges update nothing, ``docs/overlap.md`` mechanism 10; so for the dispatch time).
4. **The first level and DRAM overlap imperfectly**: their times combine as a smooth maximum,
   ``(t_L1^p + t_DRAM^p)^(1/p)`` (:data:`~warpspeed.overlap.params.OVERLAP_EXPONENT`).
5. **A sector a block row covers only in part is not shared in DRAM** (:mod:`warpspeed.memory.sectors`):
   the DRAM time prices the prediction's sector coverage, a partly covered sector at one transfer
   for a load and two for a store (:meth:`~warpspeed.memory.sectors.DramSectors.factor`).
6. **Resident blocks overlap each other's start and end**: the Little's-law knee sharpens with the
   resident blocks per SM (the prediction's
   :attr:`~warpspeed.memory.dram_bandwidth.DramBandwidth.resident_blocks_gb_s`).
7. **Blocks are dispatched at a limited rate and launches cost a fixed time** (the stored launch fit).
8. **The SM's pipes and the memory side overlap imperfectly**: the in-core time ``t_SM``
   (:mod:`warpspeed.incore`) joins the memory time ``t_mem = smooth max(t_L1, t_DRAM)`` in a second
   smooth maximum, ``(t_mem^r + t_SM^r)^(1/r)``
   (:data:`~warpspeed.overlap.params.CORE_OVERLAP_EXPONENT`, fitted on gpu-roofline runs of three
   parts, ``docs/incore.md``).

Time per launch = launch overhead + lups x max(smooth max_r(smooth max_p(t_L1, t_DRAM), t_SM),
t_L2, t_FP, t_dispatch, t_further) with

* ``t_L1 = (max(data-stage and tag wavefronts, L2 requests / rate) + drain / lups per wave of
  an SM) / (SMs x clock)``;
* ``t_FP``, ``t_L2``, ``t_SM`` and ``t_further`` (the levels a part adds: RDNA's graphics L1, a
  memory-side cache) the prediction's level times (:attr:`~warpspeed.levels.LevelDemand.seconds_per_lup`:
  each level's demand over its bandwidth);
* ``t_DRAM = DRAM bytes x sector cost / the launch's DRAM bandwidth``;
* ``t_dispatch`` the block dispatch time per lup.

Every volume and the first level's costs with misses are the prediction's
(:class:`~warpspeed.predict.Predictor` computes each level's demand once); :func:`overlap_model`
turns them into time components, one :class:`OverlapResult`; :func:`combine` turns those into a
time for given constants (:mod:`warpspeed.calibration.overlap_fit` refits the two fitted ones that way).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from warpspeed.errors import WarpspeedError
from warpspeed.files.records import json_record, recorded
from warpspeed.overlap.params import CORE_OVERLAP_EXPONENT, OverlapParams
from warpspeed.levels import LIMITERS
from warpspeed.units import GIGA

if TYPE_CHECKING:
    from warpspeed.prediction import Prediction

#: The components of the time, in report order: the roofline's limiter names.
COMPONENTS = LIMITERS
#: The in-core time's key among the further levels (:func:`warpspeed.levels.level_demands`).
CORE = "sm"


def smooth_max(a: float, b: float, p: float) -> float:
    """``(a^p + b^p)^(1/p)`` for non-negative ``a``, ``b`` (computed scaled, so no overflow)."""
    top = max(a, b)
    if top <= 0 or math.isinf(top):
        return top
    return top * ((a / top) ** p + (b / top) ** p) ** (1.0 / p)


def _limits(seconds_per_lup: Mapping[str, float]) -> dict[str, float]:
    """Each component alone as a rate (lups/s; infinite for a component without work)."""
    return {k: 1.0 / v if v > 0 else math.inf for k, v in seconds_per_lup.items()}


def _per_glup(seconds_per_lup: Mapping[str, float]) -> dict[str, float]:
    """Each component's seconds per 10^9 lattice updates."""
    return {k: _glup(v) for k, v in seconds_per_lup.items()}


def _glup(seconds_per_lup: float) -> float:
    """Seconds per 10^9 lattice updates."""
    return seconds_per_lup * GIGA


def _combined(**form: Any) -> Any:
    """A field :func:`combine` fills in when the record is made (not an argument of :class:`OverlapResult`)."""
    return recorded(init=False, **form)


def _input() -> Any:
    """An input of :func:`combine` alone, left out of the record's JSON."""
    return recorded(json=False)


@dataclass(frozen=True)
class OverlapResult:
    """The overlap model's verdict on one configuration: what it combines, computed once per
    configuration from the prediction (:func:`overlap_model`), and the combination for its
    constants (the fields marked combined, filled in by :func:`combine` when the record is made;
    the fit of the two fitted constants re-combines a record's inputs for other constants without
    predicting again). Times in seconds per lattice update per device, cycles per lattice update
    and SM. Its JSON (``predict --json``'s ``overlap``, :func:`warpspeed.files.records.json_record`)
    is derived from the fields, in their order; the inputs of :func:`combine` alone are left out.

    Attributes:
        lups_per_s: lattice updates per second (combined).
        limiter: the largest component (combined); ``l1`` is split into ``l1`` (data stage) and
            ``l1_requests`` (the miss stage's request rate) by which of the two is larger.
        limits: each component alone as a rate (combined; lups/s, infinite for a component
            without work), in the roofline's limiter names.
        seconds_per_lup: the time components (combined; :data:`COMPONENTS`, then the further levels
            a part adds: the in-core time ``sm``, RDNA's graphics L1, a memory-side cache), before
            they are combined; recorded per 10^9 lups (``seconds_per_glup``).
        l1_data_wavefronts_per_lup, l1_requests_per_lup, l1_capacity_miss_rate: the first level's
            data-stage wavefronts with one per missing line, its L1 -> L2 requests, and the
            probability used for its capacity misses (:class:`~warpspeed.memory.l1_misses.L1MissCosts`).
        l1_cycles_per_lup: first-level cycles (combined): the larger of the wavefronts and the
            requests at the miss stage's rate.
        drain_cycles_per_lup: the unhidden wave-end latency.
        l2_load_bytes_per_lup, l2_store_bytes_per_lup, dram_load_bytes_per_lup,
        dram_store_bytes_per_lup: the volumes the times were computed with (bytes per lup).
        overlap_exponent: p of the smooth maximum of t_L1 and t_DRAM.
        core_exponent: r of the smooth maximum of that memory time and the in-core time.
        dram_sector_cost: DRAM sector transfers per byte of the volume (partly covered sectors).
        dispatch_seconds_per_lup: the block scheduler's time (one block per ``block_dispatch_s``
            and SM); recorded per 10^9 lups (``dispatch_seconds_per_glup``).
        launch_overhead_s: seconds per launch before the first block (added to the launch's time).
        dram_bandwidth_gb_s: the DRAM bandwidth of the launch (the knee of its resident blocks).
        miss_requests_per_cycle: the miss stage's L1 -> L2 requests per cycle and SM.
        fp, l2: the FP and L2 levels' times (:attr:`~warpspeed.levels.LevelDemand.seconds_per_lup`).
        further: the times of the levels a part adds, by level.
        dram: the DRAM time with the partial-sector cost, at :attr:`dram_bandwidth_gb_s`.
        l1_wavefront_cycles: first-level cycles of the data and tag wavefronts with misses.
        requests_limited: whether the miss stage's request rate applies (NVIDIA L1TEX).
        sm_hz: SMs x clock (cycles per second of the device).
        lups: lattice updates per launch.
    """

    lups_per_s: float = _combined()
    limiter: str = _combined()
    limits: Mapping[str, float] = _combined()
    seconds_per_lup: Mapping[str, float] = _combined(key="seconds_per_glup", value=_per_glup)
    l1_data_wavefronts_per_lup: float
    l1_requests_per_lup: float
    l1_cycles_per_lup: float = _combined()
    drain_cycles_per_lup: float
    l1_capacity_miss_rate: float
    l2_load_bytes_per_lup: float
    l2_store_bytes_per_lup: float
    dram_load_bytes_per_lup: float
    dram_store_bytes_per_lup: float
    overlap_exponent: float
    core_exponent: float
    dram_sector_cost: float
    dispatch_seconds_per_lup: float = recorded(key="dispatch_seconds_per_glup", value=_glup)
    launch_overhead_s: float
    dram_bandwidth_gb_s: float
    miss_requests_per_cycle: float = _input()
    fp: float = _input()
    l2: float = _input()
    further: tuple[tuple[str, float], ...] = _input()
    dram: float = _input()
    l1_wavefront_cycles: float = _input()
    requests_limited: bool = _input()
    sm_hz: float = _input()
    lups: int = _input()

    def __post_init__(self) -> None:
        seconds, t, l1_cycles, limiter = combine(self, self.overlap_exponent, self.miss_requests_per_cycle,
                                                 self.core_exponent)
        combined = {"lups_per_s": 1.0 / seconds if seconds > 0 else math.inf, "limiter": limiter,
                    "limits": _limits(t), "seconds_per_lup": t, "l1_cycles_per_lup": l1_cycles}
        for name, value in combined.items():
            object.__setattr__(self, name, value)

    def as_dict(self) -> dict:
        """JSON-ready details (``predict --json``'s ``overlap``): :func:`~warpspeed.files.records.json_record`."""
        return json_record(self)


def combine(c: OverlapResult, exponent: float, requests_per_cycle: float,
            core_exponent: float = CORE_OVERLAP_EXPONENT) -> tuple[float, dict[str, float], float, str]:
    """Seconds per lattice update of one launch (launch overhead included), the time components
    (:data:`COMPONENTS`, seconds per lup), the first-level cycles per lup and SM, and the limiter:
    ``max(smooth max_r(smooth max_p(t_L1, t_DRAM), t_SM), t_L2, t_FP, t_dispatch, t_further levels)``
    plus the launch overhead per lup (``p``: ``exponent``, ``r``: ``core_exponent``; ``t_SM`` the
    in-core time, 0 for a part without one), from the inputs of ``c`` (its combined fields are not read)."""
    requests = c.l1_requests_per_lup / requests_per_cycle if c.requests_limited else 0.0
    l1_cycles = max(c.l1_wavefront_cycles, requests)
    t = dict(zip(COMPONENTS, (c.fp, (l1_cycles + c.drain_cycles_per_lup) / c.sm_hz, c.l2, c.dram)))
    further = dict(c.further)
    dispatch = c.dispatch_seconds_per_lup
    others = [v for k, v in further.items() if k != CORE]
    memory = smooth_max(smooth_max(t["l1"], t["dram"], exponent), further.get(CORE, 0.0), core_exponent)
    body = max(memory, t["l2"], t["fp"], dispatch, *others)
    limiter = max(COMPONENTS, key=lambda k: t[k])
    level = max(further, key=further.__getitem__, default=None)
    t.update(further)  # the further levels' times are components too (limits, seconds_per_glup)
    if level is not None and further[level] > max(t[limiter], dispatch):
        limiter = level
    elif dispatch > t[limiter]:
        limiter = "dispatch"
    elif limiter == "l1" and requests > c.l1_wavefront_cycles:
        limiter = "l1_requests"
    return body + c.launch_overhead_s / c.lups, t, l1_cycles, limiter


def overlap_model(prediction: "Prediction", params: OverlapParams) -> OverlapResult:
    """The overlap model of ``prediction``'s configuration with ``params`` (module docstring)."""
    device, info = prediction.device, prediction.launch
    costs = prediction.l1_misses
    if costs is None:
        raise WarpspeedError("the overlap model needs the first level's miss costs of the prediction "
                             "(warpspeed.predict.Predictor computes them)")
    dram_load, dram_store = prediction.dram.load_bytes_per_lup, prediction.dram.store_bytes_per_lup
    coverage = prediction.dram_sectors
    sectors = (coverage.factor(params.partial_sector_load_cost, params.partial_sector_store_cost)
               if coverage is not None else 1.0)

    occ = info.occupancy
    lups_per_block = info.launch.mean_cells_per_block  # the edges' idle threads update nothing (mechanism 10)
    lups_per_wave = occ.blocks_per_sm * lups_per_block
    drain = params.drain_cycles / lups_per_wave if lups_per_wave > 0 else math.inf
    levels = {lv.key: lv.seconds_per_lup for lv in prediction.levels if lv.lups_per_s is not None}
    dram_gb_s = prediction.dram_bandwidth.resident_blocks_gb_s
    return OverlapResult(
        l1_data_wavefronts_per_lup=costs.data_wavefronts_per_lup, l1_requests_per_lup=costs.requests_per_lup,
        drain_cycles_per_lup=drain, l1_capacity_miss_rate=costs.capacity_miss_rate,
        l2_load_bytes_per_lup=prediction.l2_load_bytes_per_lup, l2_store_bytes_per_lup=prediction.l2_store_bytes_per_lup,
        dram_load_bytes_per_lup=dram_load, dram_store_bytes_per_lup=dram_store,
        overlap_exponent=params.overlap_exponent, core_exponent=params.core_exponent, dram_sector_cost=sectors,
        dispatch_seconds_per_lup=params.block_dispatch_s / (lups_per_block * device.sms) if lups_per_block > 0 else 0.0,
        launch_overhead_s=params.launch_overhead_s, dram_bandwidth_gb_s=dram_gb_s,
        miss_requests_per_cycle=params.miss_requests_per_cycle,
        fp=levels["fp"], l2=levels["l2"], further=tuple((k, v) for k, v in levels.items() if k not in LIMITERS),
        dram=(dram_load + dram_store) * sectors / (dram_gb_s * GIGA),
        l1_wavefront_cycles=costs.cycles_per_lup, requests_limited=costs.requests_limited,
        sm_hz=device.sms * device.clock_ghz * GIGA, lups=math.prod(info.launch.domain))
