"""``pipeline_result(prediction)``: the pipeline model's time for one launch configuration.

1. the instruction dependence graph of one warp (:mod:`warpspeed.pipeline.graph`) from the
   kernel's source-level operations when its generator attached them (the pystencils plugin
   does), else from the instruction stream derived from the kernel description, or (``source=
   "sass"``) from the compiled SASS when nvcc is available;
2. latencies per node (:mod:`warpspeed.pipeline.latency`), the global memory nodes' from this
   launch's predicted volumes and the device's bandwidths;
3. the busiest SM: N = ceil(blocks / SMs) thread blocks, M = blocks per SM resident at once,
   simulated event by event (:mod:`warpspeed.pipeline.simulate`);
4. **never faster than the bandwidth bound**: cycles = max(simulated cycles, the roofline's time x
   clock); the excess is reported as ``bandwidth_floor_cycles``. The memory pipeline already runs
   at the roofline's memory limit, so the floor only binds where the SMs' share of the grid is
   uneven in the roofline's favour or a limiter is not simulated.

Cornelis, Lemeire: "The Pipeline Performance Model: A Generic Executable Performance Model for
GPUs", 27th Euromicro International Conference on Parallel, Distributed and Network-Based
Processing (PDP), 2019.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from warpspeed.errors import WarpspeedError
from warpspeed.pipeline.graph import (
    GLOBAL_MEMORY_KINDS,
    GRAPH_SOURCES as SOURCES,
    Graph,
    Operation,
    check_operations,
    operations_from_stream,
)
from warpspeed.pipeline.latency import attach_latencies, load_latencies, memory_latency
from warpspeed.pipeline.simulate import DEFAULT_SELECTION, ISSUE_RULES, SimulationResult, groups_per_sm, simulate
from warpspeed.sass.instructions import InstructionStream
from warpspeed.trace.warps import block_kinds
from warpspeed.units import GIGA

if TYPE_CHECKING:
    from warpspeed.prediction import Prediction

#: Critical-path rows reported in ``details`` (the longest paths of big kernels are long).
CRITICAL_PATH_ROWS = 64

_latency_table = lru_cache(maxsize=None)(load_latencies)


def operations(prediction: "Prediction", source: str = "auto") -> tuple[tuple[Operation, ...], str, int]:
    """The operations of one thread of ``prediction``'s kernel, where they came from, and how
    many of them (from the start) a warp whose threads all fail the bounds guard runs.

    ``"auto"``: the source-level operations the kernel carries (``KernelCode.operations``,
    attached by its generator) if any and if they were generated for this launch's folding
    (stores = stores per cell x cells per thread), else the stream derived from the description;
    ``"ast"``: the attached operations or an error; ``"sass"``: the compiled SASS (derived when
    nothing can be compiled); ``"derived"``: the stream derived from the description."""
    from warpspeed.sass.derived import derived_stream

    if source not in SOURCES:
        raise WarpspeedError(f"unknown pipeline graph source {source!r}; choose one of {', '.join(SOURCES)}")
    kernel, fold = prediction.kernel, tuple(prediction.launch.launch.fold)
    attached = tuple(getattr(kernel.code, "operations", ()) or ())
    cells = prediction.launch.launch.cells_per_thread
    if attached and sum(1 for op in attached if op.kind == "store") != len(kernel.stores) * cells:
        if source == "ast":
            raise WarpspeedError(f"kernel {kernel.name!r}: its source-level operations were generated for another "
                                 f"folding than this launch's {cells} cells per thread")
        attached = ()  # code of another folding: derive the graph from the description instead
    if source in ("auto", "ast") and attached:
        ops = check_operations(attached)
        compares = [i for i, op in enumerate(ops) if op.kind == "compare"]
        return ops, "ast", (compares[-1] + 1 if compares else len(ops))
    if source == "ast":
        raise WarpspeedError(f"kernel {kernel.name!r} carries no source-level operations (only kernels from "
                             "the pystencils plugin do); use source 'derived' or 'sass'")
    if source == "sass":
        from warpspeed.trace.build import instruction_stream

        stream = instruction_stream(prediction)
    else:
        stream = derived_stream(kernel, fold)
    ops, guard = _stream_operations(stream)
    return ops, stream.source, guard


@lru_cache(maxsize=64)
def _stream_operations(stream: InstructionStream) -> tuple[tuple[Operation, ...], int]:
    prologue = InstructionStream(stream.source, stream.instructions[:stream.guard_exit_instructions], 0)
    guard = sum(1 for ins in prologue.instructions if ins.fu != "control")
    return operations_from_stream(stream), guard


def build_graph(prediction: "Prediction", source: str = "auto") -> tuple[Graph, dict, int]:
    """The graph with latencies of this launch, the memory latencies' details and the guard
    prologue's length (nodes)."""
    device = prediction.device
    ops, origin, prologue = operations(prediction, source)
    table = _latency_table(device.architecture)
    memory_nodes = sum(1 for op in ops if op.kind in GLOBAL_MEMORY_KINDS)
    memory = memory_latency(prediction, table, memory_nodes)
    graph = attach_latencies(ops, table, device, memory, origin)
    return graph, {"pipeline": memory.pipeline, "issue_cycles": memory.issue,
                   "completion_cycles": memory.completion, **memory.details}, prologue


