"""The pipeline model's simulator against cases worked out by hand.

Eq. 1 of Cornelis, Lemeire (PDP 2019): W warps each running a chain of N dependent instructions
on one pipeline take N Lambda + (W - 1) lambda cycles while W < Lambda / lambda and
Lambda + (N W - 1) lambda beyond. Every expected number below is computed from that formula or
from a schedule written out step by step in the test's docstring.
"""

from __future__ import annotations

import itertools
import math

import pytest

from warpspeed.errors import WarpspeedError
from warpspeed.calibration.pipeline import latencies_from_times
from warpspeed.pipeline.graph import Graph, GraphError, Node, Operation, check_operations
from warpspeed.pipeline.latency import LatencyTable, UnitLatency, attach_latencies, fixed_memory_latency, load_latencies
from warpspeed.pipeline.simulate import groups_per_sm, simulate


#: The grid of issue and completion latencies (cycles) the Eq. 1 tests run: Table II's values
#: (Fermi fadd 1 / 18, cos 8 / 40, loop 4 / 58; Pascal fadd 0.25 / 6, loop 1.75 / 29) and others.
ISSUES = (0.25, 0.5, 1, 1.75, 4, 8)
COMPLETIONS = (4, 6, 18, 29, 58)


def chain(n: int, issue: float, completion: float, kind: str = "add", pipeline: str = "alu") -> Graph:
    return Graph(tuple(Node(i, kind, kind, pipeline, issue, completion, (i - 1,) if i else ()) for i in range(n)),
                 "test")


def eq1(n: int, issue: float, completion: float, warps: int) -> float:
    if warps < completion / issue:
        return n * completion + (warps - 1) * issue
    return completion + (n * warps - 1) * issue


def test_eq1_is_the_larger_of_two_lower_bounds():
    """Eq. 1's two cases are the two bounds every schedule obeys (the last first-instruction issue
    at (W - 1) lambda or later, then N Lambda; N W issues lambda apart, the last done Lambda
    later), and the larger of them: checked on the grid the tests below simulate."""
    for issue, completion, n, warps in itertools.product(ISSUES, COMPLETIONS, (1, 3, 20, 100), range(1, 65)):
        bounds = (n * completion + (warps - 1) * issue, completion + (n * warps - 1) * issue)
        assert eq1(n, issue, completion, warps) == max(bounds)


@pytest.mark.parametrize("n, issue, completion, warps, expected", [
    (100, 1, 18, 1, 1800), (100, 1, 18, 18, 1817), (100, 1, 18, 36, 3617),
    (100, 0.25, 6, 8, 601.75), (100, 0.25, 6, 48, 1205.75), (20, 4, 58, 3, 1168),
])
@pytest.mark.parametrize("rules", [{}, {"selection": "oldest", "poll": True}], ids=["defaults", "oldest-cycle"])
def test_eq1_spec_cases(n, issue, completion, warps, expected, rules):
    """The specification's cases hold under the defaults and under oldest-first with polling
    (their warp counts are below Lambda / lambda or multiples of it, and their idle spells end
    on whole cycles)."""
    assert eq1(n, issue, completion, warps) == expected  # the table is the formula
    result = simulate(chain(n, issue, completion), warps, 1, 1, **rules)
    assert result.cycles == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("issue", ISSUES)
def test_eq1_on_a_grid_under_the_defaults(issue):
    """Eq. 1 exactly under the default rules for lambda in ISSUES (fractional ones too),
    Lambda in COMPLETIONS and N in 1, 3, 20 for every W = 1..64, and N = 100 at warp counts on
    both sides of Lambda / lambda; the expected time is the closed form."""
    for completion in COMPLETIONS:
        for n, warp_counts in ((1, range(1, 65)), (3, range(1, 65)), (20, range(1, 65)),
                               (100, (1, 2, 3, 5, 8, 13, 16, 17, 23, 24, 25, 33, 47, 48, 59, 64))):
            graph = chain(n, issue, completion)
            for warps in warp_counts:
                result = simulate(graph, warps, 1, 1)
                assert result.cycles == pytest.approx(eq1(n, issue, completion, warps), rel=1e-12, abs=1e-9), \
                    (issue, completion, n, warps)


