"""The pipeline model's simulator against cases worked out by hand.

Eq. 1 of Cornelis, Lemeire (PDP 2019): W warps each running a chain of N dependent instructions
on one pipeline take N Lambda + (W - 1) lambda cycles while W < Lambda / lambda and
Lambda + (N W - 1) lambda beyond. Every expected number below is computed from that formula or
from a schedule written out step by step in the test's docstring.
"""

from __future__ import annotations

import math

import pytest

from warpspeed.errors import WarpspeedError
from warpspeed.pipeline.calibrate import latencies_from_times
from warpspeed.pipeline.graph import Graph, GraphError, Node, Operation, check_operations
from warpspeed.pipeline.latency import LatencyTable, UnitLatency, attach_latencies, fixed_memory_latency, load_latencies
from warpspeed.pipeline.simulate import groups_per_sm, simulate


def chain(n: int, issue: float, completion: float, kind: str = "add", pipeline: str = "alu") -> Graph:
    return Graph(tuple(Node(i, kind, kind, pipeline, issue, completion, (i - 1,) if i else ()) for i in range(n)),
                 "test")


def eq1(n: int, issue: float, completion: float, warps: int) -> float:
    if warps < completion / issue:
        return n * completion + (warps - 1) * issue
    return completion + (n * warps - 1) * issue


@pytest.mark.parametrize("n, issue, completion, warps, expected", [
    (100, 1, 18, 1, 1800), (100, 1, 18, 18, 1817), (100, 1, 18, 36, 3617),
    (100, 0.25, 6, 8, 601.75), (100, 0.25, 6, 48, 1205.75), (20, 4, 58, 3, 1168),
])
@pytest.mark.parametrize("selection", ["oldest", "fifo"])
def test_eq1_one_chain_one_group(n, issue, completion, warps, expected, selection):
    assert eq1(n, issue, completion, warps) == expected  # the table is the formula
    result = simulate(chain(n, issue, completion), warps, 1, 1, selection=selection)
    assert result.cycles == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("issue, completion", [(0.25, 6), (1, 18), (4, 58)])
def test_eq1_every_warp_count_with_fifo_issue(issue, completion):
    """Issuing in ready order and as soon as ready (no polling grid), Eq. 1 holds for W = 1..64."""
    for warps in range(1, 65):
        result = simulate(chain(20, issue, completion), warps, 1, 1, selection="fifo", poll=False)
        assert result.cycles == pytest.approx(eq1(20, issue, completion, warps), abs=1e-9), warps


def test_oldest_warp_first_starves_the_highest_warps():
    """40 warps, (0.25, 6): warps 0-23 (Lambda / lambda of them) keep the pipeline busy and
    issue first; warps 24-39 run afterwards, 16 < 24 of them, latency-bound, so the pipeline
    idles and the time exceeds Eq. 1's 1005.75."""
    oldest = simulate(chain(100, 0.25, 6), 40, 1, 1).cycles
    assert simulate(chain(100, 0.25, 6), 40, 1, 1, selection="fifo").cycles == eq1(100, 0.25, 6, 40) == 1005.75
    assert oldest > 1005.75
    # the first 24 warps end by 6 + (2400 - 1) x 0.25 = 605.75 at the latest; the last 16 need at
    # least their latency-bound 100 x 6 + 15 x 0.25 after starting
    assert oldest >= 600 + 100 * 6
    with pytest.raises(WarpspeedError, match="selection"):
        simulate(chain(3, 1, 1), 1, 1, 1, selection="random")


def test_issue_before_completion_breaks_eq1():
    """Issuing before completing at equal times costs one poll per link: 99 x 19 + 18 = 1899."""
    assert simulate(chain(100, 1, 18), 1, 1, 1, completions_first=False).cycles == 1899
    assert simulate(chain(100, 1, 18), 1, 1, 1).cycles == 1800


def test_figure1_saxpy_one_warp():
    """Fig. 1: i = gid; x = X[i]; y = Y[i]; z = a x + y; Y[i] = z with Lambda_index = 20, memory
    (23, 521), fmadd (1, 18): the second load issues 23 after the first, the final store adds its
    issue latency only: 20 + 23 + 521 + 18 + 23 = 605."""
    nodes = (Node(0, "index", "i = gid", "alu", 1, 20, ()),
             Node(1, "load", "x = X[i]", "global", 23, 521, (0,)),
             Node(2, "load", "y = Y[i]", "global", 23, 521, (0,)),
             Node(3, "fma", "z = a x + y", "alu", 1, 18, (1, 2)),
             Node(4, "store", "Y[i] = z", "global", 23, 521, (0, 3)))
    graph = Graph(nodes, "test")
    assert simulate(graph, 1, 1, 1).cycles == 605
    assert sum(c for _, c in graph.critical_path()) == 20 + 521 + 18 + 23  # without the second load's wait


def test_group_replacement():
    """Chain of 10 (1, 18), 2 warps per group, 2 resident, 4 groups: warp k of the first four
    issues node j at 18 j + k, so groups 0 and 1 end at 180 + 1 and 180 + 3; groups 2 and 3
    enter then and end 181 + 181 = 362 and 183 + 181 = 364."""
    result = simulate(chain(10, 1, 18), 2, 4, 2, steady_state=False)
    assert result.completions == (181, 183, 362, 364)
    assert result.cycles == 364


