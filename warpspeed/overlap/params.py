"""Constants of the overlap model, with what each was taken or fitted from.

A device file may override any of them in an ``[overlap]`` table (its keys and their ranges:
``device_table.toml`` beside this module); every other NVIDIA device takes the defaults below.
Documented constants come from vendor documentation or published microbenchmarks; fitted ones say what they were fitted on: six kernels timed on an NVIDIA H200
(``fits/data/H200/``: the 25-point star stencil in double and float, the 7-point star, the 2D
5-point star, the 27-point box and a 19-array shifted copy), with each kernel's error when it is
left out of the fit reported by ``warpspeed validate`` (:mod:`warpspeed.validation.kernel_transfer`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

from warpspeed.measured.launch_cost import launch_cost

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device

#: The device-file table of the model's constants.
TABLE = "overlap"

#: Exponent p of the smooth maximum that combines the first level's time and the DRAM time,
#: ``(t_L1^p + t_DRAM^p)^(1/p)``. p -> infinity is the roofline's perfect overlap; p = 1 is no
#: overlap at all (the non-overlapping transfers of the ECM model). Fitted together with
#: :data:`MISS_REQUESTS_PER_CYCLE` on six H200 kernels (474 timed configurations, module docstring):
#: the least mean of the kernels' MAPEs on the grid of :mod:`warpspeed.calibration.overlap_fit`.
#: With each kernel left out of the fit the exponent is 3.0-4.0 and the left-out kernel's MAPE
#: changes by at most 4.7 points (box3d-r1).
OVERLAP_EXPONENT = 3.0

#: L1 -> L2 line requests the L1TEX miss stage sends per cycle and SM. Fitted with
#: :data:`OVERLAP_EXPONENT` on the same six kernels (with each left out: 0.7-0.8); the blocks one
#: thread wide in x, whose every lane misses in a line of its own, bind it. The fitted rate also
#: absorbs the error of the L1 capacity-miss curve on such blocks (a block-level LRU simulation of
#: the L1 counts up to twice as many misses there). The request path is documented (Nsight Compute
#: Kernel Profiling Guide, L1TEX miss stage; metric ``l1tex__m_l1tex2xbar_req``), its rate is not.
MISS_REQUESTS_PER_CYCLE = 0.7

#: Exponent r of the smooth maximum that combines the memory time (the smooth maximum of the
#: first level and DRAM) with the SM's in-core time (:mod:`warpspeed.incore`),
#: ``(t_memory^r + t_SM^r)^(1/r)``: the SM's pipes and the memory side overlap imperfectly where
#: their times are close. Fitted by :mod:`warpspeed.calibration.core_overlap_fit` on gpu-benches'
#: gpu-roofline runs of three parts (A100-SXM4-40GB, A40, L40: 179 loop lengths, each at the run's
#: measured SM clock, so the A40's and L40's power cap does not enter): the least mean of the three
#: parts' MAPEs, at the top of the grid (2-10): with the in-core time's load wait the data are
#: close to the plain maximum. With each part left out the exponent is 9.25-10 (A100 0.9 %, A40
#: 2.1 %, L40 2.5 % left out; ``docs/incore.md``).
CORE_OVERLAP_EXPONENT = 10.0

#: DRAM sector transfers of a sector that a block row covers only in part (:mod:`warpspeed.memory.sectors`):
#: a load reads it for this block alone (1), a store reads, merges and writes it back for this
#: block (2: HBM with ECC writes whole sectors, so a partial write is a read-modify-write). Not fitted:
#: the mechanism's counts; checked against 95 multi-array copies timed on an H200 (the bandwidth by
#: block width within 6.8 % on average; ``fits/data/H200/mech-segments.csv``,
#: :func:`warpspeed.validation.kernel_transfer.segments_check`) and against the DRAM counters of four
#: profiled copies (``fits/data/H200/copy19-pull.ncu.csv``).
PARTIAL_SECTOR_LOAD_COST = 1.0
PARTIAL_SECTOR_STORE_COST = 2.0

@dataclass(frozen=True)
class OverlapParams:
    """The overlap model's constants for one device (see the module constants for sources).

    Attributes:
        overlap_exponent: p of the smooth maximum of the first-level and DRAM times.
        core_exponent: r of the smooth maximum of that memory time and the in-core time.
        miss_requests_per_cycle: L1 -> L2 line requests per cycle and SM.
        drain_cycles: cycles of one wave of blocks that no other block overlaps: the memory
            latency of its last loads (the device's DRAM load-to-use latency,
            :attr:`warpspeed.hardware.device.Device.latencies`).
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
    drain_cycles: float
    partial_sector_load_cost: float = 1.0
    partial_sector_store_cost: float = 1.0
    block_dispatch_s: float = 0.0
    launch_overhead_s: float = 0.0
    fitted: tuple[str, ...] = ()
    core_exponent: float = CORE_OVERLAP_EXPONENT


def overlap_params(device: "Device") -> OverlapParams:
    """The overlap model's constants of ``device``: its ``[overlap]`` table over the defaults (the
    table's keys and ranges are declared in ``device_table.toml`` of this package and checked when
    the device is loaded, :mod:`warpspeed.hardware.model_tables`)."""
    table = device.tables.get(TABLE) or {}

    def number(key: str) -> float | None:
        return float(table[key]) if key in table else None

    defaults = [("overlap exponent", "overlap_exponent")]
    defaults += [("miss-stage request rate", "miss_requests_per_cycle")] if device.vendor == "nvidia" else []
    fitted = [name for name, key in defaults if key not in table]
    nvidia = device.vendor == "nvidia"
    launch = launch_cost(device)
    return OverlapParams(
        overlap_exponent=number("overlap_exponent") or OVERLAP_EXPONENT,
        miss_requests_per_cycle=number("miss_requests_per_cycle") or MISS_REQUESTS_PER_CYCLE,
        drain_cycles=device.latencies.dram_total,
        partial_sector_load_cost=number("partial_sector_load_cost") or (PARTIAL_SECTOR_LOAD_COST if nvidia else 1.0),
        partial_sector_store_cost=number("partial_sector_store_cost") or (PARTIAL_SECTOR_STORE_COST if nvidia else 1.0),
        block_dispatch_s=launch.block_dispatch_s if nvidia else 0.0,
        launch_overhead_s=launch.overhead_s if nvidia else 0.0,
        fitted=tuple(fitted),
        core_exponent=number("core_exponent") or CORE_OVERLAP_EXPONENT,
    )
