"""Issue and completion latencies of the graph's nodes: architecture tables and the memory model.

Non-memory nodes take (pipeline, lambda, Lambda) from the instruction facts of the architecture
(``warpspeed/hardware/instructions/<arch>.toml``, :mod:`warpspeed.hardware.instruction_facts`:
the one table of instruction latencies the interval model and the in-core time read too, every
number with its source there). lambda is either fixed (the measured values of Cornelis
and Lemeire, PDP 2019, Tables II-III, for Fermi and Pascal) or ``warp_size / lanes per SM``
(``issue = "device"``: the device file's FP lanes, the same the roofline's FP limiter uses).

Global memory nodes take both latencies from warpspeed's prediction of this launch:

- ``Lambda_mem = L1 + m1 * L2 + m1 * m2 * DRAM`` cycles (average memory access time), with the
  device's latency increments (:attr:`warpspeed.hardware.device.Device.latencies`), and the miss rates m1 = L2->L1 load bytes / L1 load bytes, m2 = DRAM load bytes /
  L2->L1 load bytes of the prediction;
- ``lambda_mem = max(L1 cycles per lup, L2 bytes per lup / (B_L2 / (P f)),
  DRAM bytes per lup / (B_DRAM / (P f))) * warp_size * F / n`` cycles, with F cells per thread,
  n global memory nodes per warp, P SMs, f the clock, B the bandwidths the roofline uses (the
  DRAM one achievable at this launch's bytes in flight). A warp's n memory nodes then occupy the
  memory pipeline for exactly the roofline's binding memory time per warp, so at high occupancy
  the simulation runs at the roofline's memory limit and adds latency effects below it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

from warpspeed.errors import WarpspeedError
from warpspeed.hardware.instruction_facts import InstructionFactsError, UnitFacts, load_family
from warpspeed.hardware.memory_latency import architecture_data, architectures
from warpspeed.pipeline.graph import FP_KINDS, GLOBAL_MEMORY_KINDS, Graph, Node, Operation
from warpspeed.units import GIGA

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device
    from warpspeed.prediction import Prediction

#: Operation kinds whose latency row is named after the kind itself.
_OWN_ROW = ("sfu", "loop", "barrier", "shared_load", "shared_store", "other")


class LatencyError(WarpspeedError):
    """Missing or malformed pipeline latencies."""


#: A row of the latency table: the instruction facts' unit row (pipeline, lambda, Lambda).
UnitLatency = UnitFacts


@dataclass(frozen=True)
class LatencyTable:
    """The latency file of one architecture."""

    architecture: str
    pipelines: str
    units: Mapping[str, UnitLatency]
    memory: Mapping[str, float | str]

    def unit(self, name: str) -> UnitLatency:
        if name not in self.units:
            raise LatencyError(f"no pipeline-model latency for {name!r} instructions on {self.architecture}; "
                               f"the table has: {', '.join(self.units)}")
        return self.units[name]


def load_latencies(architecture: str) -> LatencyTable:
    """The latency table of ``architecture`` (e.g. ``"ampere"``): the unit rows and pipelines of
    its instruction facts and the ``[memory]`` table of its latency file, or a one-line error
    naming the architectures that have one."""
    known = architectures()
    if architecture not in known:
        raise LatencyError(f"no pipeline-model latencies for architecture {architecture!r}; "
                           f"available: {', '.join(known)}")
    try:
        facts = load_family(architecture)
    except InstructionFactsError as exc:
        raise LatencyError(str(exc)) from None
    data = architecture_data(architecture, LatencyError)
    return LatencyTable(architecture, facts.pipelines, dict(facts.units), dict(data.get("memory", {})))


def unit_name(op: Operation) -> str:
    """The latency row of an operation: by precision for FP arithmetic, ``int`` for index and
    compare, the kind itself otherwise."""
    if op.kind in FP_KINDS:
        return {"float64": "fp64", "float32": "fp32", "float16": "fp16"}[op.precision or "float64"]
    if op.kind in ("index", "compare"):
        return "int"
    if op.kind in _OWN_ROW:
        return op.kind
    raise LatencyError(f"operation kind {op.kind!r} has no latency row")


@dataclass(frozen=True)
class MemoryLatency:
    """lambda and Lambda of the global memory nodes (cycles) and what they were computed from."""

    pipeline: str
    issue: float
    completion: float
    details: Mapping[str, float]


def _miss(num: float, den: float) -> float:
    return min(1.0, max(0.0, num / den)) if den > 0 else 0.0


def memory_latency(prediction: "Prediction", table: LatencyTable, memory_nodes: int) -> MemoryLatency:
    """lambda_mem and Lambda_mem of this launch (see the module docstring)."""
    device = prediction.device
    pipeline = str(table.memory.get("pipeline", "global"))
    if memory_nodes <= 0:
        return MemoryLatency(pipeline, 0.0, 0.0, {})
    latencies = device.latencies
    l1_lat, l2_lat, dram_lat = latencies.l1, latencies.l2, latencies.dram
    fp = prediction.footprint
    l2_load, dram_load = prediction.l2_load_bytes_per_lup, prediction.dram.load_bytes_per_lup
    m1, m2 = _miss(l2_load, fp.l1_load_bytes_per_lup), _miss(dram_load, l2_load)
    per_sm_cycle = device.sms * device.clock_ghz * GIGA
    l2_bytes_per_cycle = device.l2.bandwidth_gb_s * GIGA / per_sm_cycle
    dram_bytes_per_cycle = prediction.roofline.dram_bandwidth_gb_s * GIGA / per_sm_cycle
    lups_per_node = device.warp_size * prediction.launch.launch.cells_per_thread / memory_nodes
    terms = {
        "l1": prediction.l1.cycles_per_lup * lups_per_node,
        "l2": (l2_load + prediction.l2_store_bytes_per_lup) * lups_per_node / l2_bytes_per_cycle,
        "dram": (dram_load + prediction.dram.store_bytes_per_lup) * lups_per_node / dram_bytes_per_cycle,
    }
    completion = l1_lat + m1 * l2_lat + m1 * m2 * dram_lat
    details = {"l1_latency_cycles": l1_lat, "l2_latency_cycles": l2_lat, "dram_latency_cycles": dram_lat,
               "l1_miss_rate": m1, "l2_miss_rate": m2, "memory_nodes_per_warp": memory_nodes,
               **{f"{k}_issue_cycles": v for k, v in terms.items()}}
    return MemoryLatency(pipeline, max(terms.values()), completion, details)


def fixed_memory_latency(table: LatencyTable) -> MemoryLatency:
    """The architecture table's own memory row (``issue``/``completion``; the paper's measured
    uncached global read for Fermi and Pascal)."""
    try:
        return MemoryLatency(str(table.memory.get("pipeline", "global")), float(table.memory["issue"]),
                             float(table.memory["completion"]), {})
    except KeyError:
        raise LatencyError(f"{table.architecture}.toml: [memory] has no fixed issue/completion") from None


#: Graph sources that are machine code, issued in program order by the hardware.
IN_ORDER_SOURCES = frozenset(("sass",))


def attach_latencies(operations: tuple[Operation, ...], table: LatencyTable, device: "Device",
                     memory: MemoryLatency, source: str) -> Graph:
    """The :class:`Graph` of ``operations`` with each node's pipeline and latencies. A division
    is one node on its FP pipeline (as the roofline counts it) that completes after a
    reciprocal on the SFU and a multiply: Lambda = Lambda_sfu + Lambda_fp."""
    nodes = []
    for i, op in enumerate(operations):
        if op.kind in GLOBAL_MEMORY_KINDS:
            pipeline, issue, completion = memory.pipeline, memory.issue, memory.completion
        else:
            row = table.unit(unit_name(op))
            pipeline, issue, completion = row.pipeline, row.issue_cycles(device, op.precision), row.completion
            if op.kind == "div":
                completion += table.unit("sfu").completion
        nodes.append(Node(i, op.kind, op.label or op.kind, pipeline, issue, completion, op.inputs, op.field))
    return Graph(tuple(nodes), source, in_order=source in IN_ORDER_SOURCES)
