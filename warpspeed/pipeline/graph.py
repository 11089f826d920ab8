"""The instruction dependence graph (IDG) of the pipeline model.

Cornelis, Lemeire: "The Pipeline Performance Model: A Generic Executable Performance Model for
GPUs", 27th Euromicro International Conference on Parallel, Distributed and Network-Based
Processing (PDP), 2019, section III.C. A node is one instruction of one warp with an issue
latency lambda (cycles between issuing it and issuing another independent instruction on the
same pipeline: the reciprocal throughput) and a completion latency Lambda (cycles from issue until
its result is available); an edge is a data dependence, producer -> consumer. Every warp of a
thread block runs the same graph.

Graphs are built from a neutral list of :class:`Operation` records in program order, which the
builders produce from three sources:

- the pystencils typed AST (:mod:`pystencils_plugin.graph`; the plugin stores the list in the
  kernel's code record, ``KernelCode.operations``, so the core never imports the plugin);
- a warp instruction stream (:class:`warpspeed.sass.instructions.InstructionStream`): the
  compiled SASS, or the stream derived from the kernel description when nothing can be
  compiled (:func:`operations_from_stream`; edges from register read-after-write).

Latencies are attached later (:func:`warpspeed.pipeline.latency.attach_latencies`): a graph of
operations is hardware independent, a :class:`Graph` is not.
"""

from __future__ import annotations

from dataclasses import dataclass

from warpspeed.errors import WarpspeedError
from warpspeed.sass.instructions import InstructionStream

#: Operation kinds and what they stand for. ``unit`` selects the row of the architecture's
#: latency table (:mod:`warpspeed.pipeline.latency`).
OPERATION_KINDS: dict[str, str] = {
    "index": "integer index or address computation (int unit)",
    "compare": "integer comparison of the bounds guard (int unit)",
    "load": "global memory load",
    "store": "global memory store",
    "shared_load": "shared (local) memory load",
    "shared_store": "shared (local) memory store",
    "add": "floating-point addition or subtraction",
    "mul": "floating-point multiplication",
    "fma": "fused floating-point multiply-add",
    "div": "floating-point division (reciprocal and multiply)",
    "sfu": "special function (sqrt, exp, sin, reciprocal, ...)",
    "loop": "loop overhead of one iteration of a loop that is not unrolled",
    "barrier": "block-wide barrier (__syncthreads)",
    "other": "any other instruction (control flow, moves, constant loads)",
}
#: Kinds that access global memory (their latencies come from the memory model).
GLOBAL_MEMORY_KINDS = frozenset(("load", "store"))
#: Where a graph may come from (:func:`warpspeed.pipeline.launch_time.operations`): ``auto`` (the
#: generator's source-level operations when the kernel carries them), ``ast``, ``sass`` or ``derived``.
GRAPH_SOURCES = ("auto", "ast", "sass", "derived")
#: Kinds that are floating-point arithmetic (the unit depends on the precision).
FP_KINDS = frozenset(("add", "mul", "fma", "div"))
#: Precisions an FP operation may carry.
PRECISIONS = ("float64", "float32", "float16")


class GraphError(WarpspeedError):
    """A malformed instruction dependence graph."""


@dataclass(frozen=True)
class Operation:
    """One source-level (or machine) instruction of a thread, in program order.

    ``inputs``: indices of earlier operations whose results it reads; ``precision``: the dtype
    of FP operations (``None`` otherwise); ``field``: the array a memory operation accesses;
    ``label``: what the critical-path table prints (e.g. ``"load f[x+1,y,z]"`` or ``"DFMA"``).
    """

    kind: str
    inputs: tuple[int, ...] = ()
    precision: str | None = None
    field: str | None = None
    label: str = ""

    def __post_init__(self) -> None:
        if self.kind not in OPERATION_KINDS:
            raise GraphError(f"unknown operation kind {self.kind!r}; allowed: {', '.join(OPERATION_KINDS)}")
        if self.precision is not None and self.precision not in PRECISIONS:
            raise GraphError(f"unknown precision {self.precision!r}; allowed: {', '.join(PRECISIONS)}")


def check_operations(operations: tuple[Operation, ...]) -> tuple[Operation, ...]:
    """``operations`` if every input refers to an earlier operation (the list is in program
    order, so the graph is acyclic), else a one-line :class:`GraphError`."""
    if not operations:
        raise GraphError("the instruction dependence graph is empty: a kernel needs at least one operation")
    for i, op in enumerate(operations):
        for j in op.inputs:
            if not 0 <= j < i:
                raise GraphError(f"operation {i} ({op.kind}) reads operation {j}, which is not an earlier "
                                 "operation; inputs must refer to earlier operations (program order)")
    return operations


@dataclass(frozen=True)
class Node:
    """One node of the graph with its latencies (cycles) and pipeline.

    ``issue``: lambda, cycles the pipeline is busy before it issues another instruction;
    ``completion``: Lambda, cycles from issue until the result is available.
    """

    id: int
    kind: str
    label: str
    pipeline: str
    issue: float
    completion: float
    inputs: tuple[int, ...]
    field: str | None = None