@pytest.mark.parametrize("issue, completion, warps", [(4, 58, 16), (4, 58, 12), (0.25, 6, 40), (0.25, 6, 48),
                                                      (1.75, 29, 8), (1.75, 29, 32)])
def test_eq1_for_warps_in_groups_of_any_size(issue, completion, warps):
    """The same W warps as W / g resident groups of g warps (one-warp groups included, as in the
    paper's group size x count combinations) take Eq. 1's time under the defaults."""
    graph = chain(20, issue, completion)
    for size in (g for g in (1, 2, 4, 8, 16) if warps % g == 0):
        groups = warps // size
        result = simulate(graph, size, groups, groups)
        assert result.cycles == pytest.approx(eq1(20, issue, completion, warps), abs=1e-9), size


def test_oldest_first_starves_the_highest_warps():
    """selection="oldest" with lambda 4, Lambda 58, 16 warps, N = 100: ceil(58 / 4) = 15 warps
    keep the pipeline busy (15 x 4 = 60 >= 58), and at every issue one of them is ready and
    older than warp 15. Warp 15 starts when they are done, at 15 x 100 x 4 = 6000, then runs
    alone, latency-bound: 6000 + 100 x 58 = 11800 cycles, 83 % above Eq. 1's
    58 + (1600 - 1) x 4 = 6454, which the default rules give. Polling changes nothing here
    (whole cycles)."""
    graph = chain(100, 4, 58)
    assert eq1(100, 4, 58, 16) == 6454
    assert simulate(graph, 16, 1, 1).cycles == 6454
    for poll in (False, True):
        assert simulate(graph, 16, 1, 1, selection="oldest", poll=poll).cycles == 6000 + 100 * 58
    # (0.25, 6), 40 warps: warps 0-23 run first; the 16 others afterwards, latency-bound
    oldest = simulate(chain(100, 0.25, 6), 40, 1, 1, selection="oldest").cycles
    assert simulate(chain(100, 0.25, 6), 40, 1, 1).cycles == eq1(100, 0.25, 6, 40) == 1005.75
    # the first 24 warps end by 6 + (2400 - 1) x 0.25 = 605.75 at the latest; the last 16 need at
    # least their latency-bound 100 x 6 + 15 x 0.25 after starting
    assert oldest >= 600 + 100 * 6
    with pytest.raises(WarpspeedError, match="selection"):
        simulate(chain(3, 1, 1), 1, 1, 1, selection="random")


def test_polling_rounds_fractional_latencies_up():
    """poll=True (Algorithm 1's retry every cycle), lambda 0.25, Lambda 6, 3 warps, N = 100: the
    warps issue at 0, 0.25, 0.5; the pipeline is free at 0.75 and finds warp 0 ready only at the
    sixth retry, 6.75, so every round takes 6.75 cycles: the last issue is at 99 x 6.75 + 0.5 =
    668.75, done at 674.75. Event-driven issue (the default) gives Eq. 1's 100 x 6 + 2 x 0.25 =
    600.5."""
    graph = chain(100, 0.25, 6)
    assert simulate(graph, 3, 1, 1).cycles == eq1(100, 0.25, 6, 3) == 600.5
    assert simulate(graph, 3, 1, 1, poll=True).cycles == 674.75


def test_issue_before_completion_breaks_eq1_when_polling():
    """Polling and issuing before completing at equal times: the issue at 18 finds nothing and
    retries at 19, one cycle lost per link: 99 x 19 + 18 = 1899. Event-driven issue does not
    depend on the order: the pipeline issues the instruction the moment it is ready."""
    assert simulate(chain(100, 1, 18), 1, 1, 1, completions_first=False, poll=True).cycles == 1899
    assert simulate(chain(100, 1, 18), 1, 1, 1, poll=True).cycles == 1800
    assert simulate(chain(100, 1, 18), 1, 1, 1, completions_first=False).cycles == 1800