def _explanation(sim: SimulationResult, floor_binds: bool, limiter: str) -> str:
    if floor_binds:
        return f"the {limiter} bandwidth bound"
    busy = sim.busy.get(sim.limiter, 0.0)
    return f"the {sim.limiter} pipeline ({100 * busy:.0f} % busy)"


def sub_partitions(warps: int, partitions: int, pipelines: str) -> int:
    """The processing blocks of an SM simulated as one (:func:`~warpspeed.pipeline.simulate.simulate`):
    for split-pipeline architectures (Volta and later) the largest number dividing the SM's
    sub-partitions and the warps per block; 1 for the paper's shared pipelines."""
    return math.gcd(warps, partitions) if pipelines == "split" else 1


def guard_shares(prediction: "Prediction", partitions: int) -> tuple[tuple[float, int], ...]:
    """``(share of the grid's blocks, guard-only warps to simulate)`` per kind of block.

    The blocks of a grid differ only in which warps fail the bounds guard for all their threads
    (:func:`warpspeed.trace.warps.block_kinds`, exact). A block's warps go to the ``partitions``
    processing blocks in turn (warp i to processing block i mod s) and the block completes with
    its slowest one, so each kind is simulated with the processing block holding the most full
    warps: guard = warps - s x that count. Kinds with equal counts are merged."""
    launch = prediction.launch.launch
    shares: dict[int, float] = {}
    for kind in block_kinds(launch, prediction.device.warp_size):
        busiest = max(sum(kind.full[j::partitions]) for j in range(partitions))
        guard = len(kind.full) - partitions * busiest
        shares[guard] = shares.get(guard, 0.0) + kind.count / launch.total_blocks
    return tuple(sorted(((share, guard) for guard, share in shares.items()), reverse=True))


@dataclass(frozen=True)
class PipelineResult:
    """The pipeline model's verdict: lattice updates per second, kernel time (s), SM cycles, what
    the critical path is busy with, and the JSON-ready ``details`` (see :func:`pipeline_result`)."""

    lups_per_s: float
    seconds: float
    cycles: float
    explanation: str
    details: dict[str, Any]


