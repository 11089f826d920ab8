"""Interval profiling of the representative warp (AMALI section 4.5, eqs 17-20; GCoM's
``ProfileInterval``).

The warp issues one instruction per cycle unless a source register is not ready. Instruction i
issues at ``t_i = max(prev + 1, ready time of its sources)``; a gap closes an interval whose
stall ``S_k = t_i - prev - 1`` is attributed to the class of the producer that set ``t_i`` (global
memory: long scoreboard; shared memory and MIO: short scoreboard; fixed-latency compute: wait).
The last interval's stall is the drain: the latest completion among its instructions minus the
last issue minus 1, attributed to the class of the latest-finishing instruction. Per interval the
model keeps the instruction count, the initiation intervals per compute unit, the L1 wavefronts
and the L2 and DRAM sectors (what sections 4.4 to 4.6 need), for the whole interval and for its
part on the guard-exit path (what a guard-only warp issues of it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from warpspeed.interval.latency import COMPUTE_UNITS, WAIT, Cost


@dataclass
class Demand:
    """What a warp issues in (part of) an interval: ``instructions``; ``unit_ii``: summed
    initiation intervals per compute unit; ``wavefronts``: L1 wavefronts;
    ``reads``/``writes``/``dram_reads``/``dram_writes``: 32 B sectors."""

    instructions: int = 0
    unit_ii: dict[str, float] = field(default_factory=lambda: dict.fromkeys(COMPUTE_UNITS, 0.0))
    wavefronts: float = 0.0
    reads: float = 0.0
    writes: float = 0.0
    dram_reads: float = 0.0
    dram_writes: float = 0.0

    def add(self, cost: Cost) -> None:
        self.instructions += 1
        if cost.unit in self.unit_ii:
            self.unit_ii[cost.unit] += cost.ii
        self.wavefronts += cost.omega
        self.reads += cost.reads
        self.writes += cost.writes
        self.dram_reads += cost.dram_reads
        self.dram_writes += cost.dram_writes


@dataclass
class Interval(Demand):
    """One interval of the representative (full) warp: its :class:`Demand`, then ``stall`` cycles
    of class ``flag``. ``guard``: the part of the interval a guard-only warp issues too (the
    instructions before its exit, a prefix of the full path; empty after it)."""

    stall: float = 0.0
    flag: str = WAIT
    guard: Demand = field(default_factory=Demand)


def profile(costs: Sequence[Cost], sources: Sequence[Sequence[str]], destinations: Sequence[Sequence[str]],
            guard_instructions: int = 0) -> list[Interval]:
    """The intervals of one warp issuing ``costs`` in order (``sources`` / ``destinations``: the
    register names each instruction reads and writes). The first ``guard_instructions`` are
    the guard-exit path: each interval's share of them is its ``guard`` demand."""
    ready: dict[str, tuple[float, str]] = {}
    intervals = [Interval()]
    prev = -1.0
    finish, finish_flag = 0.0, WAIT
    for index, (cost, src, dst) in enumerate(zip(costs, sources, destinations)):
        t, flag = prev + 1, WAIT
        for reg in src:
            when, producer = ready.get(reg, (0.0, WAIT))
            if when > t:
                t, flag = when, producer
        if t != prev + 1 and intervals[-1].instructions:
            intervals[-1].stall, intervals[-1].flag = t - prev - 1, flag
            intervals.append(Interval())
        intervals[-1].add(cost)
        if index < guard_instructions:
            intervals[-1].guard.add(cost)
        done = t + cost.latency
        for reg in dst:
            ready[reg] = (done, cost.producer)
        if done >= finish:
            finish, finish_flag = done, cost.producer
        prev = t
    last = intervals[-1]
    last.stall, last.flag = max(0.0, finish - prev - 1), finish_flag
    return intervals
