"""Event-driven simulation of thread blocks (groups of warps) on one SM.

Algorithm 1 of Cornelis, Lemeire: "The Pipeline Performance Model: A Generic Executable
Performance Model for GPUs", PDP 2019, section III.D: every pipeline of the SM issues one ready
instruction, then waits its issue latency lambda; an instruction completes Lambda after its
issue; a group (thread block) leaves the SM when every node of every warp has completed, and
the next waiting group takes its place. Times are SM cycles (floats).

The choices the paper leaves open, as made here:

- **ready**: every predecessor of the node in the same warp has completed; a barrier node is
  ready when every warp of its group has completed the predecessors of its own copy; in a graph
  that issues in program order (``Graph.in_order``, machine code), also the warp's previous node
  has issued at least :data:`ISSUE_GAP_CYCLES` before;
- **simultaneous events**: completions before issues (this reproduces the paper's Eq. 1;
  ``completions_first=False`` gives the other order), completions at one time in warp and
  program order;
- **which ready instruction issues**: the oldest resident group, then the lowest warp, then
  program order (``selection="oldest"``). A warp that is ready again before the pipeline has
  served the higher warps goes first, so beyond Lambda / lambda warps the highest warps wait
  until the lowest finish. ``selection="fifo"`` issues in the order the instructions became
  ready (a loose round robin over the warps), with which Eq. 1 holds for every warp count;
- **idle pipelines**: the paper's pipeline that finds nothing ready tries again one cycle later
  (``poll=True``, the default), so after an idle spell it issues at ``t_free + k`` for the first
  whole k at which something is ready; the simulation jumps straight there instead of stepping
  cycle by cycle. ``poll=False`` issues at the very time an instruction becomes ready;
- **when a store completes**: a store no node reads completes at issue + lambda ("the warp is
  considered complete as soon as the final memory request has been issued", Fig. 1); every
  other node at issue + Lambda (:meth:`warpspeed.pipeline.graph.Graph.completion_delays`);
- **groups**: ``min(M, N)`` groups start at time 0, the others wait and enter in launch order,
  one each time a resident group completes; no cap on the instructions all pipelines issue in
  one cycle together (the paper's simulator has none);
- **sub-partitions** (option, ``sub_partitions = s``): an SM of Volta or later is s processing
  blocks, each with its own warp scheduler and 1/s of the SM's lanes, and a block's warps are
  spread over them in turn (NVIDIA Volta, Ampere and Hopper architecture whitepapers, "SM
  architecture"). With s dividing the warps per group, the s processing blocks run the same
  work, so one is simulated: W / s warps per group, every lambda times s. s = 1 is the paper's
  SM with pipelines shared by all its warps.

**Steady state**: with many groups the completions become periodic with period M (one
replacement of every resident group). Once the last M completions each lie the same time P
after the completion M before them (within ``tolerance``, relative), the rest is extrapolated
by whole periods: with j the simulated completion whose distance to N is a multiple of M,
``t = t_j + (N - j) / M * P``. The check needs 3 M - 1 completions (``min_groups`` may ask for
more).
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass
from typing import Mapping

from warpspeed.errors import WarpspeedError
from warpspeed.pipeline.graph import Graph

#: Relative agreement of two successive mean completion spacings that counts as periodic.
STEADY_TOLERANCE = 2e-3
#: Rules for which ready instruction a pipeline issues (see the module docstring).
SELECTIONS = ("oldest", "fifo")
#: Cycles between two instructions of one warp issued in program order: a warp scheduler
#: dispatches at most one instruction per clock (NVIDIA Volta, Ampere and Hopper architecture
#: whitepapers, "SM architecture": "each warp scheduler ... dispatches one warp instruction per clock").
ISSUE_GAP_CYCLES = 1.0
#: Float slack when deciding whether an event falls exactly on a polling instant (cycles).
_EPS = 1e-9


@dataclass(frozen=True)
class SimulationResult:
    """What one SM did.

    ``cycles``: time until the last group completed (extrapolated when ``extrapolated``);
    ``completions``: the simulated group completion times in order; ``busy``: per pipeline, the
    fraction of the simulated time it was issuing (sum of lambda over the time simulated);
    ``issued``: warp instructions simulated.
    """

    cycles: float
    groups: int
    resident: int
    warps_per_group: int
    completions: tuple[float, ...]
    extrapolated: bool
    busy: Mapping[str, float]
    issued: int

    @property
    def limiter(self) -> str:
        """The busiest pipeline."""
        return max(self.busy, key=lambda p: self.busy[p]) if self.busy else ""


def groups_per_sm(total_groups: int, sms: int) -> int:
    """N = ceil(N_total / P): the groups the busiest SM runs (all groups take about the same time)."""
    if total_groups <= 0 or sms <= 0:
        raise WarpspeedError(f"need at least one group and one SM, got {total_groups} groups on {sms} SMs")
    return -(-total_groups // sms)


def simulate(graph: Graph, warps_per_group: int, groups: int, resident: int, *, poll: bool = True,
             completions_first: bool = True, steady_state: bool = True,
             min_groups: int | None = None, tolerance: float = STEADY_TOLERANCE,
             sub_partitions: int = 1, selection: str = "oldest", guard_warps: int = 0,
             guard_nodes: int = 0) -> SimulationResult:
    """Simulate ``groups`` groups of ``warps_per_group`` warps, at most ``resident`` at a time,
    each warp running ``graph``, on one SM (see the module docstring for the rules).

    ``guard_warps``: the last warps of every group fail the bounds guard for all their threads
    and run only the graph's first ``guard_nodes`` nodes (the guard's prologue) before exiting.
    With sub-partitions a group's warps go to the processing blocks in turn, and the one with the
    most full warps, ceil(full warps / s), is simulated: a group completes with its slowest part."""
    if selection not in SELECTIONS:
        raise WarpspeedError(f"unknown issue selection {selection!r}; choose one of {', '.join(SELECTIONS)}")
    if sub_partitions < 1 or warps_per_group % sub_partitions:
        raise WarpspeedError(f"sub_partitions must divide the {warps_per_group} warps per group, got {sub_partitions}")
    if (guard_warps and not 0 < guard_nodes <= len(graph.nodes)) or not 0 <= guard_warps <= warps_per_group:
        raise WarpspeedError(f"{guard_warps} guard warps of {warps_per_group} need a prologue of 1 to "
                             f"{len(graph.nodes)} nodes, got {guard_nodes}")
    nodes = graph.nodes
    n, W = len(nodes), warps_per_group // sub_partitions
    full_warps = -(-(warps_per_group - guard_warps) // sub_partitions)  # warps of a group that run it all
    pipelines = graph.pipelines
    pindex = {p: k for k, p in enumerate(pipelines)}
    pipe = [pindex[node.pipeline] for node in nodes]
    lam = [node.issue * sub_partitions for node in nodes]
    delay = graph.completion_delays()
    succ = graph.successors()
    succ_guard = [tuple(x for x in row if x < guard_nodes) for row in succ]  # a guard warp's prologue
    npred = [len(node.inputs) for node in nodes]
    in_order = graph.in_order
    if in_order:  # the issue edge from the previous node in program order
        npred = [c + (i > 0) for i, c in enumerate(npred)]
    roots = [i for i in range(n) if npred[i] == 0]
    barrier = [node.kind == "barrier" for node in nodes]
    num_p = len(pipelines)

    fifo = selection == "fifo"
    ready: list = [deque() if fifo else [] for _ in range(num_p)]
    push, pop = (deque.append, deque.popleft) if fifo else (heapq.heappush, heapq.heappop)
    t_free = [0.0] * num_p
    next_issue = [math.inf] * num_p
    busy = [0.0] * num_p
    events: list[tuple[float, int]] = []
    remaining: dict[int, tuple[list[int], list]] = {}
    warp_left: dict[int, int] = {}
    group_left: dict[int, int] = {}
    arrivals: dict[tuple[int, int], int] = {}
    completions: list[float] = []
    heappush, heappop = heapq.heappush, heapq.heappop
    resident = min(resident, groups)
    min_groups = max(3 * resident - 1, min_groups or 0)

    def wake(q: int, t: float) -> float:
        """When pipeline q, idle since t_free[q], issues an instruction that became ready at t."""
        tf = t_free[q]
        if t < tf or (t == tf and completions_first):
            return tf
        if not poll:
            return t
        k = math.ceil(t - tf - _EPS)
        if not completions_first and abs(t - tf - round(t - tf)) < _EPS:
            k = round(t - tf) + 1  # the poll at exactly t came before the completion
        return tf + k

    def make_ready(key: int, t: float) -> None:
        q = pipe[key % n]
        if not ready[q]:
            next_issue[q] = wake(q, t)
        push(ready[q], key)

    def barrier_ready(warp: int, i: int, t: float) -> None:
        group = warp // W
        count = arrivals.get((group, i), 0) + 1
        if count < W:
            arrivals[(group, i)] = count
            return
        arrivals.pop((group, i), None)
        for w in range(group * W, group * W + W):
            make_ready(w * n + i, t)

    def start_group(group: int, t: float) -> None:
        group_left[group] = W
        for warp in range(group * W, group * W + W):
            full = warp - group * W < full_warps
            # per warp: predecessors left per node, and the successor lists it follows
            remaining[warp] = (npred.copy(), succ if full else succ_guard)
            warp_left[warp] = n if full else guard_nodes
            for i in roots if full else (r for r in roots if r < guard_nodes):
                if barrier[i]:
                    barrier_ready(warp, i, t)
                else:
                    make_ready(warp * n + i, t)

    for g in range(resident):
        start_group(g, 0.0)
    for q in range(num_p):  # every pipeline's first issue event is at time 0, after the groups start
        if ready[q]:
            next_issue[q] = 0.0
    started, issued, t = resident, 0, 0.0
    extrapolated = finished = False
    while not finished:
        ti, p = math.inf, -1
        for q in range(num_p):
            if next_issue[q] < ti:
                ti, p = next_issue[q], q
        rescan = False
        # completions due before the next issue (at the same time too, completions first)
        while events and (events[0][0] < ti or (completions_first and events[0][0] == ti)):
            t, key = heappop(events)
            issue_edge = key < 0  # the warp's previous node issued: its next node in program order may follow
            if issue_edge:
                key = -key - 1
            warp = key // n
            i = key - warp * n
            rem, follow = remaining[warp]
            base = warp * n
            for s in (i + 1,) if issue_edge else follow[i]:
                rem[s] -= 1
                if rem[s]:
                    continue
                if barrier[s]:
                    barrier_ready(warp, s, t)
                    rescan = True
                    continue
                q = pipe[s]
                queue = ready[q]
                if not queue:
                    tf = t_free[q]  # wake(q, t), its common case inline
                    nx = next_issue[q] = tf if t < tf or (t == tf and completions_first) else wake(q, t)
                    if nx < ti or (nx == ti and q < p):
                        ti, p = nx, q
                push(queue, base + s)
            if issue_edge:
                if rescan:
                    break
                continue
            left = warp_left[warp] = warp_left[warp] - 1
            if left:
                if rescan:
                    break
                continue
            del remaining[warp], warp_left[warp]
            group = warp // W
            group_left[group] -= 1
            if group_left[group]:
                if rescan:
                    break
                continue
            del group_left[group]
            completions.append(t)
            k = len(completions)
            if steady_state and k >= min_groups and k < groups:
                period = _period(completions, resident, tolerance)
                if period is not None:
                    j = k - (k - groups) % resident  # (groups - j) is a multiple of resident
                    t = completions[j - 1] + (groups - j) // resident * period
                    extrapolated = finished = True
                    break
            if started < groups:
                start_group(started, t)
                started += 1
            break  # a new group may issue earlier than ti
        else:
            if rescan:
                continue
            if p < 0:
                break  # nothing ready and nothing in flight: every group has completed
            queue = ready[p]
            key = pop(queue)
            i = key % n
            t = ti
            t_free[p] = ti + lam[i]
            busy[p] += lam[i]
            heappush(events, (ti + delay[i], key))
            if in_order and i + 1 < (n if (key // n) % W < full_warps else guard_nodes):
                heappush(events, (ti + ISSUE_GAP_CYCLES, -key - 1))
            next_issue[p] = t_free[p] if queue else math.inf
            issued += 1
    span = max(completions[-1] if completions else t, *t_free, _EPS)  # the time simulated
    return SimulationResult(cycles=t, groups=groups, resident=resident, warps_per_group=warps_per_group,
                            completions=tuple(completions), extrapolated=extrapolated,
                            busy={pipelines[q]: busy[q] / span for q in range(num_p)}, issued=issued)


def _period(completions: list[float], resident: int, tolerance: float) -> float | None:
    """P if each of the last ``resident`` completions lies P after the completion ``resident``
    before it (within ``tolerance``, relative), else None."""
    m = resident
    period = completions[-1] - completions[-1 - m]
    for i in range(2, m + 1):
        if abs(completions[-i] - completions[-i - m] - period) > tolerance * max(period, _EPS):
            return None
    return period
