"""L1 load/store throughput: data-pipe and tag-stage wavefronts of every warp instruction.

Two pipelined stages of the L1 unit process each warp-level load or store instruction, one
wavefront per cycle each; the slower stage sets the instruction's cost:

* **Data pipe** (bank conflicts; Ernst, Holzer, Hager, Knorr, Wellein: "Analytical Performance
  Estimation during Code Generation on Modern GPUs", Journal of Parallel and Distributed
  Computing, 2023, section 4.2). The data array has ``l1_banks`` banks of ``l1_bank_bytes``
  (NVIDIA since compute capability 5.x: 32 banks of 4 B, CUDA C++ Programming Guide, "Shared
  Memory"). One instruction is served per *lane group* of
  ``min(warp_size, banks * bank_bytes // element_bytes)`` lanes (a full warp for 4-byte
  elements, half warps for 8-byte ones); a group needs as many wavefronts as its busiest bank
  has distinct words. Distance does not matter: rows 32 KiB apart whose words fall into
  different banks share a wavefront.
* **Tag stage.** It looks up the ``l1_line_bytes`` (128 B) lines of the instruction; an
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

NVIDIA families (``[l1_pipeline] family`` of the device file, :data:`NVIDIA_L1_FAMILIES`; without
the entry an NVIDIA device is ``ampere-ga100``). What is documented, what is fitted:

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

AMD devices take their first level's pipeline from the ``[l1_pipeline]`` table of their file.
RDNA's L0 (``gpu-strides/rdna2.txt``, an RX 6900 XT; ``fits/data/public/gpu-strides/rdna2.csv``)
follows the same two stages: 32 banks of 4 B, 128 B per cycle for 32-bit lanes but 64 B per
cycle for 64-bit ones (``wide_bytes_per_cycle``: contiguous doubles take 4.33 cycles per 256 B),
and a tag stage of 0.28 wavefronts per distinct 128 B line with no overhead (least-MAPE fit to the
144 rows, MAPE 9.0 %; the same per-line cost as the A100's). Its worst rows are 2-D blocks whose
rows lie 16 KiB apart, in one L0 set: they miss, which this cost does not model.

CDNA's vector L1 (``family = "cdna-vl1d"`` in the MI100, MI210 and MI300X files) is costed by
:class:`VectorL1Stages` from documented rates, with no fitted constant: per wave64 instruction the
largest of the address unit's clocks (16 lanes per clock for 32-bit elements, 4 for wider ones),
one tag lookup per distinct cache line of each clock group of lanes, and the data path's bytes per
clock (see the constants below and ``docs/amd.md``). The held-out MI210 gpu-strides rows were not
used.
``l1_cycles_per_lup`` therefore means the first-level cache's cycles on every vendor. Stores pass the same stages as loads (an assumption: the
measurements cover loads only).

Wavefronts are summed over all warps of the representative block and over every instruction
(one per access and fold copy; a copy's load merged into an identical earlier load is no
instruction, see :func:`~warpspeed.memory.addresses.instruction_lanes`), then divided by the
block's lattice updates: L1 cycles per lup.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from warpspeed.errors import DeviceError
from warpspeed.files.toml import table_number
from warpspeed.hardware.device import Device
from warpspeed.memory.addresses import BlockCells, CompiledKernel, block_addresses, instruction_lanes
from warpspeed.memory.warps import WarpRows

_SENTINEL = np.iinfo(np.int64).max

#: Tag-stage wavefronts of an instruction touching L lines: max(1, overhead + per_line * L).
#: Least-MAPE fit of the cycles of the 144 A100 gpu-strides rows (see the module docstring).
TAG_OVERHEAD_WAVEFRONTS = 0.46
TAG_WAVEFRONTS_PER_LINE = 0.28

#: Threads per cycle whose tags the load/store pipeline computes, one per load/store unit of the
#: SM: 8 LD/ST units in each of the 4 SM partitions of GV100, GA100 and GH100 (SM diagrams of the
#: NVIDIA Tesla V100, A100 Tensor Core and H100 Tensor Core GPU Architecture whitepapers) ...
LSU_LANES_PER_CYCLE_DATACENTER = 32
#: ... and 4 in each partition of GA102 and AD102 (SM diagram of the NVIDIA Ampere GA102 GPU
#: Architecture whitepaper, 2020; "four Load/Store units" per partition, NVIDIA Ada GPU
#: Architecture whitepaper, 2022). Measured: gpu-cache (gpu-benches, 4-byte loads) sustains
#: 64.0 B per cycle and SM on the A40 and the L40, against 125 B on the A100 (gpu-strides, float,
#: stride 1: 1.02 cycles per 128 B warp load) -- see the module docstring.
LSU_LANES_PER_CYCLE_CONSUMER = 16


@dataclass(frozen=True)
class TagStage:
    """Tag-stage cost of one warp instruction: ``max(1, overhead + per_line * lines)`` wavefronts,
    and at least ``ceil(active lanes / lanes_per_cycle)`` where the load/store pipeline feeds the
    tag stage fewer threads per cycle than a warp has (``None``: no such limit)."""

    overhead_wavefronts: float
    wavefronts_per_line: float
    lanes_per_cycle: int | None = None

    def wavefronts(self, lines: np.ndarray, lanes: np.ndarray | None = None) -> np.ndarray:
        """Wavefronts for arrays of distinct-line counts (0 lines: no instruction, 0 wavefronts)
        and, where ``lanes_per_cycle`` is set, the matching active-lane counts."""
        cost = np.maximum(1.0, self.overhead_wavefronts + self.wavefronts_per_line * lines)
        if self.lanes_per_cycle is not None and lanes is not None:
            cost = np.maximum(cost, np.ceil(lanes / self.lanes_per_cycle))
        return np.where(lines > 0, cost, 0.0)


#: The tag stage of NVIDIA's L1TEX unit as fitted on the A100 (GA100).
NVIDIA_TAG_STAGE = TagStage(TAG_OVERHEAD_WAVEFRONTS, TAG_WAVEFRONTS_PER_LINE, LSU_LANES_PER_CYCLE_DATACENTER)

#: NVIDIA first-level families (the ``family`` of a device file's ``[l1_pipeline]`` table) and
#: their tag stage. The tag constants are the A100 fit in every family: NVIDIA describes one
#: L1TEX tag stage "on GV100+" (4 sets x 4 sectors per cycle; module docstring); the families
#: differ in the load/store units that feed it.
NVIDIA_L1_FAMILIES: dict[str, TagStage] = {
    "volta-gv100": NVIDIA_TAG_STAGE,
    "ampere-ga100": NVIDIA_TAG_STAGE,
    "hopper-gh100": NVIDIA_TAG_STAGE,
    "ampere-ga102": TagStage(TAG_OVERHEAD_WAVEFRONTS, TAG_WAVEFRONTS_PER_LINE, LSU_LANES_PER_CYCLE_CONSUMER),
    "ada-ad102": TagStage(TAG_OVERHEAD_WAVEFRONTS, TAG_WAVEFRONTS_PER_LINE, LSU_LANES_PER_CYCLE_CONSUMER),
}
#: The family of an NVIDIA device file without a ``family`` entry: the calibrated A100's.
DEFAULT_NVIDIA_FAMILY = "ampere-ga100"


#: The device-file table with an AMD first level's calibrated pipeline and an NVIDIA device's
#: first-level ``family`` (:func:`tag_stage_for`, :func:`data_bytes_per_cycle`).
PIPELINE_TABLE = "l1_pipeline"
FAMILY_KEY = "family"


def _pipeline_number(device: Device, key: str) -> float | None:
    table = device.tables.get(PIPELINE_TABLE, {})
    if key not in table:
        return None
    return table_number(table, key, f"device {device.name!r} [{PIPELINE_TABLE}]", DeviceError, positive=True)


def _named_family(device: Device, allowed: Collection[str], default: str | None) -> str | None:
    """The first-level family the device file names (``[l1_pipeline] family``), else ``default``;
    :class:`DeviceError` for a named family not in ``allowed``."""
    table = device.tables.get(PIPELINE_TABLE, {})
    family = table.get(FAMILY_KEY, default) if isinstance(table, dict) else None
    if family is None and default is None:
        return None
    if not isinstance(family, str) or family not in allowed:
        raise DeviceError(f"device {device.name!r} [{PIPELINE_TABLE}]: {FAMILY_KEY} {family!r} unknown; "
                          f"allowed: {', '.join(allowed)}")
    return family


def nvidia_family(device: Device) -> str:
    """The NVIDIA first-level family the device file names (``[l1_pipeline] family``), else
    :data:`DEFAULT_NVIDIA_FAMILY`; :class:`DeviceError` for a family not in
    :data:`NVIDIA_L1_FAMILIES`."""
    return _named_family(device, NVIDIA_L1_FAMILIES, DEFAULT_NVIDIA_FAMILY)


def tag_stage_for(device: Device) -> TagStage | None:
    """The device's tag stage: NVIDIA's L1TEX constants of its family (:func:`nvidia_family`),
    the ``[l1_pipeline]`` table's ``tag_overhead_wavefronts`` and ``tag_wavefronts_per_line``
    where an AMD device file has them (fitted to that GPU's gpu-strides rows), else ``None``
    (not modelled)."""
    if device.vendor == "nvidia":
        return NVIDIA_L1_FAMILIES[nvidia_family(device)]
    per_line = _pipeline_number(device, "tag_wavefronts_per_line")
    if per_line is None:
        return None
    table = device.tables[PIPELINE_TABLE]
    overhead = table_number(table, "tag_overhead_wavefronts", f"device {device.name!r} [{PIPELINE_TABLE}]", DeviceError)
    return TagStage(overhead, per_line)


#: The ``family`` of a CDNA device file's ``[l1_pipeline]`` table: the vector L1 data cache (vL1D,
#: "texture cache per pipe") of GCN and CDNA, costed by :class:`VectorL1Stages`.
CDNA_FAMILY = "cdna-vl1d"
#: AMD first-level families; an AMD device file without a ``family`` entry keeps the two-stage
#: cost of the module docstring (RDNA's L0, with or without a calibrated tag stage).
AMD_L1_FAMILIES = (CDNA_FAMILY,)

#: Lanes whose addresses the vL1D's address unit (texture addresser, TA) processes per clock for
#: 32-bit (and narrower) loads: a quarter-wave of 16 lanes, a wave64 load in 4 clocks ("32-bit
#: (or smaller) single-channel buffer loads / wave = 4 clocks": AMD GPUOpen, "Understanding
#: Memory Coalescing on GCN", 2016; the TA's 16 32-bit values per clock are the texture path's
#: 2x2 quad of 4-channel texels).
TA_LANES_PER_CYCLE = 16
#: ... and for wider (multi-dword, "multi-channel") loads: 4 lanes per clock, a wave64 in 16
#: clocks ("multi-channel buffer loads / wave = 16 clocks", same source; the TA generates the
#: addresses of one 2x2 quad, 4 invocations, per clock).
TA_WIDE_LANES_PER_CYCLE = 4
#: Largest element (bytes) that the TA processes at :data:`TA_LANES_PER_CYCLE`.
TA_NARROW_ELEMENT_BYTES = 4
#: vL1D tag lookups per clock: one cache line. "All cache accesses in vL1D are for a single cache
#: line's worth of data" (AMD, ROCm Compute Profiler documentation, "Vector L1 cache (vL1D)", note
#: on the L1 cache line size: 64 B before MI300, 128 B on MI300), and the profiler's vL1D
#: bandwidth peak is one line access per clock and CU (analysis configs
#: ``gfx90a/1600_L1_cache.yaml``: cache accesses x 64 B against 64 B per clock and CU;
#: ``gfx942/1600_L1_cache.yaml``: x 128 B against 128 B).
TAG_LOOKUPS_PER_CYCLE = 1


@dataclass(frozen=True)
class VectorL1Stages:
    """The three pipelined stages of a CDNA vector L1 (vL1D) load, per wave64 instruction.

    The lanes of an instruction enter in *clock groups* of ``lanes_per_cycle(element_bytes)``
    consecutive lanes (a quarter-wave for 32-bit elements, 4 lanes for wider ones):

    * address (TA): one clock per group with an active lane;
    * tag: per group, one lookup per distinct ``line_bytes`` line its active lanes touch (an
      element that straddles two lines touches both), :data:`TAG_LOOKUPS_PER_CYCLE` per clock;
      lines are not merged across groups;
    * data (TD): per group, ``ceil(active lanes x element_bytes / data_bytes_per_cycle)`` clocks.

    An instruction costs the largest of the three (the stages overlap across instructions).
    """

    line_bytes: int
    data_bytes_per_cycle: int
    narrow_lanes_per_cycle: int = TA_LANES_PER_CYCLE
    wide_lanes_per_cycle: int = TA_WIDE_LANES_PER_CYCLE
    narrow_element_bytes: int = TA_NARROW_ELEMENT_BYTES
    tag_lookups_per_cycle: int = TAG_LOOKUPS_PER_CYCLE

    def lanes_per_cycle(self, element_bytes: int) -> int:
        """Lanes per clock group for elements of ``element_bytes``."""
        return self.narrow_lanes_per_cycle if element_bytes <= self.narrow_element_bytes else self.wide_lanes_per_cycle

    def cycles(self, addr: np.ndarray, valid: np.ndarray,
               element_bytes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Address, tag and data cycles of each row of ``addr`` (int64 byte addresses
        ``(waves, lanes)``, ``lanes`` a multiple of the clock group) with active lanes ``valid``."""
        rows = addr.shape[0]
        group = self.lanes_per_cycle(element_bytes)
        a = _pad_last(addr, group).reshape(-1, group)
        v = _pad_last(valid, group).reshape(-1, group)
        active = v.sum(axis=1)
        address = (active > 0).reshape(rows, -1).sum(axis=1).astype(float)
        ends = np.stack([a // self.line_bytes, (a + element_bytes - 1) // self.line_bytes], axis=2)
        ends = ends.reshape(a.shape[0], -1)
        lines = distinct_lines(ends, np.repeat(v, 2, axis=1)).reshape(rows, -1).sum(axis=1)
        tag = np.ceil(lines / self.tag_lookups_per_cycle).astype(float)
        data = np.ceil(active * element_bytes / self.data_bytes_per_cycle).reshape(rows, -1).sum(axis=1)
        return address, tag, data.astype(float)


def amd_family(device: Device) -> str | None:
    """The AMD first-level family the device file names (``[l1_pipeline] family``), ``None``
    without one; :class:`DeviceError` for a family not in :data:`AMD_L1_FAMILIES`."""
    return _named_family(device, AMD_L1_FAMILIES, None)


def vector_l1_stages_for(device: Device) -> VectorL1Stages | None:
    """The vL1D stages of an AMD device whose file names ``family = "cdna-vl1d"``: its line
    (``l1_line_bytes``) and data width (``l1_banks x l1_bank_bytes``); else ``None``."""
    if device.vendor == "nvidia" or amd_family(device) != CDNA_FAMILY:
        return None
    return VectorL1Stages(line_bytes=device.l1_line_bytes, data_bytes_per_cycle=device.l1_bytes_per_cycle)


def data_bytes_per_cycle(device: Device, element_bytes: int) -> int:
    """Bytes the data pipe delivers per cycle for elements of ``element_bytes``: the banks' width
    (``l1_banks x l1_bank_bytes``), or for elements wider than a bank the ``[l1_pipeline]``
    table's ``wide_bytes_per_cycle`` where the device file gives it (RDNA: 64-bit loads at half
    the 32-bit rate)."""
    wide = _pipeline_number(device, "wide_bytes_per_cycle") if element_bytes > device.l1_bank_bytes else None
    return int(wide) if wide is not None else device.l1_bytes_per_cycle


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


def _distinct_per_row(values: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows sorted with invalid entries last (as a sentinel), and the mask of first occurrences."""
    w = np.where(valid, values, _SENTINEL)
    w.sort(axis=1)
    distinct = w != _SENTINEL
    distinct[:, 1:] &= w[:, 1:] != w[:, :-1]
    return w, distinct


def group_wavefronts(words: np.ndarray, valid: np.ndarray, device: Device) -> np.ndarray:
    """Data-pipe wavefronts of each lane group.

    Args:
        words: int64 array ``(groups, lanes)`` of bank-word indices (byte address // bank_bytes).
        valid: bool array of the same shape; invalid lanes do not access memory.
        device: gives the number of banks.

    Returns:
        int64 array ``(groups,)``: the largest number of distinct words in one bank, per group;
        0 for a group with no valid lane.
    """
    groups = words.shape[0]
    if groups == 0:
        return np.zeros(0, dtype=np.int64)
    w, distinct = _distinct_per_row(words, valid)
    banks = device.l1_banks
    key = np.arange(groups)[:, None] * banks + np.where(distinct, w % banks, 0)
    counts = np.bincount(key[distinct], minlength=groups * banks)
    return counts.reshape(groups, banks).max(axis=1)


def distinct_lines(lines: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Distinct line indices per row of ``lines`` ``(rows, entries)`` over the valid entries."""
    if lines.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    return _distinct_per_row(lines, valid)[1].sum(axis=1)


def _pad_last(values: np.ndarray, multiple: int) -> np.ndarray:
    """Pad the last axis with zeros (or False) to a multiple of ``multiple``."""
    pad = (-values.shape[-1]) % multiple
    if not pad:
        return values
    return np.pad(values, [(0, 0)] * (values.ndim - 1) + [(0, pad)])


def lane_group_size(device: Device, element_bytes: int) -> int:
    """Lanes of one warp instruction that the data pipe serves together (one *lane group*): as
    many as its bytes per cycle hold, at most a warp (a full warp for 4-byte elements, half
    warps for 8-byte ones on 128 B per cycle)."""
    return max(1, min(device.warp_size, data_bytes_per_cycle(device, element_bytes) // element_bytes))


def lane_group_wavefronts(addr: np.ndarray, lanes: np.ndarray, element_bytes: int, device: Device) -> np.ndarray:
    """Data-pipe wavefronts of every lane group of every warp instruction (the bank rule of the
    module docstring).

    Args:
        addr: int64 byte addresses ``(rows, warp_size)``, one warp instruction per row.
        lanes: bool, same shape: lanes that access memory.

    Returns:
        int64 array ``(rows, groups)``, groups of :func:`lane_group_size` lanes in lane order.
    """
    warp, bank = device.warp_size, device.l1_bank_bytes
    group = lane_group_size(device, element_bytes)
    words_per_elem = max(1, -(-element_bytes // bank))
    words = (addr // bank)[..., None] + np.arange(words_per_elem)
    wvalid = np.repeat(lanes[..., None], words_per_elem, axis=2)
    groups = -(-warp // group)
    words = _pad_last(words.transpose(0, 2, 1), groups * group).transpose(0, 2, 1)
    wvalid = _pad_last(wvalid.transpose(0, 2, 1), groups * group).transpose(0, 2, 1)
    data = group_wavefronts(words.reshape(-1, group * words_per_elem),
                            wvalid.reshape(-1, group * words_per_elem), device)
    return data.reshape(addr.shape[0], groups)


def warp_instruction_costs(addr: np.ndarray, lanes: np.ndarray, element_bytes: int,
                           device: Device) -> tuple[np.ndarray, np.ndarray]:
    """Data-pipe and tag-stage wavefronts of every warp instruction.

    Args:
        addr: int64 byte addresses ``(instructions, threads)`` in linear thread order.
        lanes: bool ``(instructions, threads)``: lanes that access memory.
        element_bytes: bytes each lane accesses.
        device: bank layout, line size, warp size, vendor.

    Returns:
        Two float arrays ``(instructions, warps)``: data-pipe and tag-stage wavefronts (the
        latter zero where the device has no modelled tag stage). On a CDNA vector L1
        (:class:`VectorL1Stages`) the first is the larger of the address and data cycles, the
        second the tag lookups' cycles.
    """
    n, warp = addr.shape[0], device.warp_size
    a = _pad_last(addr, warp).reshape(-1, warp)  # (instructions * warps, warp)
    v = _pad_last(lanes, warp).reshape(-1, warp)
    vl1d = vector_l1_stages_for(device)
    if vl1d is not None:
        address, tag, data = vl1d.cycles(a, v, element_bytes)
        return np.maximum(address, data).reshape(n, -1), tag.reshape(n, -1)
    data = lane_group_wavefronts(a, v, element_bytes, device).sum(axis=1).reshape(n, -1).astype(float)
    stage = tag_stage_for(device)
    if stage is None:
        return data, np.zeros_like(data)
    line = device.l1_line_bytes
    ends = np.stack([a // line, (a + element_bytes - 1) // line], axis=2).reshape(a.shape[0], -1)
    lines = distinct_lines(ends, np.repeat(v, 2, axis=1))
    return data, stage.wavefronts(lines, v.sum(axis=1)).reshape(n, -1)


def l1_cycles(compiled: CompiledKernel, cells: BlockCells, device: Device,
              addresses: np.ndarray | None = None, lanes: np.ndarray | None = None,
              warps: WarpRows | None = None) -> L1Cycles:
    """L1 cycles per lup of the block ``cells`` (see the module docstring).

    ``addresses`` may pass precomputed :func:`~warpspeed.memory.addresses.block_addresses`,
    ``lanes`` :func:`~warpspeed.memory.addresses.instruction_lanes` and ``warps`` the block's
    instructions grouped by :func:`warpspeed.memory.warps.warp_rows` (then only one instruction of
    each group is costed; the result is the same). Accesses with the same element size are counted
    in one vectorized batch.
    """
    if warps is None:
        addr = block_addresses(compiled, cells) if addresses is None else addresses
        lanes = instruction_lanes(compiled, cells) if lanes is None else lanes
    lups = cells.lups
    n_acc = len(compiled.accesses)
    per_access = np.zeros(n_acc)
    data_total = tag_total = 0.0
    for elem in sorted({a.field.element_bytes for a in compiled.accesses}):
        idx = [i for i, a in enumerate(compiled.accesses) if a.field.element_bytes == elem]
        if warps is None:
            flat = addr[idx].reshape(-1, addr.shape[-1])  # (accesses * folds, threads)
            data, tag = warp_instruction_costs(flat, lanes[idx].reshape(flat.shape), elem, device)
        else:
            data, tag = _grouped_costs(warps, idx, elem, device)
        cycles = np.maximum(data, tag).reshape(len(idx), -1).sum(axis=1)
        per_access[idx] = cycles / lups
        data_total += float(data.sum()) / lups
        tag_total += float(tag.sum()) / lups
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


def _grouped_costs(warps: WarpRows, idx: list[int], elem: int, device: Device) -> tuple[np.ndarray, np.ndarray]:
    """:func:`warp_instruction_costs` of the instructions of accesses ``idx`` (element size
    ``elem``), costed once per group of equal instructions: ``(accesses * folds, warps)`` arrays."""
    used = np.unique(warps.inverse[idx])
    data_u, tag_u = warp_instruction_costs(warps.addresses[used], warps.lanes[used], elem, device)
    data = np.zeros(warps.addresses.shape[0])
    tag = np.zeros(warps.addresses.shape[0])
    data[used], tag[used] = data_u[:, 0], tag_u[:, 0]
    return warps.gather(data, idx), warps.gather(tag, idx)