@pytest.mark.parametrize("rules", [{}, {"selection": "oldest"}, {"poll": True}], ids=["defaults", "oldest", "cycle"])
def test_figure1_saxpy_one_warp(rules):
    """Fig. 1: i = gid; x = X[i]; y = Y[i]; z = a x + y; Y[i] = z with Lambda_index = 20, memory
    (23, 521), fmadd (1, 18). The index issues at 0 and completes at 20; the loads issue at 20
    and 43 (lambda_mem apart), y completes at 43 + 521 = 564; the fmadd issues at 564 and
    completes at 582; the store issues at 582 (the memory pipeline has been free since 66) and,
    being the final request, completes lambda_mem later: 20 + 23 + 521 + 18 + 23 = 605. One warp
    has no competitor and whole-cycle latencies, so every rule gives it."""
    nodes = (Node(0, "index", "i = gid", "alu", 1, 20, ()),
             Node(1, "load", "x = X[i]", "global", 23, 521, (0,)),
             Node(2, "load", "y = Y[i]", "global", 23, 521, (0,)),
             Node(3, "fma", "z = a x + y", "alu", 1, 18, (1, 2)),
             Node(4, "store", "Y[i] = z", "global", 23, 521, (0, 3)))
    graph = Graph(nodes, "test")
    assert simulate(graph, 1, 1, 1, **rules).cycles == 20 + 23 + 521 + 18 + 23 == 605
    assert sum(c for _, c in graph.critical_path()) == 20 + 521 + 18 + 23  # without the second load's wait


@pytest.mark.parametrize("rules", [{}, {"selection": "oldest", "poll": True}], ids=["defaults", "oldest-cycle"])
def test_group_replacement(rules):
    """Chain of 10 (1, 18), 2 warps per group, 2 resident, 4 groups. The four resident warps
    (4 < 18 = Lambda / lambda) are ready in turn: warp k issues node j at 18 j + k (every warp is
    the only one ready at its instant, so the rules agree), so groups 0 and 1 end at 162 + 1 + 18
    = 181 and 183. Group 2 enters at 181, its warps issue node j at 181 + 18 j and 182 + 18 j,
    group 3 (entering at 183) at 183 + 18 j and 184 + 18 j: no two want the pipeline at once, so
    they end at 181 + 181 = 362 and 183 + 181 = 364."""
    result = simulate(chain(10, 1, 18), 2, 4, 2, steady_state=False, **rules)
    assert result.completions == (181, 183, 362, 364)
    assert result.cycles == 364


@pytest.mark.parametrize("rules", [{}, {"selection": "oldest", "poll": True}], ids=["defaults", "oldest-cycle"])
def test_saturated_memory_pipeline(rules):
    """3 independent loads (4, 500) per warp, 8 warps per group (24 loads, 96 cycles of issue),
    20 groups.

    8 resident: the 192 loads of groups 0-7 are ready at 0; ready order is group order, so group
    g issues in [96 g, 96 g + 92] and completes at 96 g + 592. Group g + 8 enters then, and its
    loads are due at 96 (g + 8) = 96 g + 768 >= 96 g + 592: they are ready before their turn,
    so the pipeline never idles and the last of 480 issues is at 479 x 4, done 500 later: 2416.

    2 resident: groups 0 and 1 issue in [0, 92] and [96, 188] and complete at 592 and 688; each
    successor enters as its slot frees and finds the pipeline idle (the other slot's loads were
    issued long before), so each slot takes 92 + 500 = 592 per group and the second slot runs 96
    behind: group 19, the tenth of slot 1, completes at 96 + 10 x 592 = 6016."""
    loads = Graph(tuple(Node(i, "load", "ld", "global", 4, 500, ()) for i in range(3)), "test")
    assert simulate(loads, 8, 20, 8, steady_state=False, **rules).cycles == (20 * 8 * 3 - 1) * 4 + 500 == 2416
    assert simulate(loads, 8, 20, 2, steady_state=False, **rules).cycles == 96 + 10 * 592 == 6016


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
    assert simulate(chain(100, issue, completion), 64, 1, 1).cycles == eq1(100, 0.25, 6, 64)


