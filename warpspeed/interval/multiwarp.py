"""Cycles of one batch of x resident warps on an SM: issue, hidden and exposed stalls,
structural stalls and memory contention (GCoM eqs 4-13 and 24 as AMALI uses them; the choices
where the papers leave one open are stated in ``docs/interval.md``).

For x warps on an SM with ``n_sc`` sub-cores: ``n_act = min(x, n_sc)``, ``o = ceil(x / n_sc) - 1``
other warps per sub-core, issue probability ``p = sum I / (sum I + sum S)`` and mean interval
``I_bar = sum I / K``. Per interval k:

- issue (selected): ``base_k = I_k x / (n_act IR)`` (eq 9);
- hidden stall cycles: ``o p`` (round-robin issue, "lrr") or ``min(S_k p, 1) o I_bar`` ("gto");
  the exposed stall ``max(S_k - hidden / IR, 0)`` goes to the interval's stall class;
- structural: ``C_m = II_m x / (n_act IR)`` per compute unit, ``C_L1 = b_k x / B_L1`` with
  ``B_L1 = 1`` wavefront per cycle (GCoM's eq 11 rounds ``b_k / B_L1`` up per warp, its ``b_k``
  being whole L1 bank passes of the traced instructions; warpspeed's ``b_k`` sums the average
  wavefronts per instruction of a field, a fraction, and the x warps' wavefronts share the L1's
  cycles, so nothing is rounded); the excess of the largest over ``base_k`` is ``lg_throttle``
  when the L1 is the largest, else ``math_pipe_throttle`` (eqs 8, 12, 13, 22, 23);
- contention (``mio_throttle``): NoC and DRAM queueing of the interval's sectors from all active SMs,
  and MSHR serialisation when the reads exceed the MSHRs (eq 24).

A batch may mix the representative (full) warps with guard-only warps, whose threads all fail the
kernel's bounds guard: they issue the guard-exit path, a prefix of the full path, and exit. In an
interval the ``x_f`` full warps issue its instructions and the ``x_g`` guard-only warps its
guard part (:attr:`~warpspeed.interval.profile.Interval.guard`): the issue, structural and
sector terms above sum both (``I_k x`` becomes ``I_k x_f + I^g_k x_g``, likewise ``II_m``, ``b_k``
and the sectors), and ``x = x_f + x_g`` while the guard-only warps are still there (an interval
with guard instructions), ``x_f`` after. The stall is the full warp's; the guard-only warps'
own stalls fall on the same cycles (they run the same first instructions).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from warpspeed.interval.latency import COMPUTE_UNITS, LONG, SHORT, WAIT
from warpspeed.interval.params import IntervalParams
from warpspeed.interval.profile import Interval
from warpspeed.units import SECTOR_BYTES
from warpspeed.units import GIGA

#: L1 wavefronts the L1 serves per cycle (the data pipe: 128 B per cycle).
L1_WAVEFRONTS_PER_CYCLE = 1.0
#: The stack entries of one batch.
BATCH_KEYS = ("selected", "stall_wait", "stall_long_scoreboard", "stall_short_scoreboard",
              "stall_math_pipe_throttle", "stall_lg_throttle", "stall_mio_throttle")
_STALL_KEY = {WAIT: "stall_wait", LONG: "stall_long_scoreboard", SHORT: "stall_short_scoreboard"}


def batch_stack(intervals: Sequence[Interval], warps: int, params: IntervalParams, active_sms: int,
                dram_bandwidth_gb_s: float, policy: str = "lrr", dram_writes: bool = True,
                guard_warps: int = 0) -> dict[str, float]:
    """Cycles of one batch of ``warps`` resident full warps and ``guard_warps`` guard-only warps,
    by stack entry (:data:`BATCH_KEYS`)."""
    stack = dict.fromkeys(BATCH_KEYS, 0.0)
    if warps <= 0 or not intervals:
        return stack
    ir, n_sc = params.issue_rate, params.sub_cores
    total_i = sum(k.instructions for k in intervals)
    total_s = sum(k.stall for k in intervals)
    p = total_i / (total_i + total_s) if total_i + total_s > 0 else 1.0
    mean_i = total_i / len(intervals)
    f_hz = params.clock_ghz * GIGA
    tau_noc = f_hz * SECTOR_BYTES / (params.noc_bandwidth_gb_s * GIGA)
    tau_dram = f_hz * SECTOR_BYTES / (dram_bandwidth_gb_s * GIGA)
    for k in intervals:
        g = guard_warps if k.guard.instructions else 0
        x = warps + g
        n_act = min(x, n_sc)
        o = math.ceil(x / n_sc) - 1
        base = (k.instructions * warps + k.guard.instructions * g) / (n_act * ir)
        stack["selected"] += base
        hidden = o * p if policy == "lrr" else min(k.stall * p, 1.0) * o * mean_i
        stack[_STALL_KEY[k.flag]] += max(k.stall - hidden / ir, 0.0)
        structural = {m: (k.unit_ii[m] * warps + k.guard.unit_ii[m] * g) / (n_act * ir) for m in COMPUTE_UNITS}
        structural["l1"] = (k.wavefronts * warps + k.guard.wavefronts * g) / L1_WAVEFRONTS_PER_CYCLE
        worst = max(structural, key=structural.get)
        excess = max(structural[worst] - base, 0.0)
        stack["stall_lg_throttle" if worst == "l1" else "stall_math_pipe_throttle"] += excess
        sectors = _Sectors(reads=k.reads * warps + k.guard.reads * g, writes=k.writes * warps + k.guard.writes * g,
                           dram_reads=k.dram_reads * warps + k.guard.dram_reads * g,
                           dram_writes=k.dram_writes * warps + k.guard.dram_writes * g)
        stack["stall_mio_throttle"] += _contention(sectors, params, active_sms, tau_noc, tau_dram, dram_writes)
    return stack


@dataclass(frozen=True)
class _Sectors:
    """32 B sectors of one interval summed over the SM's resident warps."""

    reads: float
    writes: float
    dram_reads: float
    dram_writes: float


def _contention(s: _Sectors, params: IntervalParams, active_sms: int, tau_noc: float, tau_dram: float,
                dram_writes: bool) -> float:
    """Eq 24 for one interval: NoC, DRAM and MSHR queueing cycles."""
    limited = not params.unlimited_mshrs and s.reads > params.mshrs
    r = min(s.reads, params.mshrs) if limited else s.reads
    m2 = s.dram_reads / s.reads if s.reads > 0 else 0.0
    dram = r * m2 + (s.dram_writes if dram_writes else 0.0)
    phi = 1.0 if limited and tau_noc * (r + s.writes) * active_sms > params.l2_latency + params.dram_latency else 0.5
    cycles = phi * active_sms * (r + s.writes) * tau_noc + phi * active_sms * dram * tau_dram
    if limited:
        rounds = math.ceil(s.reads / params.mshrs) - 1
        cycles += (params.l2_latency + m2 * params.dram_latency
                   + phi * active_sms * r * (tau_noc + m2 * tau_dram)) * rounds
    return cycles
