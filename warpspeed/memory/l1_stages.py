"""The stages of a first-level cache as rules on warp instructions: the data pipe's bank rule, the
tag stage, and the vector L1 stages of CDNA.

The rules and the sources of their constants are described in :mod:`warpspeed.memory.l1`; which
rules a device's first level follows is its strategy (:mod:`warpspeed.memory.first_level`). The
functions here take the level's numbers (banks, bank width, line) explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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

#: NVIDIA first-level families (the ``family`` of the first level's ``[[memory]]`` table) and
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


#: The ``family`` of a CDNA first level (``[[memory]]`` table): the vector L1 data cache (vL1D,
#: "texture cache per pipe") of GCN and CDNA, costed by :class:`VectorL1Stages`.
CDNA_FAMILY = "cdna-vl1d"
#: The ``family`` of the banked CDNA vector L1 (:class:`BankedVectorL1`), the first level of the
#: MI100, MI210 and MI300X files.
CDNA_BANKED_FAMILY = "cdna-vl1d-banked"
#: AMD first-level families; an AMD device file without a ``family`` entry keeps the two-stage
#: cost of the module docstring (RDNA's L0, with or without a calibrated tag stage).
AMD_L1_FAMILIES = (CDNA_FAMILY, CDNA_BANKED_FAMILY)

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
        a = pad_last(addr, group).reshape(-1, group)
        v = pad_last(valid, group).reshape(-1, group)
        active = v.sum(axis=1)
        address = (active > 0).reshape(rows, -1).sum(axis=1).astype(float)
        ends = np.stack([a // self.line_bytes, (a + element_bytes - 1) // self.line_bytes], axis=2)
        ends = ends.reshape(a.shape[0], -1)
        lines = distinct_lines(ends, np.repeat(v, 2, axis=1)).reshape(rows, -1).sum(axis=1)
        tag = np.ceil(lines / self.tag_lookups_per_cycle).astype(float)
        data = np.ceil(active * element_bytes / self.data_bytes_per_cycle).reshape(rows, -1).sum(axis=1)
        return address, tag, data.astype(float)


def _distinct_per_row(values: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows sorted with invalid entries last (as a sentinel), and the mask of first occurrences."""
    w = np.where(valid, values, _SENTINEL)
    w.sort(axis=1)
    distinct = w != _SENTINEL
    distinct[:, 1:] &= w[:, 1:] != w[:, :-1]
    return w, distinct


def group_wavefronts(words: np.ndarray, valid: np.ndarray, banks: int) -> np.ndarray:
    """Data-pipe wavefronts of each lane group.

    Args:
        words: int64 array ``(groups, lanes)`` of bank-word indices (byte address // bank_bytes).
        valid: bool array of the same shape; invalid lanes do not access memory.
        banks: banks of the data array.

    Returns:
        int64 array ``(groups,)``: the largest number of distinct words in one bank, per group;
        0 for a group with no valid lane.
    """
    groups = words.shape[0]
    if groups == 0:
        return np.zeros(0, dtype=np.int64)
    w, distinct = _distinct_per_row(words, valid)
    key = np.arange(groups)[:, None] * banks + np.where(distinct, w % banks, 0)
    counts = np.bincount(key[distinct], minlength=groups * banks)
    return counts.reshape(groups, banks).max(axis=1)


