"""Cycles of one batch of x resident warps on an SM: issue, hidden and exposed stalls,
structural stalls and memory contention (GCoM eqs 4-13 and 24 as AMALI uses them; the choices
where the papers leave one open are stated in ``docs/interval.md``).

For x warps on an SM with ``n_sc`` sub-cores: ``n_act = min(x, n_sc)``, ``o = ceil(x / n_sc) - 1``
other warps per sub-core, issue probability ``p = sum I / (sum I + sum S)`` and mean interval
``I_bar = sum I / K``. Per interval k:

- issue (selected): ``base_k = I_k x / (n_act IR)`` (eq 9);
- hidden stall cycles: ``o p`` (round-robin issue, "lrr") or ``min(S_k p, 1) o I_bar`` ("gto");
  the exposed stall ``max(S_k - hidden / IR, 0)`` goes to the interval's stall class;
- structural: ``C_m = II_m x / (n_act IR)`` per compute unit, ``C_L1 = ceil(b_k / B_L1) x`` with
  ``B_L1 = 1`` wavefront per cycle; the excess of the largest over ``base_k`` is ``lg_throttle``
  when the L1 is the largest, else ``math_pipe_throttle`` (eqs 8, 12, 13, 22, 23);
- contention (``mio_throttle``): NoC and DRAM queueing of the interval's sectors from all active SMs,
  and MSHR serialisation when the reads exceed the MSHRs (eq 24).
"""

from __future__ import annotations

import math
from typing import Sequence

from warpspeed.interval.latency import COMPUTE_UNITS, LONG, SHORT, WAIT
from warpspeed.interval.params import IntervalParams
from warpspeed.interval.profile import Interval
from warpspeed.trace.build import SECTOR_BYTES

#: L1 wavefronts the L1 serves per cycle (the data pipe: 128 B per cycle).
L1_WAVEFRONTS_PER_CYCLE = 1.0
#: Bytes per second per GB/s.
GB = 1e9
#: The stack entries of one batch.
BATCH_KEYS = ("selected", "stall_wait", "stall_long_scoreboard", "stall_short_scoreboard",
              "stall_math_pipe_throttle", "stall_lg_throttle", "stall_mio_throttle")
_STALL_KEY = {WAIT: "stall_wait", LONG: "stall_long_scoreboard", SHORT: "stall_short_scoreboard"}


def batch_stack(intervals: Sequence[Interval], warps: int, params: IntervalParams, active_sms: int,
                dram_bandwidth_gb_s: float, policy: str = "lrr", dram_writes: bool = True) -> dict[str, float]:
    """Cycles of one batch of ``warps`` resident warps, by stack entry (:data:`BATCH_KEYS`)."""
    stack = dict.fromkeys(BATCH_KEYS, 0.0)
    if warps <= 0 or not intervals:
        return stack
    x, ir, n_sc = warps, params.issue_rate, params.sub_cores
    n_act = min(x, n_sc)
    o = math.ceil(x / n_sc) - 1
    total_i = sum(k.instructions for k in intervals)
    total_s = sum(k.stall for k in intervals)
    p = total_i / (total_i + total_s) if total_i + total_s > 0 else 1.0
    mean_i = total_i / len(intervals)
    f_hz = params.clock_ghz * GB
    tau_noc = f_hz * SECTOR_BYTES / (params.noc_bandwidth_gb_s * GB)
    tau_dram = f_hz * SECTOR_BYTES / (dram_bandwidth_gb_s * GB)
    for k in intervals:
        base = k.instructions * x / (n_act * ir)
        stack["selected"] += base
        hidden = o * p if policy == "lrr" else min(k.stall * p, 1.0) * o * mean_i
        stack[_STALL_KEY[k.flag]] += max(k.stall - hidden / ir, 0.0)
        structural = {m: k.unit_ii[m] * x / (n_act * ir) for m in COMPUTE_UNITS}
        structural["l1"] = math.ceil(k.wavefronts / L1_WAVEFRONTS_PER_CYCLE - 1e-9) * x
        worst = max(structural, key=structural.get)
        excess = max(structural[worst] - base, 0.0)
        stack["stall_lg_throttle" if worst == "l1" else "stall_math_pipe_throttle"] += excess
        stack["stall_mio_throttle"] += _contention(k, x, params, active_sms, tau_noc, tau_dram, dram_writes)
    return stack


def _contention(k: Interval, x: int, params: IntervalParams, active_sms: int, tau_noc: float, tau_dram: float,
                dram_writes: bool) -> float:
    """Eq 24 for one interval: NoC, DRAM and MSHR queueing cycles."""
    reads = k.reads * x
    limited = not params.unlimited_mshrs and reads > params.mshrs
    r = min(reads, params.mshrs) if limited else reads
    w = k.writes * x
    m2 = k.dram_reads / k.reads if k.reads > 0 else 0.0
    dram = r * m2 + (k.dram_writes * x if dram_writes else 0.0)
    phi = 1.0 if limited and tau_noc * (r + w) * active_sms > params.l2_latency + params.dram_latency else 0.5
    cycles = phi * active_sms * (r + w) * tau_noc + phi * active_sms * dram * tau_dram
    if limited:
        rounds = math.ceil(reads / params.mshrs) - 1
        cycles += (params.l2_latency + m2 * params.dram_latency
                   + phi * active_sms * r * (tau_noc + m2 * tau_dram)) * rounds
    return cycles