def test_saturated_memory_pipeline():
    """3 independent loads (4, 500) per warp, 8 warps per group, 20 groups. With 8 resident the
    pipeline never idles: the last of 480 issues is at 479 x 4, done 500 later. With 2 resident
    each slot takes 24 x 4 - 4 + 500 = 592 per group; the second slot starts 96 later."""
    loads = Graph(tuple(Node(i, "load", "ld", "global", 4, 500, ()) for i in range(3)), "test")
    assert simulate(loads, 8, 20, 8, steady_state=False).cycles == (20 * 8 * 3 - 1) * 4 + 500 == 2416
    assert simulate(loads, 8, 20, 2, steady_state=False).cycles == 96 + 10 * 592 == 6016


def test_groups_per_sm():
    assert groups_per_sm(100, 14) == 8
    assert groups_per_sm(14, 14) == 1
    with pytest.raises(WarpspeedError):
        groups_per_sm(0, 14)


def test_latencies_recovered_from_eq1():
    """Synthesised t(W) for (0.25, 6) over W = 1..64 gives back exactly 0.25 and 6."""
    warps = list(range(1, 65))
    issue, completion = latencies_from_times(warps, [eq1(100, 0.25, 6, w) for w in warps], 100)
    assert (issue, completion) == (0.25, 6)
    assert simulate(chain(100, issue, completion), 64, 1, 1, selection="fifo").cycles == eq1(100, 0.25, 6, 64)


def test_steady_state_extrapolation_matches_full_simulation():
    """N = 50 groups: the extrapolated time is within 0.5 % of the simulation of every group."""
    graph = Graph((Node(0, "index", "i", "alu", 1, 18, ()), Node(1, "load", "x", "global", 4, 500, (0,)),
                   Node(2, "load", "y", "global", 4, 500, (0,)), Node(3, "fma", "z", "alu", 1, 18, (1, 2)),
                   Node(4, "store", "y", "global", 4, 500, (3,))), "test")
    for resident in (1, 2, 3, 8):
        full = simulate(graph, 4, 50, resident, steady_state=False)
        fast = simulate(graph, 4, 50, resident)
        assert not full.extrapolated and len(full.completions) == 50
        assert fast.cycles == pytest.approx(full.cycles, rel=5e-3)
        if resident < 8:  # with 8 resident the completions are not periodic before the end
            assert fast.extrapolated and len(fast.completions) < 50


def test_fewer_resident_groups_never_faster():
    """Occupancy: with the same work, every reduction of the resident groups costs time."""
    graph = Graph((Node(0, "index", "i", "alu", 1, 18, ()),) +
                  tuple(Node(k, "load", "ld", "global", 4, 500, (0,)) for k in range(1, 4)) +
                  (Node(4, "add", "s", "alu", 1, 18, (1, 2, 3)),
                   Node(5, "store", "st", "global", 4, 500, (4,))), "test")
    times = [simulate(graph, 4, 64, m, steady_state=False).cycles for m in range(1, 17)]
    assert all(a >= b for a, b in zip(times, times[1:]))
    assert times[0] > times[-1]
    # at 16 resident groups (64 warps) the memory pipeline bounds the time from below (64 groups x
    # 4 warps x 4 memory nodes x 4 cycles); from above, that plus one warp's chain after the last
    # load issue (add 18 + load 500 + final store 4) and the index latency before the first (18)
    assert 64 * 4 * 4 * 4 <= times[-1] <= 64 * 4 * 4 * 4 + 18 + 500 + 18 + 4


def test_sub_partitions_agree_for_symmetric_warps():
    """Simulating one of s processing blocks (W / s warps, lambda x s) matches the shared SM
    when the warps are spread evenly: the Eq. 1 chain, throughput-bound."""
    shared = simulate(chain(100, 0.25, 6), 48, 1, 1).cycles
    split = simulate(chain(100, 0.25, 6), 48, 1, 1, sub_partitions=4).cycles
    assert shared == eq1(100, 0.25, 6, 48)
    assert split == eq1(100, 1.0, 6, 12)  # 6 + (1200 - 1) x 1
    assert split == pytest.approx(shared, rel=2e-3)
    with pytest.raises(WarpspeedError):
        simulate(chain(3, 1, 1), 6, 1, 1, sub_partitions=4)


def _matrix_multiplication_operations(iterations: int) -> tuple[Operation, ...]:
    """The mmul08 graph (Cornelis and Lemeire, Listing 1 and Table III), per outer iteration:
    loop -> load A, load B (global) -> store As, Bs (shared) -> barrier -> 8 x (two shared loads
    -> fmadd chained to the previous) -> barrier -> next loop; then the store of C."""
    ops: list[Operation] = []

    def op(kind, *inputs, precision=None):
        ops.append(Operation(kind, tuple(inputs), precision))
        return len(ops) - 1

    loop, acc, after = None, None, None
    for _ in range(iterations):
        loop = op("loop", *(x for x in (loop, after) if x is not None))
        sa, sb = op("shared_store", op("load", loop)), op("shared_store", op("load", loop))
        sync = op("barrier", sa, sb)
        reads = []
        for _k in range(8):
            a, b = op("shared_load", sync), op("shared_load", sync)
            reads += [a, b]
            acc = op("fma", a, b, *((acc,) if acc is not None else ()), precision="float32")
        after = op("barrier", acc, *reads)
    op("store", acc)
    return check_operations(tuple(ops))


