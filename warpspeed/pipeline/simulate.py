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
- **when an idle pipeline issues** (default: event-driven, ``poll=False``): at the very time an
  instruction becomes ready, a fractional time where a latency is fractional. ``poll=True`` is
  Algorithm 1 as printed: a pipeline that finds nothing ready tries again one cycle later, so
  after an idle spell it issues at ``t_free + k`` for the first whole k at which something is
  ready (the simulation jumps straight there instead of stepping cycle by cycle). That models
  a scheduler deciding on clock edges only, and agrees with Eq. 1 only where lambda and Lambda
  are whole cycles;
- **which ready instruction issues** (default: ``selection="fifo"``): the one that became ready
  first (completions at one time in warp and program order), so the warps take turns: on
  dependence chains this is a round robin over the warps. ``selection="oldest"``: the oldest
  resident group, then the lowest warp, then program order, a strict priority that, on warps
  that stall after every instruction, acts like a greedy-then-oldest (GTO) warp scheduler
  (Rogers, O'Connor, Aamodt: "Cache-Conscious Wavefront Scheduling", MICRO 2012): the lowest
  ceil(Lambda / lambda) warps keep a pipeline busy and the others wait until those finish, so it
  staggers the resident groups;
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

**Why the defaults.** For W warps each running N dependent instructions on one pipeline, every
schedule obeys two bounds: the W first instructions are W issues at least lambda apart, so the
last of them starts at (W - 1) lambda or later and its chain needs N Lambda more; and the N W
issues are at least lambda apart, the last completing Lambda after its issue. Eq. 1 is the
larger of the two, t = max(N Lambda + (W - 1) lambda, Lambda + (N W - 1) lambda) (they cross at
W = Lambda / lambda), so a rule reproduces Eq. 1 exactly when it attains the bound. Issuing in
ready order at the ready time does: with W lambda < Lambda, warp k issues its i-th instruction at
i Lambda + k lambda (the first bound); with W lambda >= Lambda every warp is ready again before
its turn comes round, warp k issues its i-th at (i W + k) lambda and the pipeline never idles
(the second). Oldest-first misses it beyond Lambda / lambda warps unless W is a multiple of
ceil(Lambda / lambda) (lambda 4, Lambda 58, 16 warps, N = 100: 11 800 instead of 6454 cycles);
the whole-cycle retry misses it where a latency is fractional (lambda 0.25, Lambda 6, 3 warps,
N = 100: every round takes 6.75 instead of 6 cycles, 674.75 instead of 600.5). The fairness has
to hold across groups too: the paper checks its latencies (Table II) against simulations over
group size x count combinations with groups from 32 threads (one warp) up, and with one-warp
groups any rule that prefers older groups is oldest-first.

**Steady state**: with many groups the completions become periodic: each replacement of the
M resident groups repeats the same pattern. With the warps served in ready order, groups that
started together stay in step, and the cycle is often M - 1 completions long rather than M
(the 25-point stencil's 4-warp blocks with 8 resident per A100 SM repeat every 7). Once, for
the smallest L from 1 to 4 M, each of the last max(L, M) completions lies the same time P
after the completion L before it (within ``tolerance``, relative), the simulation skips whole
cycles, as many as groups wait: it moves every pending event and pipeline time P later per
cycle and counts L more groups as started and completed (their instructions and busy time
too). It then simulates the fewer than L groups still waiting and the drain at the end. The
check needs at least 3 M - 1 completions (``min_groups`` may ask for more).
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
#: Longest cycle of group completions the steady-state check looks for, in resident groups.
MAX_LAG_PER_RESIDENT = 4
#: Rules for which ready instruction a pipeline issues (see the module docstring).
SELECTIONS = ("fifo", "oldest")
#: The default rule: warps served in the order their instructions became ready (reproduces Eq. 1).
DEFAULT_SELECTION = "fifo"
#: When an idle pipeline issues: ``event``, the moment an instruction is ready, or ``cycle``,
#: a retry every cycle (the paper's Algorithm 1 as printed, ``poll``).
ISSUE_RULES = ("event", "cycle")
#: Cycles between two instructions of one warp issued in program order: a warp scheduler
#: dispatches at most one instruction per clock (NVIDIA Volta, Ampere and Hopper architecture
#: whitepapers, "SM architecture": "each warp scheduler ... dispatches one warp instruction per clock").
ISSUE_GAP_CYCLES = 1.0
#: Float slack when deciding whether an event falls exactly on a polling instant (cycles).
_EPS = 1e-9


@dataclass(frozen=True)
class SimulationResult:
    """What one SM did.

    ``cycles``: time until the last group completed; ``extrapolated``: whole cycles of the steady
    state were skipped rather than simulated; ``completions``: the simulated group completion
    times in order (after a skip, shifted by the skipped time); ``busy``: per pipeline, the
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


def simulate(graph: Graph, warps_per_group: int, groups: int, resident: int, *, poll: bool = False,
             completions_first: bool = True, steady_state: bool = True,
             min_groups: int | None = None, tolerance: float = STEADY_TOLERANCE,
             sub_partitions: int = 1, selection: str = DEFAULT_SELECTION, guard_warps: int = 0,
             guard_nodes: int = 0) -> SimulationResult:
    """Simulate ``groups`` groups of ``warps_per_group`` warps, at most ``resident`` at a time,
    each warp running ``graph``, on one SM (see the module docstring for the rules).

    ``guard_warps``: the last warps of every group fail the bounds guard for all their threads
    and run only the graph's first ``guard_nodes`` nodes (the guard's prologue) before exiting.
    With sub-partitions a group's warps go to the processing blocks in turn, and the one with the
    most full warps, ceil(full warps / s), is simulated: a group completes with its slowest part."""
    _check_arguments(graph, warps_per_group, sub_partitions, selection, guard_warps, guard_nodes)
    program = _program(graph, sub_partitions, guard_nodes)
    # the program's tables as locals: the event loop below reads them for every instruction
    n, pipelines, pipe, lam, delay = program.n, program.pipelines, program.pipe, program.lam, program.delay
    succ, succ_guard, npred, roots, barrier = (program.successors, program.guard_successors, program.predecessors,
                                               program.roots, program.barrier)
    in_order, num_p = graph.in_order, len(pipelines)
    W = warps_per_group // sub_partitions
    full_warps = -(-(warps_per_group - guard_warps) // sub_partitions)  # warps of a group that run it all

    fifo = selection == "fifo"
    ready: list = [deque() if fifo else [] for _ in range(num_p)]
    push, pop = (deque.append, deque.popleft) if fifo else (heapq.heappush, heapq.heappop)
    t_free = [0.0] * num_p
    next_issue = [math.inf] * num_p
    busy = [0.0] * num_p
    events: list[tuple[float, int]] = []
    # per live warp: predecessors left per node, the successor lists it follows, nodes left
    remaining: dict[int, list] = {}
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
            remaining[warp] = [npred.copy(), succ if full else succ_guard, n if full else guard_nodes]
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
    started, issued, t, done = resident, 0, 0.0, 0
    history: list[tuple[int, tuple[float, ...]]] = []  # issued and busy at each simulated completion
    extrapolated = False
    inf = math.inf
    # the issue edge of a warp's next node in program order: every node but the last of a full
    # warp, the guard's prologue of a guard warp
    edge_limit = None if not in_order else (n if full_warps >= W else None)
    while True:
        ti = min(next_issue)  # the earliest issue, on the lowest pipeline among equals
        p = next_issue.index(ti) if ti < inf else -1
        rescan = False
        # completions due before the next issue (at the same time too, completions first)
        while events and (events[0][0] < ti or (completions_first and events[0][0] == ti)):
            t, key = heappop(events)
            issue_edge = key < 0  # the warp's previous node issued: its next node in program order may follow
            if issue_edge:
                key = -key - 1
            warp, i = divmod(key, n)
            state = remaining[warp]
            rem = state[0]
            base = warp * n
            for s in (i + 1,) if issue_edge else state[1][i]:
                left = rem[s] - 1
                rem[s] = left
                if left:
                    continue
                if barrier[s]:
                    barrier_ready(warp, s, t)
                    rescan = True
                    continue
                q = pipe[s]
                queue = ready[q]
                if not queue:
                    tf = t_free[q]  # wake(q, t) inline, but for polling
                    nx = next_issue[q] = (tf if t < tf or (t == tf and completions_first) else
                                          t if not poll else wake(q, t))
                    if nx < ti or (nx == ti and q < p):
                        ti, p = nx, q
                push(queue, base + s)
            if issue_edge:
                if rescan:
                    break
                continue
            left = state[2] = state[2] - 1
            if left:
                if rescan:
                    break
                continue
            del remaining[warp]
            group = warp // W
            group_left[group] -= 1
            if group_left[group]:
                if rescan:
                    break
                continue
            del group_left[group]
            completions.append(t)
            done += 1
            if steady_state and not extrapolated:
                history.append((issued, tuple(busy)))
                if done >= min_groups and started < groups:
                    found = _period(completions, resident, tolerance)
                    if found is not None and (groups - started) // found[0] > 0:
                        # skip the steady state's whole cycles; simulate the rest and the drain
                        lag, period = found
                        cycles = (groups - started) // lag
                        shift = cycles * period
                        issued = _skip_cycles(cycles, shift, history[-1 - lag], issued, busy, t_free, next_issue,
                                              events)
                        t += shift
                        started += cycles * lag
                        done += cycles * lag
                        extrapolated = True
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
            free = t_free[p] = ti + lam[i]
            busy[p] += lam[i]
            heappush(events, (ti + delay[i], key))
            if in_order and i + 1 < (edge_limit or (n if (key // n) % W < full_warps else guard_nodes)):
                heappush(events, (ti + ISSUE_GAP_CYCLES, -key - 1))
            next_issue[p] = free if queue else inf
            issued += 1
    span = max(completions[-1] if completions else t, *t_free, _EPS)  # the time simulated
    return SimulationResult(cycles=t, groups=groups, resident=resident, warps_per_group=warps_per_group,
                            completions=tuple(completions), extrapolated=extrapolated,
                            busy={pipelines[q]: busy[q] / span for q in range(num_p)}, issued=issued)


def _check_arguments(graph: Graph, warps_per_group: int, sub_partitions: int, selection: str, guard_warps: int,
                     guard_nodes: int) -> None:
    """A one-line error for options :func:`simulate` cannot run with."""
    if selection not in SELECTIONS:
        raise WarpspeedError(f"unknown issue selection {selection!r}; choose one of {', '.join(SELECTIONS)}")
    if sub_partitions < 1 or warps_per_group % sub_partitions:
        raise WarpspeedError(f"sub_partitions must divide the {warps_per_group} warps per group, got {sub_partitions}")
    if (guard_warps and not 0 < guard_nodes <= len(graph.nodes)) or not 0 <= guard_warps <= warps_per_group:
        raise WarpspeedError(f"{guard_warps} guard warps of {warps_per_group} need a prologue of 1 to "
                             f"{len(graph.nodes)} nodes, got {guard_nodes}")


@dataclass(frozen=True)
class _Program:
    """What every warp of :func:`simulate` runs, as tables indexed by node: its pipeline's index
    (into ``pipelines``), issue latency lambda (cycles, times the sub-partitions: one processing
    block has 1/s of the SM's lanes), completion delay (cycles), successors (a guard warp's: only
    those within the guard's prologue), number of predecessors (the previous node in program
    order counted too when the graph issues in order), whether it is a barrier; ``roots`` the
    nodes without predecessors."""

    n: int
    pipelines: tuple[str, ...]
    pipe: list[int]
    lam: list[float]
    delay: list[float]
    successors: list
    guard_successors: list
    predecessors: list[int]
    roots: list[int]
    barrier: list[bool]


def _program(graph: Graph, sub_partitions: int, guard_nodes: int) -> _Program:
    """The :class:`_Program` of ``graph`` on a processing block of ``sub_partitions``."""
    nodes = graph.nodes
    pipelines = tuple(graph.pipelines)
    pindex = {p: k for k, p in enumerate(pipelines)}
    successors = graph.successors()
    predecessors = [len(node.inputs) for node in nodes]
    if graph.in_order:  # the issue edge from the previous node in program order
        predecessors = [c + (i > 0) for i, c in enumerate(predecessors)]
    return _Program(
        n=len(nodes), pipelines=pipelines, pipe=[pindex[node.pipeline] for node in nodes],
        lam=[node.issue * sub_partitions for node in nodes], delay=graph.completion_delays(),
        successors=successors, guard_successors=[tuple(x for x in row if x < guard_nodes) for row in successors],
        predecessors=predecessors, roots=[i for i in range(len(nodes)) if predecessors[i] == 0],
        barrier=[node.kind == "barrier" for node in nodes])


def _skip_cycles(cycles: int, shift: float, then: tuple[int, tuple[float, ...]], issued: int, busy: list[float],
                 t_free: list[float], next_issue: list[float], events: list[tuple[float, int]]) -> int:
    """Skip ``cycles`` whole cycles of the steady state, ``shift`` cycles in all: every pending
    event and pipeline time moves ``shift`` later (in place), and the instructions and busy time
    grow by ``cycles`` times what one cycle added since ``then`` (the instructions issued and
    the busy times one cycle of completions ago); returns the instructions issued."""
    then_issued, then_busy = then
    for q in range(len(busy)):
        busy[q] += cycles * (busy[q] - then_busy[q])
        t_free[q] += shift
        next_issue[q] += shift
    events[:] = [(e + shift, key) for e, key in events]
    heapq.heapify(events)
    return issued + cycles * (issued - then_issued)


def _period(completions: list[float], resident: int, tolerance: float) -> tuple[int, float] | None:
    """``(L, P)`` for the smallest lag L (1 to :data:`MAX_LAG_PER_RESIDENT` x ``resident``) at
    which each of the last max(L, ``resident``) completions lies the same time P after the
    completion L before it (within ``tolerance``, relative), else None."""
    m, k = resident, len(completions)
    for lag in range(1, min(MAX_LAG_PER_RESIDENT * m, k - m) + 1):
        checks = max(lag, m)
        if checks + lag > k:
            break
        period = completions[-1] - completions[-1 - lag]
        slack = tolerance * max(period, _EPS)
        for i in range(2, checks + 1):
            if abs(completions[-i] - completions[-i - lag] - period) > slack:
                break
        else:
            return lag, period
    return None
