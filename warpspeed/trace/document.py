"""The trace as typed data: :class:`Trace` and its sections, whose JSON form is the file format.

A trace (format ``warpspeed-trace``, version 1; ``docs/trace.md`` describes every key, its unit
and its source) is one frozen dataclass per JSON object: the fields are the keys, in file order
(:func:`warpspeed.files.records.json_record` writes them, :func:`trace_from_json` reads a
document back). The interval and power models read these fields; ``schema.json`` is the JSON
Schema every written trace validates against.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from warpspeed.files.records import from_json, json_record
from warpspeed.trace.activity import ThreadActivity
from warpspeed.sass.instructions import Instruction

#: Name and version of the trace format.
TRACE_FORMAT = "warpspeed-trace"
TRACE_VERSION = 1


@dataclass(frozen=True)
class Generator:
    """The code generator of the kernel and its version."""

    name: str
    version: str | None


@dataclass(frozen=True)
class TraceFlops:
    """Floating-point operations per lattice update (an FMA is one ``fmas`` and two flops)."""

    adds: int
    muls: int
    fmas: int
    divs: int
    flops_per_lup: float


@dataclass(frozen=True)
class TraceField:
    """One field of the kernel: element size (bytes) and accesses per lattice update."""

    name: str
    element_bytes: int
    loads_per_lup: int
    stores_per_lup: int


@dataclass(frozen=True)
class TraceKernel:
    """The kernel: name, generator, precision, domain (cells) and lattice updates, flops, fields."""

    name: str
    generator: Generator | None
    dtype: str
    domain: tuple[int, ...]
    lups: int
    flops: TraceFlops
    fields: tuple[TraceField, ...]


@dataclass(frozen=True)
class TraceDevice:
    """The device: name, vendor, architecture, SMs, SM clock (MHz) and warp size."""

    name: str
    vendor: str
    architecture: str
    sms: int
    clock_mhz: float
    warp_size: int


@dataclass(frozen=True)
class TraceBlockKind:
    """Blocks that cover the domain alike: how many, whether they are the last along x, y, z, and
    per warp whether it is full (:class:`warpspeed.trace.warps.BlockKind`)."""

    count: int
    last: tuple[bool, ...]
    full: tuple[bool, ...]


@dataclass(frozen=True)
class TraceLaunch:
    """The launch geometry, occupancy, waves, registers and warps (``docs/trace.md``)."""

    block: tuple[int, ...]
    fold: tuple[int, ...]
    grid: tuple[int, ...]
    blocks: int
    threads_per_block: int
    warps_per_block: int
    cells_per_thread: int
    blocks_per_sm: int
    occupancy_limiter: str
    active_sms: int
    waves: int
    wave_blocks: int
    registers_per_thread: int
    registers_source: str
    shared_bytes_per_block: int
    full_warps: int
    guard_warps: int
    valid_threads: int
    active_lanes_per_warp: float
    block_kinds: tuple[TraceBlockKind, ...]


@dataclass(frozen=True)
class TraceInstructions:
    """The representative warp's instructions in program order, where they come from (``sass`` or
    ``derived``), the guard prologue's length, the mix per functional unit, the opcode counts and
    the per-thread activity the power model reads."""

    source: str
    arch: str | None
    compiler: str | None
    stream: tuple[Instruction, ...]
    full_path_instructions: int
    guard_exit_instructions: int
    mix_per_warp: Mapping[str, int]
    opcode_counts: Mapping[str, int]
    activity_per_thread: ThreadActivity


@dataclass(frozen=True)
class FieldMemory:
    """One field's memory figures: memory instructions per thread, L1 cycles and volumes per level
    (bytes per lup), and per warp instruction the L1 wavefronts, the L2 sectors, and the L1 and
    L2 miss rates (``docs/trace.md``; :mod:`warpspeed.trace.build`)."""

    loads_per_thread: int
    stores_per_thread: int
    l1_cycles_per_lup: float
    l1_load_bytes_per_lup: float
    l2_load_bytes_per_lup: float
    l2_store_bytes_per_lup: float
    dram_load_bytes_per_lup: float
    dram_store_bytes_per_lup: float
    l1_wavefronts_per_instruction: float
    l2_load_sectors_per_load: float
    l2_store_sectors_per_store: float
    l1_miss_rate: float
    l2_miss_rate: float


@dataclass(frozen=True)
class TotalMemory:
    """The figures of :class:`FieldMemory` over all fields (in the file's order of the totals)."""

    l1_cycles_per_lup: float
    l1_load_bytes_per_lup: float
    l2_load_bytes_per_lup: float
    l2_store_bytes_per_lup: float
    dram_load_bytes_per_lup: float
    dram_store_bytes_per_lup: float
    l1_miss_rate: float
    l2_miss_rate: float
    loads_per_thread: int
    stores_per_thread: int
    l1_wavefronts_per_instruction: float
    l2_load_sectors_per_load: float
    l2_store_sectors_per_store: float


@dataclass(frozen=True)
class TraceMemory:
    """Memory activity per field and in total; ``mapping``: ``per_field`` when every field's
    traffic maps to memory instructions of that field, else ``uniform``."""

    mapping: str
    fields: Mapping[str, FieldMemory]
    totals: TotalMemory


@dataclass(frozen=True)
class TraceRoofline:
    """The roofline's rate (lups/s; None where no limiter binds), limiter, limits (lups/s, None
    for infinite) and the DRAM bandwidth it used (GB/s)."""

    lups_per_s: float | None
    limiter: str
    limits: Mapping[str, float | None]
    dram_bandwidth_gb_s: float


@dataclass(frozen=True)
class Trace:
    """One trace: a kernel on a device in one launch configuration (module docstring)."""

    format: str
    version: int
    kernel: TraceKernel
    device: TraceDevice
    launch: TraceLaunch
    instructions: TraceInstructions
    memory: TraceMemory
    roofline: TraceRoofline

    def as_json(self) -> dict[str, Any]:
        """The JSON document (the file format; a new dict on every call)."""
        return json_record(self)

    def with_registers_source(self, source: str) -> "Trace":
        """This trace with the kernel's register count attributed to ``source`` (``ptxas``,
        ``estimate``, ``given``: what the caller that resolved the kernel knows), unless the launch
        used the default count (``assumed``), as :func:`warpspeed.trace.build.build_trace` decides."""
        if self.launch.registers_source == "assumed":
            return self
        return replace(self, launch=replace(self.launch, registers_source=source))


def trace_from_json(document: Mapping[str, Any]) -> Trace:
    """A :class:`Trace` from its JSON document (as :meth:`Trace.as_json` writes it, or as read
    from a file with :func:`warpspeed.trace.schema.parse_trace`), checked first by
    :func:`warpspeed.trace.schema.validate_trace` (schema, finite numbers, ranges): a one-line
    :class:`~warpspeed.trace.schema.TraceError` otherwise."""
    from warpspeed.trace.schema import validate_trace

    validate_trace(dict(document))
    return from_json(Trace, document)