def pipeline_result(prediction: "Prediction", source: str = "auto", poll: bool = False, steady_state: bool = True,
                    **simulation: Any) -> PipelineResult:
    """The pipeline model's :class:`PipelineResult` for ``prediction`` (as a time model:
    :data:`warpspeed.pipeline.time_model.PIPELINE`).

    ``details``: ``cycles``, ``lups_per_s``, ``simulated_cycles``, ``bandwidth_floor_cycles``,
    ``critical_path`` ([{instruction, pipeline, cycles}] of one warp's longest dependence chain),
    ``critical_path_cycles``, ``pipeline_busy`` (fraction per pipeline), ``limiter``, the launch
    as simulated, the memory latencies and ``rules`` (``selection``; ``issue``: ``event`` or
    ``cycle`` for polling). ``poll`` and further keyword options (``selection``,
    ``completions_first``, ``sub_partitions``, ...) go to :func:`warpspeed.pipeline.simulate.simulate`;
    its defaults (event-driven issue, warps served in ready order) reproduce the paper's Eq. 1.

    Grids whose blocks differ in their guard-only warps (a last, partial block along a
    dimension) are simulated once per kind of block, each kind's time for the busiest SM's N
    blocks weighted by its share of the grid."""
    device, info = prediction.device, prediction.launch
    graph, memory, prologue = build_graph(prediction, source)
    occ = info.occupancy
    groups = groups_per_sm(info.launch.total_blocks, device.sms)
    s = simulation.setdefault("sub_partitions", sub_partitions(occ.warps_per_block, device.register_partitions,
                                                               _latency_table(device.architecture).pipelines))
    selection = simulation.setdefault("selection", DEFAULT_SELECTION)
    kinds = guard_shares(prediction, s)
    runs = [(share, guard, simulate(graph, occ.warps_per_block, groups, occ.blocks_per_sm, poll=poll,
                                    steady_state=steady_state, guard_warps=guard, guard_nodes=prologue,
                                    **simulation)) for share, guard in kinds]
    share, guard, sim = runs[0]  # the most common kind: its pipelines, completions and launch are reported
    simulated = sum(share * run.cycles for share, _, run in runs)
    clock_hz = device.clock_ghz * GIGA
    lups = math.prod(info.launch.domain)
    roofline_rate = prediction.roofline.lups_per_s
    floor = lups / roofline_rate * clock_hz if roofline_rate > 0 and math.isfinite(roofline_rate) else 0.0
    cycles = max(simulated, floor)
    seconds = cycles / clock_hz
    rate = lups / seconds if seconds > 0 else math.inf
    path = graph.critical_path()
    details = {
        "cycles": cycles,
        "lups_per_s": rate,
        "simulated_cycles": simulated,
        "bandwidth_floor_cycles": max(0.0, floor - simulated),
        "limiter": sim.limiter,
        "roofline_limiter": prediction.roofline.limiter,
        "pipeline_busy": dict(sim.busy),
        "critical_path_cycles": sum(c for _, c in path),
        "critical_path": [{"instruction": node.label, "pipeline": node.pipeline, "cycles": c}
                          for node, c in path[:CRITICAL_PATH_ROWS]],
        "graph": {"source": graph.source, "nodes": len(graph.nodes),
                  "nodes_per_pipeline": {p: sum(1 for n in graph.nodes if n.pipeline == p) for p in graph.pipelines},
                  "edges": sum(len(n.inputs) for n in graph.nodes), "latencies": device.architecture},
        "launch": {"groups_per_sm": groups, "resident_groups": sim.resident, "warps_per_group": sim.warps_per_group,
                   "guard_warps_per_group": guard, "guard_prologue_nodes": prologue,
                   "block_kinds": [{"share": k_share, "guard_warps": k_guard} for k_share, k_guard in kinds],
                   "sub_partitions": s, "simulated_groups": len(sim.completions), "extrapolated": sim.extrapolated,
                   "instructions_simulated": sum(run.issued for _, _, run in runs)},
        "rules": {"selection": selection, "issue": ISSUE_RULES[1] if poll else ISSUE_RULES[0]},
        "memory": memory,
    }
    return PipelineResult(rate, seconds, cycles, _explanation(sim, cycles > simulated, prediction.roofline.limiter), details)