@dataclass(frozen=True)
class Graph:
    """An instruction dependence graph with latencies: the nodes of one warp in program order.

    ``source``: where the operations came from (``"ast"``, ``"sass"`` or ``"derived"``);
    ``in_order``: a warp issues the nodes in program order (machine code: the hardware issues a
    warp's instructions in order, so the simulator adds an issue edge from each node to the next);
    a source-level graph leaves the order to the compiler and only keeps the data dependences.
    """

    nodes: tuple[Node, ...]
    source: str
    in_order: bool = False

    @property
    def pipelines(self) -> tuple[str, ...]:
        """The pipelines the nodes use, in order of first use."""
        return tuple(dict.fromkeys(n.pipeline for n in self.nodes))

    def successors(self) -> tuple[tuple[int, ...], ...]:
        succ: list[list[int]] = [[] for _ in self.nodes]
        for node in self.nodes:
            for j in node.inputs:
                succ[j].append(node.id)
        return tuple(tuple(s) for s in succ)

    def count(self, kind: str) -> int:
        return sum(1 for n in self.nodes if n.kind == kind)

    def completion_delays(self) -> tuple[float, ...]:
        """Cycles from issue to completion per node: Lambda, except for a store no node reads,
        which completes at issue + lambda ("the warp is considered complete as soon as the final
        memory request has been issued", Cornelis and Lemeire, PDP 2019, Fig. 1)."""
        succ = self.successors()
        return tuple(n.issue if n.kind in ("store", "shared_store") and not succ[n.id] else n.completion
                     for n in self.nodes)

    def critical_path(self) -> tuple[tuple[Node, float], ...]:
        """The longest dependence chain of one warp, weighted by each node's completion delay:
        ``(node, cycles it adds)`` from the first node to the last. Its total is the time of a
        single warp when every node issues as soon as its inputs are complete."""
        delays = self.completion_delays()
        finish = [0.0] * len(self.nodes)
        parent = [-1] * len(self.nodes)
        for node in self.nodes:
            start = 0.0
            for j in node.inputs:
                if finish[j] > start:
                    start, parent[node.id] = finish[j], j
            finish[node.id] = start + delays[node.id]
        last = max(range(len(self.nodes)), key=lambda i: (finish[i], -i))
        path = []
        while last >= 0:
            path.append((self.nodes[last], delays[last]))
            last = parent[last]
        return tuple(reversed(path))


# ---- operations from a warp instruction stream ------------------------------------------------

#: Functional unit of the trace -> operation kind (FP kinds are refined by opcode).
_KIND_BY_FU = {"int": "index", "sfu": "sfu", "shared": "shared_load", "mio": "other", "control": "other",
               "tensor": "other"}
#: FP opcode stems -> kind (CUDA Binary Utilities, Instruction Set Reference).
_FP_KIND = {"ADD": "add", "MUL": "mul", "FMA": "fma"}
_PRECISION_BY_FU = {"fp64": "float64", "fp32": "float32"}
#: Registers that are constants, never written by an instruction (zero and true registers).
_CONSTANT_REGISTERS = frozenset(("RZ", "PT", "URZ", "UPT"))


def _register_names(operand: str) -> tuple[str, ...]:
    """Register names an operand reads: ``R4`` and, for 64-bit operations, not its pair (the
    parser records the base register of a pair)."""
    name = operand.lstrip("!-|~").split(".")[0]
    if name in _CONSTANT_REGISTERS or not name or not name[0] in "RPU":
        return ()
    return (name,)


def _stream_kind(opcode: str, fu: str, space: str | None, is_store: bool) -> tuple[str, str | None]:
    if space == "global":
        return ("store" if is_store else "load"), None
    if space == "shared":
        return ("shared_store" if is_store else "shared_load"), None
    if fu in _PRECISION_BY_FU:
        stem = opcode[1:] if opcode[0] in "DFH" else opcode
        kind = _FP_KIND.get(stem[:3], "add")
        return kind, ("float16" if opcode.startswith("H") else _PRECISION_BY_FU[fu])
    if opcode == "BAR":
        return "barrier", None
    return _KIND_BY_FU.get(fu, "other"), None


def operations_from_stream(stream: InstructionStream, drop_control: bool = True) -> tuple[Operation, ...]:
    """The operations of a warp instruction stream (compiled SASS or derived): one per
    instruction of the full path, inputs from register read-after-write (the last earlier
    instruction that wrote each source register or predicate, including the guard predicate of
    a predicated instruction). ``drop_control``: leave out ``EXIT``, ``BRA`` and ``NOP`` (they
    produce no value and, in order, only mark the end of the path)."""
    ops: list[Operation] = []
    writer: dict[str, int] = {}
    for ins in stream.instructions:
        if drop_control and ins.fu == "control":
            continue
        reads = [r for operand in ins.src for r in _register_names(operand)]
        if ins.predicate:
            reads.extend(_register_names(ins.predicate))
        inputs = tuple(sorted({writer[r] for r in reads if r in writer}))
        kind, precision = _stream_kind(ins.opcode, ins.fu, ins.space, ins.is_store)
        label = ".".join((ins.opcode, *ins.modifiers))
        ops.append(Operation(kind, inputs, precision, ins.field, label))
        for operand in ins.dst:
            for r in _register_names(operand):
                writer[r] = len(ops) - 1
    return check_operations(tuple(ops))
