"""L1 load/store throughput: data-pipe and tag-stage wavefronts of every warp instruction.

Two pipelined stages of the L1 unit process each warp-level load or store instruction, one
wavefront per cycle each; the slower stage sets the instruction's cost:

* **Data pipe** (bank conflicts; Ernst, Holzer, Hager, Knorr, Wellein: "Analytical Performance
  Estimation during Code Generation on Modern GPUs", Journal of Parallel and Distributed
  Computing, 2023, section 4.2). The data array has ``banks`` banks of ``bank_bytes``
  (NVIDIA since compute capability 5.x: 32 banks of 4 B, CUDA C++ Programming Guide, "Shared
  Memory"). One instruction is served per *lane group* of
  ``min(warp_size, banks * bank_bytes // element_bytes)`` lanes (a full warp for 4-byte
  elements, half warps for 8-byte ones); a group needs as many wavefronts as its busiest bank
  has distinct words. Distance does not matter: rows 32 KiB apart whose words fall into
  different banks share a wavefront.
* **Tag stage.** It looks up the ``line_bytes`` (128 B) lines of the instruction; an
  instruction whose valid lanes touch ``L`` distinct lines costs
  ``max(1, TAG_OVERHEAD_WAVEFRONTS + TAG_WAVEFRONTS_PER_LINE * L)`` wavefronts (about one
  wavefront per 3.6 lines), and on NVIDIA families whose load/store units compute fewer tags per
  cycle than a warp has threads at least ``ceil(active lanes / lanes_per_cycle)``.

Cycles of an instruction = ``max(data-pipe wavefronts, tag-stage wavefronts)``.

Source of the rule: the gpu-strides microbenchmark of gpu-benches (Dominik Ernst,
https://github.com/te42kyfo/gpu-benches, ``gpu-strides/a100.txt``; stored as
``fits/data/public/gpu-strides/a100.csv``) measures, per warp load on an A100, the cycles and the
counters ``l1tex__data_pipe_lsu_wavefronts`` and
``l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld`` for strided accesses (strides 0-64,
float and double) and 2-D blocks 1-64 threads wide. The bank rule above reproduces the
data-pipe counter exactly on all 144 rows; the tag counter grows linearly with the distinct
lines (1 wavefront up to 2 lines, 8-13 for 32 lines); the cycles equal the larger of the two
counters within 3 % on every row. The two tag constants are the least-MAPE fit of the cycles
over those rows: MAPE 5.4 %, worst row -26 % (double, stride 53: 9.42 predicted, 12.8
measured); the former rule (16 banks of 8 B, addresses more than 1024 B apart never share a
wavefront, no tag stage) was 28 % off, worst +248 % (1-wide float columns: 32 against 9.2). The
spread of the tag counter among instructions that touch 32 lines (8 to 13.5 wavefronts,
depending on the stride) is not modelled.

NVIDIA families (the ``family`` of the first level's ``[[memory]]`` table,
:data:`~warpspeed.memory.l1_stages.NVIDIA_L1_FAMILIES`; without the entry an NVIDIA device
is ``ampere-ga100``). What is documented, what is fitted:

* data pipe, all families: 32 banks of 4 B (documented: CUDA C++ Programming Guide, "Shared
  Memory", compute capability 5.x and later), reproduced exactly by the A100 counter;
* tag-stage constants, all families: fitted on the A100 (GA100) only. They are kept for
  Volta, Hopper and the GA102/AD102 parts because NVIDIA describes one L1TEX design from Volta on:
  the Nsight Compute Kernel Profiling Guide gives the same L1TEX stages (tag stage ``t``, data
  stage ``d``), 128 B lines and 32 B sectors from Volta to Hopper, and an NVIDIA engineer states
  that "on GV100+ the L1TEX tag stage can resolve 4 sets x 4 sectors per cycle" (NVIDIA Developer
  Forums, "How does the LSU (Load/Store Unit) execute Load/Store instructions in the Ampere
  architecture?", 2023): at best 4 lines per cycle, close to the fit's 3.6;
* threads per cycle into the tag stage (documented): one per LD/ST unit, 8 per SM partition on
  GV100, GA100 and GH100 (SM diagrams of NVIDIA's Tesla V100, A100 and H100 architecture
  whitepapers) = 32, a full warp (no limit); 4 per partition on GA102 and AD102 (SM diagram of
  the NVIDIA Ampere GA102 GPU Architecture whitepaper, 2020; "four Load/Store units" per
  partition, NVIDIA Ada GPU Architecture whitepaper, 2022) = 16, so a full warp instruction
  costs at least 2 cycles. Measured: gpu-cache (gpu-benches, 4-byte loads, one block of 256
  threads per SM) sustains 64.0 B per cycle and SM on the A40 and the L40
  (``fits/data/public/gpu-cache/``), against 125 B on the A100 (gpu-strides, float, stride 1);
  with 16-byte loads an RTX 4090 (AD102) reaches 121 B per cycle and SM (Luo, Fan, Li, Du, Wang,
  Chu: "Benchmarking and Dissecting the Nvidia Hopper GPU Architecture", IEEE IPDPS 2024,
  Table V), so the data pipe keeps its 128 B per cycle and only the thread rate halves (the
  GA102 whitepaper states 128 bytes per clock and SM). No gpu-strides measurement of a GA102 or
  AD102 part was used: the A40 rows of gpu-benches are held out for validation.

AMD devices take their first level's pipeline from the first level's ``[[memory]]`` table of their
file.
RDNA's L0 (``gpu-strides/rdna2.txt``, an RX 6900 XT; ``fits/data/public/gpu-strides/rdna2.csv``)
follows the same two stages: 32 banks of 4 B, 128 B per cycle for 32-bit lanes but 64 B per
cycle for 64-bit ones (``wide_bytes_per_cycle``: contiguous doubles take 4.33 cycles per 256 B),
and a tag stage of 0.28 wavefronts per distinct 128 B line with no overhead (least-MAPE fit to the
144 rows, MAPE 9.0 %; the same per-line cost as the A100's). Its worst rows are 2-D blocks whose
rows lie 16 KiB apart, in one L0 set: they miss, which this cost does not model.

CDNA's vector L1 (``family = "cdna-vl1d-banked"`` in the MI100, MI210 and MI300X files) is costed as
a banked memory by :class:`~warpspeed.memory.l1_stages.BankedVectorL1`: per quarter-wave of 16 lanes,
runs of at least 4 lanes reading consecutive elements stream at 64 B per clock; the other lanes pass 4
per clock and serialise on 4 B dword banks within 16 B columns (a bank reading another dword, a column
reading another line) and on 0.44 clocks per distinct 16 B chunk; wide (8-byte) lanes pass 4 per
clock, in 8-byte banks and, on the MI210, 4 tag banks by line (``tag_banks``). Where the block's
load lines exceed the level's ``bytes``, each instruction costs at least the level's refill floor
(:meth:`~warpspeed.memory.first_level.FirstLevel.refill_cycles_per_line` per distinct line,
:func:`with_refill`; MI210 ``capacity_miss_fraction``). The widths are read off, and the
0.44 fitted to, the MI210's gpu-strides float rows (``fits/data/public/gpu-strides/mi210-float.csv``;
MAPE 3.5 %, in-sample); the file's double rows are held out. The documented-rates stages
(:class:`~warpspeed.memory.l1_stages.VectorL1Stages`, ``family = "cdna-vl1d"``) remain for device
files that select them. ``docs/amd.md`` derives both.
``l1_cycles_per_lup`` therefore means the first-level cache's cycles on every vendor. Stores pass the same stages as loads (an assumption: the
measurements cover loads only).

Wavefronts are summed over all warps of the representative block and over every instruction
(one per access and fold copy; a copy's load merged into an identical earlier load is no
instruction, see :func:`~warpspeed.memory.addresses.instruction_lanes`), then divided by the
block's lattice updates: L1 cycles per lup.

The rules live in :mod:`warpspeed.memory.l1_stages` (the stages, with their constants) and
:mod:`warpspeed.memory.first_level` (which rules each vendor's first level follows: one strategy
class per kind of first level); this module sums them over a block.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from warpspeed.hardware.device import Device
from warpspeed.memory.addresses import BlockCells, CompiledKernel, block_addresses, instruction_lanes
from warpspeed.memory.first_level import FirstLevel, first_level
from warpspeed.memory.footprint import block_footprint
from warpspeed.memory.l1_stages import distinct_lines, pad_last
from warpspeed.memory.warps import WarpRows


@dataclass(frozen=True)
class L1Cycles:
    """L1 cycles per lattice update, per field and total.

    Attributes:
        cycles_per_lup: total L1 cycles per lup (per instruction the larger of the data-pipe
            and tag-stage wavefronts, summed).
        per_field: field name -> cycles per lup.
        load_cycles_per_lup / store_cycles_per_lup: the split by instruction kind.
        data_pipe_wavefronts_per_lup: data-pipe wavefronts per lup (the counter
            ``l1tex__data_pipe_lsu_wavefronts``).
        tag_wavefronts_per_lup: tag-stage wavefronts per lup (0 where the stage is not modelled).
    """

    cycles_per_lup: float
    per_field: dict[str, float]
    load_cycles_per_lup: float
    store_cycles_per_lup: float
    data_pipe_wavefronts_per_lup: float = 0.0
    tag_wavefronts_per_lup: float = 0.0


def l1_cycles(compiled: CompiledKernel, cells: BlockCells, device: Device,
              addresses: np.ndarray | None = None, lanes: np.ndarray | None = None,
              warps: WarpRows | None = None, load_bytes: float | None = None) -> L1Cycles:
    """L1 cycles per lup of the block ``cells`` (see the module docstring).

    ``addresses`` may pass precomputed :func:`~warpspeed.memory.addresses.block_addresses`,
    ``lanes`` :func:`~warpspeed.memory.addresses.instruction_lanes` and ``warps`` the block's
    instructions grouped by :func:`warpspeed.memory.warps.warp_rows` (then only one instruction of
    each group is costed, :func:`representative_costs`; the result is the same) and ``load_bytes``
    the block's load allocation where the caller has it (:func:`refill_load_bytes`). Accesses with
    the same element size are counted in one vectorized batch.
    """
    first = first_level(device)
    if warps is not None:
        bank, tag = representative_costs(first, warps, refill_load_bytes(compiled, cells, device, warps, load_bytes))
        return hit_cycles(compiled, warps, cells.lups, bank, tag)
    addr = block_addresses(compiled, cells) if addresses is None else addresses
    lanes = instruction_lanes(compiled, cells) if lanes is None else lanes
    refill = 0.0
    if first.refill_cycles_per_line(math.inf) > 0:
        footprint = block_footprint(compiled, cells, device, addresses=addr, lanes=lanes)
        refill = first.refill_cycles_per_line(footprint.l1_alloc_bytes_per_block)
    line, warp = device.l1.line_bytes, device.warp_size
    per_access = np.zeros(len(compiled.accesses))
    data_total = tag_total = 0.0
    for elem in sorted({a.field.element_bytes for a in compiled.accesses}):
        idx = [i for i, a in enumerate(compiled.accesses) if a.field.element_bytes == elem]
        flat = addr[idx].reshape(-1, addr.shape[-1])  # (accesses * folds, threads)
        on = lanes[idx].reshape(flat.shape)
        data, tag = first.instruction_costs(flat, on, elem)
        if refill:
            a, v = pad_last(flat, warp).reshape(-1, warp), pad_last(on, warp).reshape(-1, warp)
            ends = np.concatenate([a // line, (a + elem - 1) // line], axis=1)
            lines = distinct_lines(ends, np.concatenate([v, v], axis=1)).reshape(data.shape)
            data = with_refill(data, lines, refill)
        per_access[idx] = np.maximum(data, tag).reshape(len(idx), -1).sum(axis=1) / cells.lups
        data_total += float(data.sum()) / cells.lups
        tag_total += float(tag.sum()) / cells.lups
    return _summed(compiled, per_access, data_total, tag_total)


def refill_load_bytes(compiled: CompiledKernel, cells: BlockCells, device: Device, warps: WarpRows,
                      load_bytes: float | None) -> float:
    """The block's load allocation [bytes] the first level's refill floor is judged by:
    ``load_bytes`` where the caller has it (the footprint's ``l1_alloc_bytes_per_block``), else
    counted from ``warps`` (:func:`~warpspeed.memory.footprint.block_footprint`) where the level
    has a floor at all, else 0."""
    if load_bytes is not None:
        return float(load_bytes)
    if first_level(device).refill_cycles_per_line(math.inf) > 0:
        return float(block_footprint(compiled, cells, device, warps=warps).l1_alloc_bytes_per_block)
    return 0.0


def representative_costs(first: FirstLevel, warps: WarpRows, load_bytes: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Data-pipe and tag-stage wavefronts of every representative warp instruction of ``warps``
    (two float arrays over its rows), each costed once by the first level's rule, with the level's
    refill floor for a block whose loads allocate ``load_bytes`` (:func:`refill_load_bytes`; 0: no
    floor); the instructions that miss (:mod:`warpspeed.memory.l1_misses`) start from the same
    numbers. Kept with the representatives per device and floor
    (:meth:`~warpspeed.memory.warps.WarpRows.derived_value`): read-only."""
    refill = first.refill_cycles_per_line(load_bytes) if load_bytes > 0 else 0.0
    return warps.derived_value(("first-level costs", first.device, refill),
                               lambda: _representative_costs(first, warps, refill))


def _representative_costs(first: FirstLevel, warps: WarpRows, refill: float) -> tuple[np.ndarray, np.ndarray]:
    bank = np.zeros(warps.addresses.shape[0])
    tag = np.zeros(warps.addresses.shape[0])
    for elem in sorted(set(warps.element_bytes.tolist())):
        rows = np.flatnonzero(warps.element_bytes == elem)
        data_r, tag_r = first.instruction_costs(warps.addresses[rows], warps.lanes[rows], int(elem))
        bank[rows], tag[rows] = data_r[:, 0], tag_r[:, 0]
    if refill:
        bank = with_refill(bank, warps.distinct_granules(first.level.line_bytes).astype(float), refill)
    return bank, tag


def with_refill(cost: np.ndarray, lines: np.ndarray, refill_cycles_per_line: float) -> np.ndarray:
    """Instruction costs with the first level's refill floor: at least ``refill_cycles_per_line``
    per distinct line of the instruction (:meth:`~warpspeed.memory.first_level.FirstLevel.refill_cycles_per_line`)."""
    return np.maximum(cost, refill_cycles_per_line * lines)


def hit_cycles(compiled: CompiledKernel, warps: WarpRows, lups: int, bank: np.ndarray, tag: np.ndarray) -> L1Cycles:
    """The block's L1 cycles per lup when every access hits, from the costs of its representative
    instructions (:func:`representative_costs`); ``lups``: the block's lattice updates."""
    n_acc = len(compiled.accesses)
    data, tags = warps.gather(bank, range(n_acc)), warps.gather(tag, range(n_acc))
    per_access = np.maximum(data, tags).reshape(n_acc, -1).sum(axis=1) / lups
    return _summed(compiled, per_access, float(data.sum()) / lups, float(tags.sum()) / lups)


def _summed(compiled: CompiledKernel, per_access: np.ndarray, data_total: float, tag_total: float) -> L1Cycles:
    """:class:`L1Cycles` from the cycles per lup of every access and the two stages' totals."""
    per_field = {name: 0.0 for name in compiled.field_names}
    loads = stores = 0.0
    for i, acc in enumerate(compiled.accesses):
        per_field[acc.field.name] += float(per_access[i])
        if acc.access.is_store:
            stores += float(per_access[i])
        else:
            loads += float(per_access[i])
    return L1Cycles(cycles_per_lup=loads + stores, per_field=per_field,
                    load_cycles_per_lup=loads, store_cycles_per_lup=stores,
                    data_pipe_wavefronts_per_lup=data_total, tag_wavefronts_per_lup=tag_total)
