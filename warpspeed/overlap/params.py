"""Constants of the overlap model, with what each was taken or fitted from.

A device file may override any of them in an ``[overlap]`` table; every other NVIDIA device takes
the defaults below. Documented constants come from vendor documentation or published
microbenchmarks; fitted ones say what they were fitted on (all on one data set: the 168 launch
configurations of the 25-point star stencil, 640x512x512, double, timed on an NVIDIA H200 and
profiled with Nsight Compute, ``fits/data/H200/``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

from warpspeed.errors import DeviceError
from warpspeed.files.toml import table_number

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device

#: Seconds per nanosecond; hertz per gigahertz.
NANO, GIGA = 1e-9, 1e9
#: The device-file table of the model's constants.
TABLE = "overlap"

#: Exponent p of the smooth maximum that combines the first level's time and the DRAM time,
#: ``(t_L1^p + t_DRAM^p)^(1/p)``. p -> infinity is the roofline's perfect overlap; p = 1 is no
#: overlap at all (the non-overlapping transfers of the ECM model). Fitted together with
#: :data:`MISS_REQUESTS_PER_CYCLE`: least mean absolute percentage error of the rates of the 160
#: timed H200 configurations (``fits/data/H200/``; 3.46 and 0.619, rounded), with the drain fixed
#: at the documented DRAM latency. Between 3 and 4 the error changes by less than 0.3 points.
OVERLAP_EXPONENT = 2.5

#: L1 -> L2 line requests the L1TEX miss stage sends per cycle and SM. Fitted with
#: :data:`OVERLAP_EXPONENT` on the same timings; the blocks one thread wide in x, whose every lane
#: misses in a line of its own, bind it: they run at 0.50-0.55 counted requests per cycle and SM
#: whatever their shape and folding. The fitted rate also absorbs the error of the L1
#: capacity-miss curve on such blocks (a block-level LRU simulation of the L1 counts up to twice as
#: many misses there and puts the rate near one request per cycle). The request path is
#: documented (Nsight Compute Kernel Profiling Guide, L1TEX miss stage; metric
#: ``l1tex__m_l1tex2xbar_req``), its rate is not.
MISS_REQUESTS_PER_CYCLE = 0.7

#: DRAM sector transfers of a sector that a block row covers only in part (:mod:`warpspeed.memory.sectors`):
#: a load reads it for this block alone (1), a store reads, merges and writes it back for this
#: block (2: HBM with ECC writes whole sectors, so a partial write is a read-modify-write). Not fitted:
#: the mechanism's counts; checked against 124 multi-array copies timed on an H200 (their mean, 1.5,
#: gives 7.9 % mean error on the bandwidth by block width; ``fits/data/H200/mech-segments.csv``) and
#: against the DRAM counters of four profiled copies (``fits/data/H200/copy19-pull.ncu.csv``).
PARTIAL_SECTOR_LOAD_COST = 1.0
PARTIAL_SECTOR_STORE_COST = 2.0

#: Scale of the L1 capacity in the L1 capacity-miss curve's oversubscription (see
#: :func:`l1_capacity_oversubscription`): the curve was fitted on an A100 with 192 KiB of L1 at
#: ``o = V_alloc / sqrt(L1 x 128 KiB)``; scaling the capacity linearly from there,
#: ``o = V_alloc / (L1 x sqrt(128 KiB / 192 KiB))``, equals that definition on the A100 and
#: gives a larger L1 its full capacity.
REFERENCE_L1_BYTES = 192 * 1024
REFERENCE_L1_SCALE_BYTES = 128 * 1024


@dataclass(frozen=True)
class OverlapParams:
    """The overlap model's constants for one device (see the module constants for sources).

    Attributes:
        overlap_exponent: p of the smooth maximum of the first-level and DRAM times.
        miss_requests_per_cycle: L1 -> L2 line requests per cycle and SM.
        l2_layer_bytes: the L2 capacity for the layer conditions and DRAM capacity misses
            (bytes); ``None``: the L2's ``effective_bytes``.
        drain_cycles: cycles of one wave of blocks that no other block overlaps: the memory
            latency of its last loads (the pointer-chase DRAM latency at the device's clock,
            :func:`_drain_cycles`).
        partial_sector_load_cost, partial_sector_store_cost: DRAM sector transfers of a sector a
            block row loads or stores only in part (NVIDIA; 1 and 1 turn the mechanism off).
        block_dispatch_s: seconds the block scheduler takes per block and SM.
        launch_overhead_s: seconds per launch before the first block runs (0: none known).
        fitted: the constants fitted on measurements of the 25-point stencil on the H200
            (``fits/data/H200/``): the defaults of this module, and what the device file's
            ``[overlap]`` table gives (its comments say on what).
    """

    overlap_exponent: float
    miss_requests_per_cycle: float
    l2_layer_bytes: float | None
    drain_cycles: float
    partial_sector_load_cost: float = 1.0
    partial_sector_store_cost: float = 1.0
    block_dispatch_s: float = 0.0
    launch_overhead_s: float = 0.0
    fitted: tuple[str, ...] = ()


def _drain_cycles(device: "Device", table: Mapping) -> float:
    """The DRAM latency of ``device`` in SM cycles (pointer chase, idle; L1 + L2 + DRAM part), from
    the first that has it:

    1. the interval model's memory latencies (:func:`warpspeed.interval.params.memory_latencies`:
       the ``[interval]`` table's cycles, the device's own pointer-chase latencies or those of the
       part its ``latencies_from`` names);
    2. the pointer-chase latencies of the part the ``[overlap]`` table's ``latencies_from`` names
       (same architecture family), at this device's clock;
    3. the architecture's latency table (``warpspeed/hardware/latencies/``)."""
    from warpspeed.hardware.device import load_device
    from warpspeed.interval.params import IntervalParameterError, memory_latencies
    from warpspeed.pipeline.latency import LatencyError, level_latencies, load_latencies

    try:
        return float(sum(memory_latencies(device)))
    except IntervalParameterError:
        pass
    donor = table.get("latencies_from")
    if donor is not None:
        if not isinstance(donor, str):
            raise DeviceError(f"device {device.name!r} [{TABLE}]: latencies_from must be a device name")
        source = load_device(donor)
        if source.dram_latency_ns is None:
            raise DeviceError(f"device {device.name!r} [{TABLE}]: latencies_from names {donor!r}, "
                              "which has no pointer-chase DRAM latency (dram_latency_ns)")
        return source.dram_latency_ns * NANO * device.clock_ghz * GIGA
    try:
        return float(sum(level_latencies(load_latencies(device.architecture), device)))
    except LatencyError as exc:
        raise DeviceError(f"the overlap model needs the memory latency of {device.name!r}: {exc}; give "
                          f"[{TABLE}] latencies_from = \"<a measured part of the same family>\"") from None


