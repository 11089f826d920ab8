"""The AMALI interval model on a warpspeed trace: kernel cycles as a CPI stack.

Cao, Wu, Chen, An, Yu, "AMALI: An Analytical Model for Accurately Modeling LLM Inference on
Modern GPUs", ISCA 2025 (GCoM, Lee et al., ISCA 2022, for the parts AMALI keeps):

``C = S_I + S_IP + KLL + ID`` (eq 16), reported under Nsight Compute's stall-reason names:
``selected``, ``stall_wait``, ``stall_long_scoreboard``, ``stall_short_scoreboard``
(S_I, eq 18), ``stall_math_pipe_throttle``, ``stall_lg_throttle``, ``stall_mio_throttle``
(S_IP, eq 21; ``stall_tex_throttle`` is 0), ``stall_imc_miss_no_instruction`` (the launch cost
KLL, eq 27) and ``idle`` (the warp-instruction distribution ID, eq 29).

SM level (section 4.7): the grid's blocks are dealt round robin to ``P_act = min(SMs, blocks)``
SMs (:mod:`warpspeed.interval.dealing`); each SM runs its blocks in batches of ``M`` resident
blocks, each batch a mix of full warps (the representative warp's path, ``I_full``
instructions) and guard-only warps (the guard-exit path, ``I_guard``), as the launch geometry
gives them (:func:`~warpspeed.interval.multiwarp.batch_stack`). Per SM:

- ``S_I + S_IP``: the sum of its batches;
- ``ID = max(0, max_c I_c / IR - S_selected)``: the instructions of its busiest sub-core over the
  issue rate, less the issue cycles the model charged (eq 29 with ``I_SC(repr) = S_selected IR``,
  the load the issue term, eq 9, spreads over the active sub-cores);
- ``KLL = k + max(0, n_b d + T_warp - (S_I + S_IP + ID))``: the per-launch overhead ``k`` and,
  where the SM's own work does not cover it, the dispatch of its ``n_b`` blocks at ``d`` each
  plus the last block's single-warp time ``T_warp`` (:mod:`warpspeed.calibration.launch`: the
  dispatch overlaps the blocks' work on measured GPUs).

The kernel takes as long as its slowest SM, whose stack is reported, but never longer than the
mean over the SMs (eq 3) plus one batch (:func:`combine_sms`: the GPU hands blocks to SMs as they
free a slot, which evens out SMs dealt unequal blocks).

**Never faster than the bandwidth bound.** The contention term is a queueing delay, not a
bandwidth ceiling, so on its own the model can beat the DRAM, L2 or L1 bandwidth (see
``docs/interval.md``). The model therefore takes ``C = max(C_model, T_roofline x f)`` with
``T_roofline`` the roofline's time of the same configuration; the difference is reported as
``bandwidth_floor_cycles`` and added to the stall the binding level shows in Nsight Compute:
``stall_long_scoreboard`` for DRAM and L2, ``stall_lg_throttle`` for the L1,
``stall_math_pipe_throttle`` for the FP units.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from warpspeed.interval.dealing import Dealing, deal_blocks
from warpspeed.interval.latency import dram_store_ratio, instruction_cost
from warpspeed.interval.multiwarp import BATCH_KEYS, batch_stack
from warpspeed.interval.params import IntervalParams
from warpspeed.interval.profile import Interval, profile
from warpspeed.levels import LIMITERS
from warpspeed.trace.document import Trace
from warpspeed.units import GIGA

#: Every entry of the CPI stack, in the order reports show them.
STACK_KEYS = (*BATCH_KEYS[:5], "stall_lg_throttle", "stall_tex_throttle", "stall_mio_throttle",
              "stall_imc_miss_no_instruction", "idle")
#: Where the bandwidth floor's excess cycles go, by the roofline's limiter.
FLOOR_ENTRY = dict(zip(LIMITERS, ("stall_math_pipe_throttle", "stall_lg_throttle", "stall_long_scoreboard",
                                   "stall_long_scoreboard")))
#: Issue-slot policies for the hidden stall cycles (GCoM): loose round robin or greedy-then-oldest.
POLICIES = ("lrr", "gto")


@dataclass(frozen=True)
class IntervalResult:
    """Kernel cycles (SM cycles) and their CPI stack; ``seconds`` at the device clock. The batch
    figures are those of the slowest SM: ``batches`` it runs, and its most frequent batch
    (``full_warps_per_batch`` + ``guard_warps_per_batch`` = ``warps_per_batch`` warps,
    ``batch_cycles`` cycles)."""

    cycles: float
    seconds: float
    lups_per_s: float
    cpi_stack: dict[str, float]
    launch_latency_cycles: float
    bandwidth_floor_cycles: float
    batch_cycles: float
    batches: int
    warps_per_batch: int
    full_warps_per_batch: int
    guard_warps_per_batch: int
    options: dict[str, object]

    @property
    def explanation(self) -> str:
        """The largest stack entry."""
        return max(self.cpi_stack, key=self.cpi_stack.get)

    def as_dict(self) -> dict:
        return {"cycles": self.cycles, "seconds": self.seconds, "lups_per_s": self.lups_per_s,
                "cpi_stack": dict(self.cpi_stack), "launch_latency_cycles": self.launch_latency_cycles,
                "bandwidth_floor_cycles": self.bandwidth_floor_cycles, "batch_cycles": self.batch_cycles,
                "batches": self.batches, "warps_per_batch": self.warps_per_batch,
                "full_warps_per_batch": self.full_warps_per_batch,
                "guard_warps_per_batch": self.guard_warps_per_batch, "options": dict(self.options)}


def distribution_idle(sub_core_instructions: np.ndarray, selected_cycles: np.ndarray, issue_rate: float) -> np.ndarray:
    """ID (eq 29) per SM: the busiest sub-core's warp instructions (``sub_core_instructions[s, c]``)
    over the issue rate, less the issue cycles the model charged the SM (``S_selected``), never
    negative."""
    return np.maximum(0.0, np.asarray(sub_core_instructions).max(axis=1) / issue_rate - selected_cycles)


def launch_latency(blocks: np.ndarray, work_cycles: np.ndarray, warp_cycles: float,
                   params: IntervalParams) -> np.ndarray:
    """KLL per SM receiving ``blocks`` blocks whose work takes ``work_cycles``: the per-launch
    overhead plus the part of the block dispatch (``blocks d``, then one warp's ``warp_cycles``)
    the work does not cover."""
    dispatch = np.asarray(blocks) * params.block_dispatch_cycles + warp_cycles
    return params.kll_k + np.maximum(0.0, dispatch - work_cycles)


@dataclass(frozen=True)
class Combined:
    """The kernel's SM-level cycles: ``work`` by :data:`BATCH_KEYS`, ``idle`` (ID), ``blocks`` the
    SM receives, and the ``rule`` that combined the SMs."""

    work: np.ndarray
    idle: float
    blocks: float
    rule: str


def combine_sms(per_sm: np.ndarray, idle: np.ndarray, blocks: np.ndarray, per_composition: np.ndarray) -> Combined:
    """The kernel's cycles from the SMs' (``per_sm[s]`` by :data:`BATCH_KEYS`, ``idle[s]``,
    ``blocks[s]``): the slowest SM of the round-robin dealing, but never more than the mean over
    the SMs (eq 3) plus the costliest batch. The GPU hands a block to whichever SM frees a slot,
    so an SM dealt lighter blocks takes more of them and the SMs finish within about one batch of
    each other (Graham's bound for list scheduling: mean load + the largest job); with alike
    blocks the slowest SM (one more block than others) is below that bound and exact."""
    totals = per_sm.sum(axis=1) + idle
    slowest = int(np.argmax(totals))
    largest = int(np.argmax(per_composition.sum(axis=1)))
    balanced = totals.mean() + per_composition[largest].sum()
    if totals[slowest] <= balanced:
        return Combined(per_sm[slowest], float(idle[slowest]), float(blocks[slowest]), "slowest SM")
    return Combined(per_sm.mean(axis=0) + per_composition[largest], float(idle.mean()), float(blocks.mean()),
                    "SM mean + one batch")


def _batch_stacks(dealing: Dealing, full: list[Interval], guard: list[Interval], params: IntervalParams,
                  dram_bw: float, policy: str, dram_writes: bool) -> np.ndarray:
    """Cycles of each of the dealing's batch compositions, by :data:`BATCH_KEYS` (rows)."""
    rows = []
    for full_warps, guard_warps in dealing.compositions:
        if full_warps:
            s = batch_stack(full, full_warps, params, dealing.active_sms, dram_bw, policy, dram_writes, guard_warps)
        else:  # only guard-only warps: the guard-exit path is the whole timeline
            s = batch_stack(guard, guard_warps, params, dealing.active_sms, dram_bw, policy, dram_writes)
        rows.append([s[k] for k in BATCH_KEYS])
    return np.array(rows, dtype=float).reshape(len(rows), len(BATCH_KEYS))


def interval_model(trace: Trace, params: IntervalParams, policy: str = "lrr", dram_writes: bool = True,
                   floor: bool = True) -> IntervalResult:
    """The interval model of ``trace`` (:class:`~warpspeed.trace.document.Trace`; a JSON document
    read with :func:`~warpspeed.trace.document.trace_from_json`) on a device with ``params``."""
    launch, memory = trace.launch, trace.memory
    stream = trace.instructions.stream
    i_guard = min(int(trace.instructions.guard_exit_instructions), len(stream))
    ratio = dram_store_ratio(memory)
    costs = [instruction_cost(ins, memory, params, ratio) for ins in stream]
    sources, destinations = [ins.src for ins in stream], [ins.dst for ins in stream]
    full = profile(costs, sources, destinations, guard_instructions=i_guard)
    guard = profile(costs[:i_guard], sources[:i_guard], destinations[:i_guard]) if i_guard else []
    w_b = launch.warps_per_block
    dealing = deal_blocks(launch.grid, launch.block_kinds, w_b, launch.blocks_per_sm, params.sms,
                          params.sub_cores, len(stream), i_guard)
    per_composition = _batch_stacks(dealing, full, guard, params, trace.roofline.dram_bandwidth_gb_s, policy,
                                    dram_writes)
    per_sm = dealing.batch_counts @ per_composition  # (SMs, BATCH_KEYS)
    selected = per_sm[:, BATCH_KEYS.index("selected")]
    idle = distribution_idle(dealing.sub_core_instructions, selected, params.issue_rate)
    work = per_sm.sum(axis=1) + idle
    combined = combine_sms(per_sm, idle, dealing.blocks.astype(float), per_composition)
    kll = launch_latency(np.array([combined.blocks]), np.array([combined.work.sum() + combined.idle]),
                         sum(k.instructions + k.stall for k in full), params)
    stack = dict.fromkeys(STACK_KEYS, 0.0)
    for key, value in zip(BATCH_KEYS, combined.work):
        stack[key] = float(value)
    stack["stall_imc_miss_no_instruction"] = float(kll[0])
    stack["idle"] = float(combined.idle)
    cycles = sum(stack.values())
    lups = trace.kernel.lups
    roof = trace.roofline.lups_per_s
    floor_cycles = 0.0
    if floor and roof:
        bound = lups / roof * params.clock_ghz * GIGA
        if bound > cycles:
            floor_cycles = bound - cycles
            stack[FLOOR_ENTRY.get(trace.roofline.limiter, "stall_long_scoreboard")] += floor_cycles
            cycles = bound
    seconds = cycles / (params.clock_ghz * GIGA)
    slowest = int(np.argmax(work))
    counts = dealing.batch_counts[slowest]
    common = int(np.argmax(counts))
    full_warps, guard_warps = dealing.compositions[common]
    return IntervalResult(cycles=cycles, seconds=seconds, lups_per_s=lups / seconds, cpi_stack=stack,
                          launch_latency_cycles=stack["stall_imc_miss_no_instruction"],
                          bandwidth_floor_cycles=floor_cycles, batch_cycles=float(per_composition[common].sum()),
                          batches=int(counts.sum()), warps_per_batch=full_warps + guard_warps,
                          full_warps_per_batch=full_warps, guard_warps_per_batch=guard_warps,
                          options={"policy": policy, "dram_writes": dram_writes, "floor": floor,
                                   "sm_combine": combined.rule, "sub_core_mapping": "SM warp slot mod sub-cores"})
