"""``build_trace(prediction)``: the per-kernel trace (format ``warpspeed-trace``, version 1).

One :class:`~warpspeed.trace.document.Trace` per (kernel, device, configuration) with everything
the interval and power models read: the kernel and its generator, the launch geometry, the
registers, the representative warp's instruction stream and its mix, the memory activity per
level and per field, and the roofline result. Its JSON form (:meth:`Trace.as_json`) is the file
format; the keys, units and sources are described in ``docs/trace.md``;
``warpspeed/trace/schema.json`` is the JSON Schema every trace validates against.

Per-field memory figures per warp instruction (for the interval model):

- ``l1_wavefronts_per_instruction`` (omega): the field's L1 cycles per lup x lups per full warp
  (:func:`lups_per_full_warp`: the domain's lups / the full warps, warp size x cells per thread
  when the warps' lanes are all inside the domain) / the field's memory instructions per thread;
- ``l2_load_sectors_per_load`` (r): L2 -> L1 bytes per lup x lups per warp / 32 B / loads per
  thread; ``l2_store_sectors_per_store`` (w) likewise with the L1 -> L2 store bytes;
- ``l1_miss_rate`` (m1): L2 -> L1 load bytes / L1 load bytes; ``l2_miss_rate`` (m2): DRAM load
  bytes / L2 -> L1 load bytes (both clamped to [0, 1]).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from warpspeed.files.jsonsafe import json_safe
from warpspeed.units import SECTOR_BYTES
from warpspeed.trace.activity import thread_activity
from warpspeed.sass.derived import derived_stream
from warpspeed.trace.document import (
    TRACE_FORMAT,
    TRACE_VERSION,
    FieldMemory,
    Generator,
    TotalMemory,
    Trace,
    TraceBlockKind,
    TraceDevice,
    TraceField,
    TraceFlops,
    TraceInstructions,
    TraceKernel,
    TraceLaunch,
    TraceMemory,
    TraceRoofline,
)
from warpspeed.sass.instructions import InstructionStream
from warpspeed.trace.warps import block_kinds, warp_counts

if TYPE_CHECKING:
    from warpspeed.prediction import Prediction



def _ratio(num: float, den: float) -> float:
    return min(1.0, max(0.0, num / den)) if den > 0 else 0.0


def _per(value: float, count: float) -> float:
    return value / count if count > 0 else 0.0


def instruction_stream(prediction: "Prediction") -> InstructionStream:
    """The representative warp's instructions: the kernel's compiled SASS when the kernel carries
    CUDA code and nvcc is available, else the stream derived from its description."""
    from warpspeed.sass import CompileError, sass_stream

    kernel, fold = prediction.kernel, tuple(prediction.launch.launch.fold)
    try:
        stream = sass_stream(kernel, prediction.device, fold)
    except CompileError:
        stream = None
    return stream if stream is not None else derived_stream(kernel, fold)


def lups_per_full_warp(lups: int, full_warps: int) -> float:
    """Lattice updates of one full warp: the domain's updates over the launch's full warps (warp
    size x cells per thread when every full warp has all its lanes inside the domain; fewer for
    blocks narrower than a warp or warps cut by the domain's edge)."""
    return lups / full_warps if full_warps else 0.0


def _memory(prediction: "Prediction", stream: InstructionStream, full_warps: int) -> TraceMemory:
    lups_per_warp = lups_per_full_warp(math.prod(prediction.kernel.domain), full_warps)
    fields: dict[str, FieldMemory] = {}
    mapped = True
    for name, fp in prediction.footprint.per_field.items():
        loads = stream.memory_instructions(name, stores=False)
        stores = stream.memory_instructions(name, stores=True)
        dram = prediction.dram.field(name)
        l1_cycles, l2_load = prediction.l1.per_field[name], prediction.l2_load_per_field[name]
        if (fp.l1_load_bytes_per_lup > 0 and loads == 0) or (fp.l2_store_bytes_per_lup > 0 and stores == 0):
            mapped = False
        fields[name] = FieldMemory(
            loads_per_thread=loads, stores_per_thread=stores, l1_cycles_per_lup=l1_cycles,
            l1_load_bytes_per_lup=fp.l1_load_bytes_per_lup, l2_load_bytes_per_lup=l2_load,
            l2_store_bytes_per_lup=fp.l2_store_bytes_per_lup, dram_load_bytes_per_lup=dram.load_bytes_per_lup,
            dram_store_bytes_per_lup=dram.store_bytes_per_lup,
            l1_wavefronts_per_instruction=_per(l1_cycles * lups_per_warp, loads + stores),
            l2_load_sectors_per_load=_per(l2_load * lups_per_warp / SECTOR_BYTES, loads),
            l2_store_sectors_per_store=_per(fp.l2_store_bytes_per_lup * lups_per_warp / SECTOR_BYTES, stores),
            l1_miss_rate=_ratio(l2_load, fp.l1_load_bytes_per_lup),
            l2_miss_rate=_ratio(dram.load_bytes_per_lup, l2_load))
    sums = {key: 0.0 for key in ("l1_cycles_per_lup", "l1_load_bytes_per_lup", "l2_load_bytes_per_lup",
                                 "l2_store_bytes_per_lup", "dram_load_bytes_per_lup", "dram_store_bytes_per_lup")}
    for entry in fields.values():
        for key in sums:
            sums[key] += getattr(entry, key)
    loads = sum(f.loads_per_thread for f in fields.values())
    stores = sum(f.stores_per_thread for f in fields.values())
    totals = TotalMemory(
        **sums, l1_miss_rate=_ratio(sums["l2_load_bytes_per_lup"], sums["l1_load_bytes_per_lup"]),
        l2_miss_rate=_ratio(sums["dram_load_bytes_per_lup"], sums["l2_load_bytes_per_lup"]),
        loads_per_thread=loads, stores_per_thread=stores,
        l1_wavefronts_per_instruction=_per(sums["l1_cycles_per_lup"] * lups_per_warp, loads + stores),
        l2_load_sectors_per_load=_per(sums["l2_load_bytes_per_lup"] * lups_per_warp / SECTOR_BYTES, loads),
        l2_store_sectors_per_store=_per(sums["l2_store_bytes_per_lup"] * lups_per_warp / SECTOR_BYTES, stores))
    return TraceMemory(mapping="per_field" if mapped else "uniform", fields=fields, totals=totals)


def build_trace(prediction: "Prediction", stream: InstructionStream | None = None,
                registers_source: str | None = None) -> Trace:
    """The trace of ``prediction`` (see the module docstring and ``docs/trace.md``). ``stream``:
    the instructions to record instead of :func:`instruction_stream`'s; ``registers_source``:
    where the kernel's register count came from (``ptxas``, ``estimate``, ``given``), when the
    caller knows (default: ``kernel``, or ``assumed`` when the launch used the default count)."""
    kernel, device, info = prediction.kernel, prediction.device, prediction.launch
    launch, occ = info.launch, info.occupancy
    stream = stream if stream is not None else instruction_stream(prediction)
    warps = warp_counts(launch, device.warp_size)
    code = getattr(kernel, "code", None)
    flops = kernel.flops
    return Trace(
        format=TRACE_FORMAT,
        version=TRACE_VERSION,
        kernel=TraceKernel(
            name=kernel.name,
            generator=(Generator(code.generator, code.generator_version)
                       if code is not None and code.generator else None),
            dtype=kernel.dtype, domain=tuple(kernel.domain), lups=math.prod(kernel.domain),
            flops=TraceFlops(flops.adds, flops.muls, flops.fmas, flops.divs, flops.flops),
            fields=tuple(TraceField(f.name, f.element_bytes, sum(1 for a in kernel.loads if a.field == f.name),
                                    sum(1 for a in kernel.stores if a.field == f.name)) for f in kernel.fields)),
        device=TraceDevice(device.name, device.vendor, device.architecture, device.sms, device.clock_mhz,
                           device.warp_size),
        launch=TraceLaunch(
            block=tuple(launch.block), fold=tuple(launch.fold), grid=tuple(launch.grid),
            blocks=launch.total_blocks, threads_per_block=launch.threads_per_block,
            warps_per_block=occ.warps_per_block, cells_per_thread=launch.cells_per_thread,
            blocks_per_sm=occ.blocks_per_sm, occupancy_limiter=occ.limiter,
            active_sms=min(device.sms, launch.total_blocks), waves=info.wave.count,
            wave_blocks=info.wave.blocks, registers_per_thread=occ.registers_per_thread,
            registers_source="assumed" if occ.registers_estimated else registers_source or "kernel",
            shared_bytes_per_block=kernel.shared_bytes_per_block,
            full_warps=warps.full_warps, guard_warps=warps.guard_warps,
            valid_threads=warps.valid_threads, active_lanes_per_warp=warps.active_lanes_per_warp,
            block_kinds=tuple(TraceBlockKind(k.count, k.last, k.full)
                              for k in block_kinds(launch, device.warp_size))),
        instructions=TraceInstructions(
            source=stream.source, arch=stream.arch, compiler=stream.compiler, stream=stream.instructions,
            full_path_instructions=stream.full_path_instructions,
            guard_exit_instructions=stream.guard_exit_instructions,
            mix_per_warp=stream.mix(), opcode_counts=stream.opcode_counts(),
            activity_per_thread=thread_activity(stream)),
        memory=_memory(prediction, stream, warps.full_warps),
        roofline=TraceRoofline(lups_per_s=json_safe(prediction.roofline.lups_per_s), limiter=prediction.roofline.limiter,
                               limits={k: json_safe(v) for k, v in prediction.roofline.limits.items()},
                               dram_bandwidth_gb_s=prediction.dram_bandwidth.achievable_gb_s),
    )