def _launch_cost(device: "Device") -> tuple[float, float]:
    """(block dispatch seconds per block and SM, launch overhead seconds) from the stored launch fit
    (``fits/kernel-launch.toml``: gpu-benches gpu-small-kernels of several parts; the dispatch time
    is one value for every part). The overhead is that of the measured part the device's
    ``[interval] launch_overhead_part`` names, else 0 (no launch cost known)."""
    from warpspeed.interval.params import launch_constants

    constants = launch_constants()
    part = (device.tables.get("interval") or {}).get("launch_overhead_part")
    return constants.block_dispatch_s, constants.overhead_s.get(part, 0.0) if isinstance(part, str) else 0.0


#: The keys an ``[overlap]`` table may give.
KEYS = ("overlap_exponent", "miss_requests_per_cycle", "l2_layer_bytes", "drain_cycles", "latencies_from",
        "partial_sector_load_cost", "partial_sector_store_cost")


def overlap_params(device: "Device") -> OverlapParams:
    """The overlap model's constants of ``device``: its ``[overlap]`` table (:data:`KEYS`) over
    the defaults; a one-line :class:`DeviceError` for an unknown key or a value that is not a
    positive number."""
    table = device.tables.get(TABLE) or {}
    where = f"device {device.name!r} [{TABLE}]"
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise DeviceError(f"{where}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(KEYS)}")

    def number(key: str) -> float | None:
        return table_number(table, key, where, DeviceError, positive=True) if key in table else None

    defaults = [("overlap exponent", "overlap_exponent")]
    defaults += [("miss-stage request rate", "miss_requests_per_cycle")] if device.vendor == "nvidia" else []
    fitted = [name for name, key in defaults if key not in table]
    fitted += ["L2 capacity of the layer conditions"] if "l2_layer_bytes" in table else []
    drain = number("drain_cycles")
    nvidia = device.vendor == "nvidia"
    dispatch, overhead = _launch_cost(device)
    return OverlapParams(
        overlap_exponent=number("overlap_exponent") or OVERLAP_EXPONENT,
        miss_requests_per_cycle=number("miss_requests_per_cycle") or MISS_REQUESTS_PER_CYCLE,
        l2_layer_bytes=number("l2_layer_bytes"),
        drain_cycles=drain if drain is not None else _drain_cycles(device, table),
        partial_sector_load_cost=number("partial_sector_load_cost") or (PARTIAL_SECTOR_LOAD_COST if nvidia else 1.0),
        partial_sector_store_cost=number("partial_sector_store_cost") or (PARTIAL_SECTOR_STORE_COST if nvidia else 1.0),
        block_dispatch_s=dispatch if nvidia else 0.0,
        launch_overhead_s=overhead,
        fitted=tuple(fitted),
    )