def test_bank_conflicts_slow_matrix_multiplication_down():
    """Swapping the shared memory latencies (2, 47) for the bank-conflicted (16, 250) on Fermi
    (Table III) makes the mmul08 graph slower."""
    fermi = load_latencies("fermi")
    conflicted = LatencyTable(fermi.architecture, fermi.pipelines,
                              {**fermi.units, "shared_load": UnitLatency("local", 16, 250),
                               "shared_store": UnitLatency("local", 16, 250)}, fermi.memory)
    ops = _matrix_multiplication_operations(4)
    times = []
    for table in (fermi, conflicted):
        graph = attach_latencies(ops, table, None, fixed_memory_latency(table), "test")
        times.append(simulate(graph, 2, 24, 8).cycles)
    assert times[1] > times[0]
    # a single warp's barrier waits only for itself: its chain is the longest path
    one = attach_latencies(ops, fermi, None, fixed_memory_latency(fermi), "test")
    assert simulate(one, 1, 1, 1).cycles >= sum(c for _, c in one.critical_path())


def test_barrier_waits_for_every_warp():
    """Two warps; warp 1 cannot pass the barrier before warp 0's load completes although its own
    predecessor is done: both barriers issue after 1 + 100 (load issued at 1 by the second warp is
    the later one), the trailing adds follow."""
    nodes = (Node(0, "load", "ld", "global", 1, 100, ()), Node(1, "barrier", "sync", "alu", 1, 10, (0,)),
             Node(2, "add", "a", "alu", 1, 4, (1,)))
    result = simulate(Graph(nodes, "test"), 2, 1, 1)
    # loads at 0 and 1, complete at 100 and 101; barriers issue at 101 and 102, complete 111, 112;
    # adds issue at 111 and 112, complete 115 and 116
    assert result.cycles == 116


def test_operations_must_refer_to_earlier_operations():
    with pytest.raises(GraphError, match="earlier"):
        check_operations((Operation("add", (1,)), Operation("add")))
    with pytest.raises(GraphError, match="unknown operation kind"):
        Operation("teleport")
    with pytest.raises(GraphError, match="empty"):
        check_operations(())


def test_poll_versus_event_driven_issue():
    """After an idle spell the paper's pipeline re-checks once per cycle: with lambda = 0.25 and a
    result ready at 6.1 the next issue is at 0.25 + 6 = 6.25 (polling) or 6.1 (event-driven)."""
    nodes = (Node(0, "add", "a", "alu", 0.25, 6.1, ()), Node(1, "add", "b", "alu", 0.25, 1, (0,)))
    graph = Graph(nodes, "test")
    assert simulate(graph, 1, 1, 1).cycles == pytest.approx(7.25)
    assert simulate(graph, 1, 1, 1, poll=False).cycles == pytest.approx(7.1)
    assert math.isclose(simulate(chain(100, 1, 18), 1, 1, 1, poll=False).cycles, 1800)


def _three_nodes(in_order: bool) -> Graph:
    """A (x, 1, 10) -> B (x, 1, 10), and C (y, 1, 10) independent of both, in program order A, B, C."""
    nodes = (Node(0, "add", "A", "x", 1, 10, ()), Node(1, "add", "B", "x", 1, 10, (0,)),
             Node(2, "mul", "C", "y", 1, 10, ()))
    return Graph(nodes, "test", in_order=in_order)


def test_program_order_issue_of_machine_code():
    """Data dependences only: A and C issue at 0, B at 10 (A's result), the warp ends at 20.
    In program order (one instruction per warp per cycle): A at 0, B at 10, C not before B has
    issued, at 11, so the warp ends at 21."""
    assert simulate(_three_nodes(False), 1, 1, 1).cycles == 20
    assert simulate(_three_nodes(True), 1, 1, 1).cycles == 21


def test_program_order_of_independent_nodes_on_two_pipelines():
    """Two independent nodes on two pipelines: together at 0 without order (done at 10), one cycle
    apart in order (done at 11); two warps in order: warp 1's first node takes pipeline x at 1
    (x is busy for lambda = 1 after warp 0's A), its second node issues at 2, done at 12."""
    nodes = (Node(0, "add", "A", "x", 1, 10, ()), Node(1, "mul", "C", "y", 1, 10, ()))
    assert simulate(Graph(nodes, "test"), 1, 1, 1).cycles == 10
    assert simulate(Graph(nodes, "test", in_order=True), 1, 1, 1).cycles == 11
    assert simulate(Graph(nodes, "test", in_order=True), 2, 1, 1).cycles == 12