@pytest.mark.parametrize("rules", [{}, {"selection": "oldest", "poll": True}], ids=["defaults", "oldest-cycle"])
def test_steady_state_skip_matches_full_simulation(rules):
    """N = 50 groups: skipping whole steady-state cycles gives the time, the busy fractions and
    the instruction count of the simulation of every group."""
    graph = Graph((Node(0, "index", "i", "alu", 1, 18, ()), Node(1, "load", "x", "global", 4, 500, (0,)),
                   Node(2, "load", "y", "global", 4, 500, (0,)), Node(3, "fma", "z", "alu", 1, 18, (1, 2)),
                   Node(4, "store", "y", "global", 4, 500, (3,))), "test")
    for resident in (1, 2, 3, 4, 8):
        full = simulate(graph, 4, 50, resident, steady_state=False, **rules)
        fast = simulate(graph, 4, 50, resident, **rules)
        assert not full.extrapolated and len(full.completions) == 50
        assert fast.cycles == pytest.approx(full.cycles, rel=1e-12)
        assert fast.issued == full.issued == 50 * 4 * 5
        assert fast.busy == pytest.approx(full.busy, rel=1e-12)
        if resident <= 3:  # with more resident the completions are not periodic before the end
            assert fast.extrapolated and len(fast.completions) < 50


def test_steady_state_cycles_other_than_the_resident_count():
    """Warps served in ready order, 4 resident groups of 8 warps with 3 independent loads
    (6, 165) each: groups that start together stay in step and the completions repeat every 3,
    not every 4. Skipping those cycles still gives the full simulation's time."""
    graph = Graph((Node(0, "index", "i", "alu", 1, 18, ()),
                   *(Node(k, "load", "ld", "global", 6, 165, (0,)) for k in (1, 2, 3)),
                   Node(4, "add", "s", "alu", 1, 18, (1, 2, 3)), Node(5, "store", "st", "global", 6, 165, (4,))),
                  "test")
    full = simulate(graph, 8, 120, 4, steady_state=False)
    c = full.completions
    steps = [c[i] - c[i - 3] for i in range(20, 100)]
    assert max(steps) - min(steps) < 1e-6 * max(steps)  # the cycle of 3 completions
    assert max(c[i] - c[i - 4] for i in range(20, 100)) > 1.01 * min(c[i] - c[i - 4] for i in range(20, 100))
    fast = simulate(graph, 8, 120, 4)
    assert fast.extrapolated and len(fast.completions) < 30
    assert fast.cycles == pytest.approx(full.cycles, rel=1e-12)


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
    """After an idle spell the paper's pipeline as printed re-checks once per cycle: with lambda =
    0.25 and a result ready at 6.1 the next issue is at 0.25 + 6 = 6.25 (polling) or 6.1
    (event-driven, the default); the second node completes 1 later."""
    nodes = (Node(0, "add", "a", "alu", 0.25, 6.1, ()), Node(1, "add", "b", "alu", 0.25, 1, (0,)))
    graph = Graph(nodes, "test")
    assert simulate(graph, 1, 1, 1, poll=True).cycles == pytest.approx(7.25)
    assert simulate(graph, 1, 1, 1).cycles == pytest.approx(7.1)
    assert math.isclose(simulate(chain(100, 1, 18), 1, 1, 1, poll=True).cycles, 1800)


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
