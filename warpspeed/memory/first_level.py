"""The first level's behaviour per vendor: one strategy class each, chosen from the device.

The first level (the cache private to an SM or compute unit, ``scope = "cu"`` in the device's
``[[memory]]`` list) is NVIDIA's L1TEX, CDNA's vector L1 or RDNA's L0. They share the data pipe's
bank rule but differ in what bounds a warp instruction and in what is known about their misses
(:mod:`warpspeed.memory.l1` describes the rules and their sources):

* :class:`NvidiaL1Tex`: the bank rule and the L1TEX tag stage of the level's ``family``
  (:data:`~warpspeed.memory.l1_stages.NVIDIA_L1_FAMILIES`), and the miss model of
  :mod:`warpspeed.memory.l1_misses` (one data-stage wavefront per missing line, one L2 request
  per missing line);
* :class:`CdnaVectorL1` (``family = "cdna-vl1d"``): the address, tag and data stages of the vector
  L1 from documented rates (:class:`~warpspeed.memory.l1_stages.VectorL1Stages`);
* :class:`CdnaBankedL1` (``family = "cdna-vl1d-banked"``, the built-in CDNA parts): the vector L1
  as a banked memory, cycles from the dword banks and 16-B columns each lane's address falls into
  (:class:`~warpspeed.memory.l1_stages.BankedVectorL1`);
* :class:`RdnaL0` (an AMD first level without a family): the bank rule, 64-bit loads at
  ``wide_bytes_per_cycle``, and the tag stage fitted to the part's loads where the level gives it.

AMD's first levels keep the roofline's cost for loads that miss (nothing is known about their
miss path). Like pystencils' ``Platform`` subclasses, a strategy answers the questions the
models ask; :func:`first_level` picks it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np

from warpspeed.errors import DeviceError
from warpspeed.memory.l1_stages import (
    AMD_L1_FAMILIES,
    CDNA_BANKED_FAMILY,
    CDNA_FAMILY,
    DEFAULT_NVIDIA_FAMILY,
    NVIDIA_L1_FAMILIES,
    BankedVectorL1,
    TagStage,
    VectorL1Stages,
    distinct_lines,
    lane_group_wavefronts,
    pad_last,
)

if TYPE_CHECKING:
    from warpspeed.hardware.caches import CacheLevel
    from warpspeed.hardware.device import Device


class FirstLevel:
    """A first level that serves a warp instruction in two pipelined stages: the data pipe (bank
    rule) and, where known, a tag stage; an instruction costs the larger. Loads that miss cost as
    loads that hit (no miss model)."""

    #: Whether the strategy has a model of the misses' wavefronts and of the miss stage's requests.
    models_misses: ClassVar[bool] = False

    def __init__(self, device: "Device") -> None:
        self.device = device
        self.level: CacheLevel = device.l1
        self.where = f"device {device.name!r} [[memory]] {self.level.name}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.device.name!r})"

    @property
    def tag_stage(self) -> TagStage | None:
        """The tag stage, or None where it is not modelled."""
        return None

    def data_bytes_per_cycle(self, element_bytes: int) -> int:
        """Bytes the data pipe delivers per cycle for elements of ``element_bytes``: the banks' width."""
        return self.level.bytes_per_cycle

    def lane_group_size(self, element_bytes: int) -> int:
        """Lanes of one warp instruction that the data pipe serves together (one *lane group*): as
        many as its bytes per cycle hold, at most a warp (a full warp for 4-byte elements, half
        warps for 8-byte ones on 128 B per cycle)."""
        return max(1, min(self.device.warp_size, self.data_bytes_per_cycle(element_bytes) // element_bytes))

    def lane_group_wavefronts(self, addr: np.ndarray, lanes: np.ndarray, element_bytes: int) -> np.ndarray:
        """Data-pipe wavefronts ``(rows, groups)`` of every lane group of every warp instruction
        (rows of ``addr``, ``warp_size`` lanes each)."""
        return lane_group_wavefronts(addr, lanes, element_bytes, self.lane_group_size(element_bytes),
                                     self.level.banks, self.level.bank_bytes)

    def instruction_costs(self, addr: np.ndarray, lanes: np.ndarray, element_bytes: int) -> tuple[np.ndarray, np.ndarray]:
        """Data-pipe and tag-stage wavefronts of every warp instruction.

        ``addr``, ``lanes``: ``(instructions, threads)`` byte addresses in linear thread order and
        the lanes that access memory; returns two float arrays ``(instructions, warps)`` (the tag
        stage's zero where it is not modelled)."""
        n, warp = addr.shape[0], self.device.warp_size
        a = pad_last(addr, warp).reshape(-1, warp)  # (instructions * warps, warp)
        v = pad_last(lanes, warp).reshape(-1, warp)
        data = self.lane_group_wavefronts(a, v, element_bytes).sum(axis=1).reshape(n, -1).astype(float)
        stage = self.tag_stage
        if stage is None:
            return data, np.zeros_like(data)
        line = self.level.line_bytes
        ends = np.stack([a // line, (a + element_bytes - 1) // line], axis=2).reshape(a.shape[0], -1)
        lines = distinct_lines(ends, np.repeat(v, 2, axis=1))
        return data, stage.wavefronts(lines, v.sum(axis=1)).reshape(n, -1)

    def refill_cycles_per_line(self, footprint_bytes: float) -> float:
        """Cycles each distinct line of an instruction costs at least when the block's loads span
        ``footprint_bytes`` (bytes of their distinct lines): 0 where the level has no such floor
        (:class:`CdnaBankedL1` with ``capacity_miss_fraction``)."""
        return 0.0

    def miss_counts(self, addr: np.ndarray, lanes: np.ndarray, miss: np.ndarray, element_bytes: int,
                    store: bool) -> tuple[np.ndarray, ...]:
        """What the miss costs of warp instructions (rows of ``addr``, one warp each) whose lanes
        ``miss`` at their first touch count of their lanes and lines, before the capacity miss rate
        and the bank-rule costs enter (integer arrays, one entry per instruction or lane group;
        :meth:`costs_from_counts` turns them into costs): the same for every configuration whose
        instructions are the same (:mod:`warpspeed.memory.l1_misses`). Without a miss model: the
        lines of a store or of a first touch."""
        return (distinct_lines(addr // self.level.line_bytes, lanes if store else miss),)

    def costs_from_counts(self, counts: tuple[np.ndarray, ...], store: bool, capacity_miss_rate: float,
                          bank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Data-stage wavefronts and L2 requests of the instructions :meth:`miss_counts` counted
        (``bank``: their costs when every lane hits, :meth:`instruction_costs`), with capacity misses
        of rate ``capacity_miss_rate``. Without a miss model: the instructions' own costs, and one
        request per line of a store or a first touch."""
        return bank, counts[0]


class NvidiaL1Tex(FirstLevel):
    """NVIDIA's L1TEX (Volta and later): the bank rule, the tag stage of the level's family, and
    the miss model (one data-stage wavefront per missing line; one L2 request per missing line of
    a load and per line of a store)."""

    models_misses = True

    @property
    def family(self) -> str:
        """The level's ``family`` (:data:`~warpspeed.memory.l1_stages.NVIDIA_L1_FAMILIES`), the
        calibrated A100's without one; a one-line error for an unknown family."""
        family = self.level.family or DEFAULT_NVIDIA_FAMILY
        if family not in NVIDIA_L1_FAMILIES:
            raise DeviceError(f"{self.where}: family {family!r} unknown; allowed: {', '.join(NVIDIA_L1_FAMILIES)}")
        return family

    @property
    def tag_stage(self) -> TagStage:
        return NVIDIA_L1_FAMILIES[self.family]

    def miss_counts(self, addr: np.ndarray, lanes: np.ndarray, miss: np.ndarray, element_bytes: int,
                    store: bool) -> tuple[np.ndarray, ...]:
        """A store's lines; a load's counts of :meth:`_expected_cost`: per lane group its bank-rule
        wavefronts over the lanes that hit and their distinct lines, per instruction its missing
        lines and the distinct lines of the lanes that hit."""
        lines = addr // self.level.line_bytes
        if store:
            return (distinct_lines(lines, lanes),)
        hit = lanes & ~miss
        bank_hit = self.lane_group_wavefronts(addr, hit, element_bytes)
        group = self.lane_group_size(element_bytes)
        groups = bank_hit.shape[1]
        g_lines = pad_last(lines, groups * group).reshape(-1, group)
        g_hit = pad_last(hit, groups * group).reshape(-1, group)
        hit_lines_per_group = distinct_lines(g_lines, g_hit).reshape(-1, groups)
        return bank_hit, hit_lines_per_group, distinct_lines(lines, miss), distinct_lines(lines, hit)

    def costs_from_counts(self, counts: tuple[np.ndarray, ...], store: bool, capacity_miss_rate: float,
                          bank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if store:
            return bank, counts[0]
        return self._expected_cost(counts, bank, capacity_miss_rate)

    def _expected_cost(self, counts: tuple[np.ndarray, ...], bank_all: np.ndarray,
                       capacity_miss_rate: float) -> tuple[np.ndarray, np.ndarray]:
        """Expected data-stage wavefronts and L2 requests of load instructions (``counts`` of
        :meth:`miss_counts`; ``bank_all`` their bank-rule wavefronts) with first-touch misses and
        capacity misses of rate ``capacity_miss_rate``."""
        bank_hit, hit_lines_per_group, miss_lines, hit_lines = counts
        bank_hit = bank_hit.astype(float)
        # a group keeps a wavefront while any of its hit lines survives; conflicting words of
        # different lines survive one by one
        survive_any = np.where(bank_hit > 0, 1.0 - capacity_miss_rate ** hit_lines_per_group, 0.0)
        kept = np.maximum(bank_hit * (1.0 - capacity_miss_rate), survive_any)
        missing = miss_lines + capacity_miss_rate * hit_lines
        return np.maximum(bank_all, kept.sum(axis=1) + missing), missing


class RdnaL0(FirstLevel):
    """An AMD first level without a family (RDNA's L0): the bank rule with 64-bit loads at the
    level's ``wide_bytes_per_cycle`` where given, and the tag stage fitted to the part's loads
    (``tag_overhead_wavefronts``, ``tag_wavefronts_per_line``) where given."""

    @property
    def tag_stage(self) -> TagStage | None:
        per_line, overhead = self.level.tag_wavefronts_per_line, self.level.tag_overhead_wavefronts
        if per_line is None:
            return None
        if overhead is None:
            raise DeviceError(f"{self.where}: tag_wavefronts_per_line needs tag_overhead_wavefronts")
        return TagStage(overhead, per_line)

    def data_bytes_per_cycle(self, element_bytes: int) -> int:
        """The banks' width, or for elements wider than a bank ``wide_bytes_per_cycle`` where the
        level gives it (RDNA: 64-bit loads at half the 32-bit rate)."""
        wide = self.level.wide_bytes_per_cycle
        if element_bytes > self.level.bank_bytes and wide is not None:
            return int(wide)
        return self.level.bytes_per_cycle


class CdnaVectorL1(FirstLevel):
    """CDNA's vector L1 (``family = "cdna-vl1d"``): per wave64 instruction the largest of the
    address unit's clocks, the tag lookups and the data path's clocks, from documented rates."""

    @property
    def stages(self) -> VectorL1Stages:
        """The stages with the level's line and data width (``banks x bank_bytes``)."""
        return VectorL1Stages(line_bytes=self.level.line_bytes, data_bytes_per_cycle=self.level.bytes_per_cycle)

    def instruction_costs(self, addr: np.ndarray, lanes: np.ndarray, element_bytes: int) -> tuple[np.ndarray, np.ndarray]:
        """The larger of the address and data clocks, and the tag clocks, per warp instruction."""
        n, warp = addr.shape[0], self.device.warp_size
        a = pad_last(addr, warp).reshape(-1, warp)
        v = pad_last(lanes, warp).reshape(-1, warp)
        address, tag, data = self.stages.cycles(a, v, element_bytes)
        return np.maximum(address, data).reshape(n, -1), tag.reshape(n, -1)


class CdnaBankedL1(FirstLevel):
    """CDNA's vector L1 as a banked memory (``family = "cdna-vl1d-banked"``): per wave64
    instruction the clocks of :class:`~warpspeed.memory.l1_stages.BankedVectorL1` with the level's
    line, ``column_bytes``, ``bank_bytes``, coalesced width (``banks x bank_bytes``),
    ``request_cycles`` and ``tag_banks`` (optional); the tag stage is part of that rule (reported
    as zero)."""

    @property
    def stages(self) -> BankedVectorL1:
        """The rule with the level's numbers; a one-line error where the level lacks one."""
        level = self.level
        missing = [key for key in ("column_bytes", "request_cycles") if getattr(level, key) is None]
        if missing:
            raise DeviceError(f"{self.where}: family {CDNA_BANKED_FAMILY!r} needs {' and '.join(missing)}")
        return BankedVectorL1(line_bytes=level.line_bytes, column_bytes=int(level.column_bytes),
                              bank_bytes=int(level.bank_bytes), coalesced_bytes_per_cycle=level.bytes_per_cycle,
                              request_cycles=float(level.request_cycles), tag_banks=level.tag_banks)

    def refill_cycles_per_line(self, footprint_bytes: float) -> float:
        """The vL1D's refill floor (``docs/amd.md``, "CDNA: lines beyond the vector L1"): where the
        block's load lines exceed the level's ``bytes`` (an LRU cache cycling through more lines than
        it holds), a fraction ``capacity_miss_fraction`` of every instruction's lines is refilled,
        one line per ``line_bytes / (banks x bank_bytes)`` clocks (the vL1D's 64 B per clock and
        CU); 0 without ``capacity_miss_fraction`` or when the lines fit."""
        level = self.level
        if level.capacity_miss_fraction is None or footprint_bytes <= level.bytes:
            return 0.0
        return float(level.capacity_miss_fraction) * level.line_bytes / level.bytes_per_cycle

    def instruction_costs(self, addr: np.ndarray, lanes: np.ndarray, element_bytes: int) -> tuple[np.ndarray, np.ndarray]:
        """The banked rule's clocks per warp instruction, and a zero tag stage."""
        n, warp = addr.shape[0], self.device.warp_size
        a = pad_last(addr, warp).reshape(-1, warp)
        v = pad_last(lanes, warp).reshape(-1, warp)
        cycles = self.stages.cycles(a, v, element_bytes).reshape(n, -1)
        return cycles, np.zeros_like(cycles)


def first_level(device: "Device") -> FirstLevel:
    """The strategy of ``device``'s first level: NVIDIA's L1TEX, CDNA's vector L1 (AMD, ``family =
    "cdna-vl1d-banked"`` or the documented-rates ``"cdna-vl1d"``) or RDNA's L0 (AMD without a
    family); a one-line error for an AMD family that is not known."""
    if device.vendor == "nvidia":
        return NvidiaL1Tex(device)
    family = device.l1.family
    if family is None:
        return RdnaL0(device)
    if family not in AMD_L1_FAMILIES:
        raise DeviceError(f"device {device.name!r} [[memory]] {device.l1.name}: family {family!r} unknown; "
                          f"allowed: {', '.join(AMD_L1_FAMILIES)}")
    if family == CDNA_BANKED_FAMILY:
        return CdnaBankedL1(device)
    return CdnaVectorL1(device) if family == CDNA_FAMILY else RdnaL0(device)