def distinct_lines(lines: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Distinct line indices per row of ``lines`` ``(rows, entries)`` over the valid entries."""
    if lines.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    return _distinct_per_row(lines, valid)[1].sum(axis=1)


def pad_last(values: np.ndarray, multiple: int) -> np.ndarray:
    """Pad the last axis with zeros (or False) to a multiple of ``multiple``."""
    pad = (-values.shape[-1]) % multiple
    if not pad:
        return values
    return np.pad(values, [(0, 0)] * (values.ndim - 1) + [(0, pad)])


def lane_group_wavefronts(addr: np.ndarray, lanes: np.ndarray, element_bytes: int, group: int, banks: int,
                          bank_bytes: int) -> np.ndarray:
    """Data-pipe wavefronts of every lane group of every warp instruction (the bank rule of
    :mod:`warpspeed.memory.l1`).

    Args:
        addr: int64 byte addresses ``(rows, warp_size)``, one warp instruction per row.
        lanes: bool, same shape: lanes that access memory.
        group: lanes per lane group (:meth:`warpspeed.memory.first_level.FirstLevel.lane_group_size`).
        banks, bank_bytes: the data array's banks and their width (bytes).

    Returns:
        int64 array ``(rows, groups)``, groups of ``group`` lanes in lane order.
    """
    warp = addr.shape[1]
    words_per_elem = max(1, -(-element_bytes // bank_bytes))
    words = (addr // bank_bytes)[..., None] + np.arange(words_per_elem)
    wvalid = np.repeat(lanes[..., None], words_per_elem, axis=2)
    groups = -(-warp // group)
    words = pad_last(words.transpose(0, 2, 1), groups * group).transpose(0, 2, 1)
    wvalid = pad_last(wvalid.transpose(0, 2, 1), groups * group).transpose(0, 2, 1)
    data = group_wavefronts(words.reshape(-1, group * words_per_elem),
                            wvalid.reshape(-1, group * words_per_elem), banks)
    return data.reshape(addr.shape[0], groups)


#: Lanes of a wave64 instruction the vL1D takes per address group: a quarter-wave (the TA's 16
#: lanes per clock of :data:`TA_LANES_PER_CYCLE`); runs, conflicts and requests are counted per group.
BANKED_GROUP_LANES = TA_LANES_PER_CYCLE
#: Uncoalesced lanes the address unit issues per clock: one 2x2 quad (AMD GPUOpen, "Understanding
#: Memory Coalescing on GCN", 2016: address generation "for 4 invocations in one clock").
BANKED_LANES_PER_CYCLE = TA_WIDE_LANES_PER_CYCLE
#: A run of at least this many consecutive lanes reading consecutive elements (or one element) is
#: coalesced into line-wide reads: one quad (same source: coalescing works on quads).
BANKED_MIN_RUN_LANES = TA_WIDE_LANES_PER_CYCLE


@dataclass(frozen=True)
class BankedVectorL1:
    """Cycles of a wave64 load in the CDNA vector L1 as a banked memory (the rule of
    :mod:`warpspeed.memory.l1` and ``docs/amd.md``, section "CDNA: the vector L1 as a banked memory").

    Per group of :data:`BANKED_GROUP_LANES` lanes (a quarter-wave), in lane order:

    * **coalesced runs**: maximal runs of at least :data:`BANKED_MIN_RUN_LANES` consecutive active
      lanes each reading the element after (or the same element as) the lane before cost
      ``ceil(span / coalesced_bytes_per_cycle)`` clocks (span: bytes from the run's lowest to its
      highest byte);
    * **the other lanes** pass the banks one by one. The data array is ``line_bytes / column_bytes``
      columns of ``column_bytes`` (16 B), each column ``column_bytes / bank_bytes`` dword banks of
      ``bank_bytes`` (4 B). A clock takes lanes in order until the next lane would be the
      :data:`BANKED_LANES_PER_CYCLE` + 1-th, or one of its dwords needs a bank (address bits of
      the dword within its column) already reading another dword, or a column (bits of the column
      within the line) already reading another line; then a new clock starts;
    * **request stage**: those lanes' distinct ``column_bytes`` chunks cost ``request_cycles``
      each; the group costs the larger of the bank clocks and the request stage.

    A group costs its runs' clocks plus the other lanes' cost, and at least the address unit's
    clocks (``ceil(active lanes / lanes per clock)``: 16 lanes per clock for elements of up to
    4 B, 4 for wider ones, :data:`TA_LANES_PER_CYCLE` and :data:`TA_WIDE_LANES_PER_CYCLE`); an
    instruction the sum over its groups.

    **Wide elements** (more than ``bank_bytes``, e.g. doubles) pass the banks as whole elements:
    ``line_bytes / element_bytes`` banks of ``element_bytes`` across the line, a clash when a lane's
    element needs a bank already reading another element; no column rule and no request stage (the
    address unit's 4 lanes per clock is the slower). Read off the MI210's
    double rows (gpu-benches gpu-strides/mi210.txt): contiguous and stride-0 doubles 8.1 cycles per
    32 lanes (the address unit's 4 lanes per clock), strides 2, 4 and 8 elements (16, 32, 64 B
    apart) 8.1, 16.1 and 32.2 (4, 2 and 1 distinct 8 B banks of a 64 B line).

    **Tag banks for wide elements** (``tag_banks`` set, e.g. 4): the tag RAM is ``tag_banks`` banks
    interleaved by line (bank = line index mod ``tag_banks``), each looking up one line per clock.
    Each clock of the address unit (a quad of ``lanes_per_cycle`` consecutive lanes of a group,
    among the lanes outside coalesced runs) costs the largest number of distinct lines its lanes
    need from one tag bank; the other lanes cost the larger of these tag clocks and the bank clocks.
    Read off the same double rows (no constant fitted; :func:`quad_tag_clocks` and ``docs/amd.md``):
    strides 10-34 and the 1- and 2-wide blocks, e.g. stride 10 (80 B apart) 12.1 cycles, stride 11
    16.1, stride 25 8.1, stride 31 28.2, stride 33 32.2.
    """

    line_bytes: int
    column_bytes: int
    bank_bytes: int
    coalesced_bytes_per_cycle: int
    request_cycles: float
    group_lanes: int = BANKED_GROUP_LANES
    lanes_per_cycle: int = BANKED_LANES_PER_CYCLE
    min_run_lanes: int = BANKED_MIN_RUN_LANES
    narrow_lanes_per_cycle: int = TA_LANES_PER_CYCLE
    tag_banks: int | None = None

    def cycles(self, addr: np.ndarray, valid: np.ndarray, element_bytes: int) -> np.ndarray:
        """Cycles of each row of ``addr`` (int64 byte addresses ``(rows, lanes)``) with active
        lanes ``valid``: a float array ``(rows,)``."""
        rows = addr.shape[0]
        g = self.group_lanes
        a = pad_last(addr, g).reshape(-1, g)
        v = pad_last(valid, g).reshape(-1, g)
        coalesced, runs = self._runs(a, v, element_bytes)
        rest = v & ~coalesced
        banks = (self._wide_bank_clocks(a, rest, element_bytes) if element_bytes > self.bank_bytes
                 else self._bank_clocks(a, rest, element_bytes))
        if element_bytes > self.bank_bytes and self.tag_banks is not None:
            tags = quad_tag_clocks(a, rest, element_bytes, self.line_bytes, self.tag_banks, self.lanes_per_cycle)
            banks = np.maximum(banks, tags)
        dword = self.bank_bytes
        words = max(1, -(-element_bytes // dword))
        chunks = (a // dword)[..., None] + np.arange(words)
        chunks = (chunks * dword // self.column_bytes).reshape(a.shape[0], -1)
        requests = distinct_lines(chunks, np.repeat(rest, words, axis=1)) * self.request_cycles
        if element_bytes > self.bank_bytes:  # wide lanes: the address unit's 4 per clock bounds them instead
            requests = np.zeros_like(requests)
        group = runs + np.maximum(banks, requests)
        address = np.ceil(v.sum(axis=1) / self.address_lanes_per_cycle(element_bytes))
        return np.maximum(group, address).reshape(rows, -1).sum(axis=1)

    def address_lanes_per_cycle(self, element_bytes: int) -> int:
        """Lanes the address unit takes per clock for elements of ``element_bytes``."""
        return self.narrow_lanes_per_cycle if element_bytes <= self.bank_bytes else self.lanes_per_cycle

    def _wide_bank_clocks(self, a: np.ndarray, rest: np.ndarray, element_bytes: int) -> np.ndarray:
        """Clocks of the lanes ``rest`` of each group whose elements are wider than a bank: whole
        elements in ``line_bytes / element_bytes`` banks, at most ``lanes_per_cycle`` lanes a clock."""
        groups, g = a.shape
        banks = max(1, self.line_bytes // element_bytes)
        element = a // element_bytes
        bank = element % banks
        rows = np.arange(groups)
        held = np.full((groups, banks), -1, dtype=np.int64)
        taken = np.zeros(groups, dtype=np.int64)
        clocks = np.zeros(groups, dtype=np.int64)
        for lane in range(g):
            on = rest[:, lane]
            current = held[rows, bank[:, lane]]
            clash = (current >= 0) & (current != element[:, lane])
            new = on & ((clocks == 0) | clash | (taken >= self.lanes_per_cycle))
            clocks += new
            held[new] = -1
            taken[new] = 0
            held[rows[on], bank[on, lane]] = element[on, lane]
            taken += on
        return clocks.astype(float)

    def _runs(self, a: np.ndarray, v: np.ndarray, element_bytes: int) -> tuple[np.ndarray, np.ndarray]:
        """Lanes in coalesced runs ``(groups, lanes)`` and the runs' clocks per group."""
        groups, g = a.shape
        step = np.diff(a, axis=1)
        joined = v[:, 1:] & v[:, :-1] & ((step == element_bytes) | (step == 0))
        starts = np.ones((groups, g), dtype=bool)
        starts[:, 1:] = ~joined
        run_id = np.cumsum(starts.ravel()) - 1  # one id per run over all groups
        count = np.bincount(run_id, weights=v.ravel().astype(float))
        member = v & (count[run_id].reshape(groups, g) >= self.min_run_lanes)
        big = np.iinfo(np.int64).max
        low = np.full(count.shape, big, dtype=np.int64)
        high = np.full(count.shape, -1, dtype=np.int64)
        ids = run_id[member.ravel()]
        np.minimum.at(low, ids, a.ravel()[member.ravel()])
        np.maximum.at(high, ids, a.ravel()[member.ravel()] + element_bytes)
        span = np.where(high >= 0, high - low, 0)
        clocks = -(-span // self.coalesced_bytes_per_cycle)
        group_of_run = np.repeat(np.arange(groups), starts.sum(axis=1))
        return member, np.bincount(group_of_run, weights=clocks, minlength=groups)

    def _bank_clocks(self, a: np.ndarray, rest: np.ndarray, element_bytes: int) -> np.ndarray:
        """Clocks of the lanes ``rest`` of each group through the banks (in lane order)."""
        groups, g = a.shape
        banks = self.column_bytes // self.bank_bytes
        columns = self.line_bytes // self.column_bytes
        words = max(1, -(-element_bytes // self.bank_bytes))
        rows = np.arange(groups)
        bank_word = np.full((groups, banks), -1, dtype=np.int64)
        column_line = np.full((groups, columns), -1, dtype=np.int64)
        taken = np.zeros(groups, dtype=np.int64)
        clocks = np.zeros(groups, dtype=np.int64)
        for lane in range(g):
            on = rest[:, lane]
            dwords = a[:, lane, None] // self.bank_bytes + np.arange(words)
            bank = dwords % banks
            column = (dwords // banks) % columns
            line = dwords * self.bank_bytes // self.line_bytes
            held_word = np.take_along_axis(bank_word, bank, axis=1)
            held_line = np.take_along_axis(column_line, column, axis=1)
            clash = (((held_word >= 0) & (held_word != dwords)) | ((held_line >= 0) & (held_line != line))).any(axis=1)
            new = on & ((clocks == 0) | clash | (taken >= self.lanes_per_cycle))
            clocks += new
            bank_word[new] = -1
            column_line[new] = -1
            taken[new] = 0
            for j in range(words):
                r = rows[on]
                bank_word[r, bank[on, j]] = dwords[on, j]
                column_line[r, column[on, j]] = line[on, j]
            taken += on
        return clocks.astype(float)


def quad_tag_clocks(a: np.ndarray, valid: np.ndarray, element_bytes: int, line_bytes: int, tag_banks: int,
                    quad: int) -> np.ndarray:
    """Tag clocks of each row of ``a`` (int64 byte addresses ``(groups, lanes)``, ``lanes`` a
    multiple of ``quad``) over its lanes ``valid``: per quad of ``quad`` consecutive lanes the
    largest number of distinct ``line_bytes`` lines (both lines of an element that straddles two)
    that fall into one of ``tag_banks`` banks (line index mod ``tag_banks``), summed over the
    quads; a quad with no valid lane costs nothing. Returns a float array ``(groups,)``."""
    groups, lanes = a.shape
    q = a.reshape(-1, quad)
    v = valid.reshape(-1, quad)
    ends = np.concatenate([q // line_bytes, (q + element_bytes - 1) // line_bytes], axis=1)
    ends_valid = np.concatenate([v, v], axis=1)
    w, distinct = _distinct_per_row(ends, ends_valid)
    rows = np.arange(w.shape[0])[:, None]
    key = rows * tag_banks + np.where(distinct, w % tag_banks, 0)
    counts = np.bincount(key[distinct], minlength=w.shape[0] * tag_banks).reshape(-1, tag_banks)
    return counts.max(axis=1).reshape(groups, lanes // quad).sum(axis=1).astype(float)
