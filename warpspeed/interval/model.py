"""The AMALI interval model on a warpspeed trace: kernel cycles as a CPI stack.

Cao, Wu, Chen, An, Yu, "AMALI: An Analytical Model for Accurately Modeling LLM Inference on
Modern GPUs", ISCA 2025 (GCoM, Lee et al., ISCA 2022, for the parts AMALI keeps):

``C = S_I + S_IP + KLL + ID`` (eq 16), reported under Nsight Compute's stall-reason names:
``selected``, ``stall_wait``, ``stall_long_scoreboard``, ``stall_short_scoreboard``
(S_I, eq 18), ``stall_math_pipe_throttle``, ``stall_lg_throttle``, ``stall_mio_throttle``
(S_IP, eq 21; ``stall_tex_throttle`` is 0), ``stall_imc_miss_no_instruction`` (the launch
latency KLL, eqs 27-28) and ``idle`` (the warp-instruction distribution ID, eq 29).

SM level (section 4.7): ``P_act = min(SMs, blocks)`` SMs; the busiest gets ``ceil(blocks /
P_act)`` blocks, run in batches of ``M`` resident blocks (``x = M`` warps per block warps) plus
one partial batch; the kernel takes as long as the busiest SM.

**Never faster than the bandwidth bound.** The contention term is a queueing delay, not a
bandwidth ceiling, so on its own the model can beat the DRAM, L2 or L1 bandwidth (see
``docs/interval.md``). The model therefore takes ``C = max(C_model, T_roofline x f)`` with
``T_roofline`` the roofline's time of the same configuration; the difference is reported as
``bandwidth_floor_cycles`` and added to the stall the binding level shows in Nsight Compute:
``stall_long_scoreboard`` for DRAM and L2, ``stall_lg_throttle`` for the L1,
``stall_math_pipe_throttle`` for the FP units.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

from warpspeed.interval.latency import dram_store_ratio, instruction_cost
from warpspeed.interval.multiwarp import BATCH_KEYS, GB, batch_stack
from warpspeed.interval.params import IntervalParams
from warpspeed.interval.profile import profile

#: Every entry of the CPI stack, in the order reports show them.
STACK_KEYS = (*BATCH_KEYS[:5], "stall_lg_throttle", "stall_tex_throttle", "stall_mio_throttle",
              "stall_imc_miss_no_instruction", "idle")
#: Where the bandwidth floor's excess cycles go, by the roofline's limiter.
FLOOR_ENTRY = {"dram": "stall_long_scoreboard", "l2": "stall_long_scoreboard", "l1": "stall_lg_throttle",
               "fp": "stall_math_pipe_throttle"}
#: Issue-slot policies for the hidden stall cycles (GCoM): loose round robin or greedy-then-oldest.
POLICIES = ("lrr", "gto")


@dataclass(frozen=True)
class IntervalResult:
    """Kernel cycles (SM cycles) and their CPI stack; ``seconds`` at the device clock."""

    cycles: float
    seconds: float
    lups_per_s: float
    cpi_stack: dict[str, float]
    launch_latency_cycles: float
    bandwidth_floor_cycles: float
    batch_cycles: float
    batches: int
    warps_per_batch: int
    options: dict[str, object]

    @property
    def explanation(self) -> str:
        """The largest stack entry."""
        return max(self.cpi_stack, key=self.cpi_stack.get)

    def as_dict(self) -> dict:
        return {"cycles": self.cycles, "seconds": self.seconds, "lups_per_s": self.lups_per_s,
                "cpi_stack": dict(self.cpi_stack), "launch_latency_cycles": self.launch_latency_cycles,
                "bandwidth_floor_cycles": self.bandwidth_floor_cycles, "batch_cycles": self.batch_cycles,
                "batches": self.batches, "warps_per_batch": self.warps_per_batch, "options": dict(self.options)}


def launch_latency(blocks: int, warps_per_block: int, params: IntervalParams) -> float:
    """KLL = s GS + k with s = alpha BS^2 + beta BS + gamma, BS in warps, GS in blocks (eqs 27-28)."""
    bs = warps_per_block
    return (params.kll_alpha * bs * bs + params.kll_beta * bs + params.kll_gamma) * blocks + params.kll_k


def blocks_on_busiest_sm(blocks: int, sms: int) -> tuple[int, int]:
    """``(P_act, blocks on the busiest SM)``: blocks dealt round robin to ``min(sms, blocks)`` SMs."""
    active = min(sms, blocks)
    return active, math.ceil(blocks / active)


def distribution_idle(warps_per_block: int, blocks: int, instructions: int, params: IntervalParams) -> float:
    """ID (eq 29): warp instructions of the busiest sub-core minus those of the representative
    warp's sub-core (warp w of a block on sub-core ``w mod sub-cores``, representative = warp 0),
    over the issue rate."""
    per_sub_core = [0] * params.sub_cores
    for w in range(warps_per_block):
        per_sub_core[w % params.sub_cores] += blocks * instructions
    return (max(per_sub_core) - per_sub_core[0]) / params.issue_rate


def interval_model(trace: Mapping, params: IntervalParams, policy: str = "lrr", dram_writes: bool = True,
                   floor: bool = True) -> IntervalResult:
    """The interval model of ``trace`` (a ``warpspeed-trace`` document) on a device with ``params``."""
    launch, memory = trace["launch"], trace["memory"]
    stream = trace["instructions"]["stream"]
    ratio = dram_store_ratio(memory)
    costs = [instruction_cost(ins, memory, params, ratio) for ins in stream]
    intervals = profile(costs, [ins["src"] for ins in stream], [ins["dst"] for ins in stream])
    active, blocks_per_sm = blocks_on_busiest_sm(launch["blocks"], params.sms)
    m, w_b = launch["blocks_per_sm"], launch["warps_per_block"]
    full_batches, rest = divmod(blocks_per_sm, m)
    dram_bw = trace["roofline"]["dram_bandwidth_gb_s"]
    stack = dict.fromkeys(STACK_KEYS, 0.0)
    full = batch_stack(intervals, m * w_b, params, active, dram_bw, policy, dram_writes)
    for key, value in full.items():
        stack[key] += value * full_batches
    if rest:
        for key, value in batch_stack(intervals, rest * w_b, params, active, dram_bw, policy, dram_writes).items():
            stack[key] += value
    stack["stall_imc_miss_no_instruction"] = launch_latency(launch["blocks"], w_b, params)
    stack["idle"] = distribution_idle(w_b, blocks_per_sm, len(stream), params)
    cycles = sum(stack.values())
    lups = trace["kernel"]["lups"]
    roof = trace["roofline"]["lups_per_s"]
    floor_cycles = 0.0
    if floor and roof:
        bound = lups / roof * params.clock_ghz * GB
        if bound > cycles:
            floor_cycles = bound - cycles
            stack[FLOOR_ENTRY.get(trace["roofline"]["limiter"], "stall_long_scoreboard")] += floor_cycles
            cycles = bound
    seconds = cycles / (params.clock_ghz * GB)
    return IntervalResult(cycles=cycles, seconds=seconds, lups_per_s=lups / seconds, cpi_stack=stack,
                          launch_latency_cycles=stack["stall_imc_miss_no_instruction"],
                          bandwidth_floor_cycles=floor_cycles, batch_cycles=sum(full.values()),
                          batches=full_batches + (1 if rest else 0), warps_per_batch=m * w_b,
                          options={"policy": policy, "dram_writes": dram_writes, "floor": floor,
                                   "sm_combine": "max", "kll_block_size_unit": "warps"})
