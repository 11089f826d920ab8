"""The first touches of a block's loads: which sectors each load instruction touches first.

The block's warp instructions run warp by warp, each warp's instructions in program order (copy by
copy, accesses in kernel order; :mod:`warpspeed.memory.l1_misses`); a 32 B sector of a field is
touched first by the first load instruction that touches it (the sector of each issuing lane's
first byte). The pass depends on the block's instructions only, not on the cache's capacity: it
gives the first-level stage the sectors each load instruction misses at its first touch
(:func:`warpspeed.memory.l1_misses.first_level_demand`), and the block footprint
(:mod:`warpspeed.memory.footprint`) the distinct sectors and lines the loads touch, which are the
same sets where every element lies within one sector (:meth:`FirstTouches.field_granules`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from warpspeed.memory.addresses import CompiledKernel
from warpspeed.memory.distinct import distinct_first
from warpspeed.memory.warps import WarpRows, distinct_rows


@dataclass(frozen=True)
class FirstTouches:
    """The first touches of a block's load instructions (module docstring).

    Attributes:
        representatives: ``(loads,)`` the representative (row of :class:`~warpspeed.memory.warps.WarpRows`)
            of every load instruction, in program order.
        masks: ``(loads,)`` uint64: which of its representative's distinct sectors (in ascending
            order, bit k for the k-th) the instruction touches first.
        keys: the distinct ``sector x fields + field`` the loads touch, ascending (``sector``: the
            absolute index of a ``sector_bytes`` sector of the field).
        fields: the number of fields of the key (:attr:`~warpspeed.memory.addresses.CompiledKernel.field_ids`).
        sector_bytes: the sector size (bytes).
        within_sectors: whether every issuing lane's element lies within one sector (then the
            sectors of the lanes' first bytes are every sector the loads touch).
    """

    representatives: np.ndarray
    masks: np.ndarray
    keys: np.ndarray
    fields: int
    sector_bytes: int
    within_sectors: bool

    def field_granules(self, field: int, granules: tuple[int, ...]) -> tuple[int, ...] | None:
        """Distinct granules of each size of ``granules`` (bytes, each a multiple of the sector)
        that the loads of ``field`` (its index in the key) touch; None where an element crosses a
        sector or a size is not a multiple of the sector (the first bytes' sectors do not give them)."""
        if not self.within_sectors or any(g % self.sector_bytes for g in granules):
            return None
        sectors = self.keys[self.keys % self.fields == field] // self.fields  # ascending
        counts = []
        for size in granules:
            ratio = size // self.sector_bytes
            g = sectors if ratio == 1 else sectors // ratio  # still ascending
            counts.append(int(g.size and 1 + np.count_nonzero(g[1:] != g[:-1])))
        return tuple(counts)


def _sector_ranks(addresses: np.ndarray, lanes: np.ndarray, sector_bytes: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per representative instruction (rows of ``addresses``): its distinct sectors (of each lane's
    first byte) in ascending order, flattened with ``ptr`` giving each row's slice, and every lane's
    position among its row's distinct sectors (``rank``, -1 for lanes that issue nothing)."""
    big = np.iinfo(np.int64).max
    g = np.where(lanes, addresses // sector_bytes, big)
    order = np.argsort(g, axis=1, kind="stable")
    ordered = np.take_along_axis(g, order, axis=1)
    first = ordered != big
    first[:, 1:] &= ordered[:, 1:] != ordered[:, :-1]
    rank_sorted = np.cumsum(first, axis=1) - 1
    rank = np.empty_like(rank_sorted)
    np.put_along_axis(rank, order, rank_sorted, axis=1)
    rank[~lanes] = -1
    counts = first.sum(axis=1)
    ptr = np.concatenate(([0], np.cumsum(counts)))
    return ordered[first], ptr, rank


def sector_ranks(warps: WarpRows, sector_bytes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_sector_ranks` of the representatives of ``warps``, kept with them (read-only)."""
    return warps.derived_value(("sector ranks", sector_bytes),
                               lambda: _sector_ranks(warps.addresses, warps.lanes, sector_bytes))


def _within_sectors(warps: WarpRows, sector_bytes: int) -> bool:
    """Whether every issuing lane's element of the representatives lies within one sector."""
    def check() -> bool:
        ends = warps.addresses % sector_bytes + warps.element_bytes[:, None]
        return bool(np.all(~warps.lanes | (ends <= sector_bytes)))
    return warps.derived_value(("within sectors", sector_bytes), check)


@lru_cache(maxsize=64)
def _program_order(loads: tuple[int, ...], folds: int, warps: int) -> tuple[np.ndarray, np.ndarray]:
    """The load instructions in program order, warp-major, then fold copy, then access: each one's
    access (of ``loads``) and column (``copy * warps + warp``) in the ``(accesses, folds x warps)``
    arrays of :class:`~warpspeed.memory.warps.WarpRows` (read-only; a pure function of its
    arguments, kept for the few shapes of a ranking)."""
    acc, copy, wp = np.meshgrid(np.array(loads, dtype=np.int64), np.arange(folds), np.arange(warps), indexing="ij")
    acc, copy, wp = (x.transpose(2, 1, 0).ravel() for x in (acc, copy, wp))  # (warp, copy, access) order
    col = copy * warps + wp
    acc.flags.writeable = col.flags.writeable = False
    return acc, col


def _sector_shapes(warps: WarpRows, sector_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """Per representative: its lowest sector (0 where no lane issues) and the index of its set of
    sectors moved down to start at 0 among those of all representatives (equal indices: the same
    set up to a translation); kept with the representatives (read-only)."""
    def compute() -> tuple[np.ndarray, np.ndarray]:
        sectors, ptr, _ = sector_ranks(warps, sector_bytes)
        per_rep = np.diff(ptr)
        n = per_rep.size
        lowest = np.zeros(n, dtype=np.int64)
        lowest[per_rep > 0] = sectors[ptr[:-1][per_rep > 0]]
        row = np.repeat(np.arange(n), per_rep)
        table = np.full((n, int(per_rep.max(initial=0))), -1, dtype=np.int64)  # -1: no k-th sector
        table[row, np.arange(sectors.size) - ptr[:-1][row]] = sectors - lowest[row]
        _, shape = distinct_rows(table)
        return lowest, shape.astype(np.int64)
    return warps.derived_value(("sector shapes", sector_bytes), compute)


def _first_instructions(lowest: np.ndarray, shape: np.ndarray, fields: np.ndarray, n_fields: int) -> np.ndarray:
    """The instructions (indices in program order, ascending) that are not a repetition of an
    earlier one: one whose set of sectors (its lowest sector, in sectors of the field, and the
    set's shape) or field differs from every earlier one's."""
    if lowest.size == 0:
        return np.arange(0)
    low = int(lowest.min())
    shapes = int(shape.max()) + 1
    span = (int(lowest.max()) - low + 1) * shapes * n_fields
    if span >= 1 << 62:  # the combined code would not fit int64: keep every instruction
        return np.arange(lowest.size)
    code = ((lowest - low) * shapes + shape) * n_fields + fields
    keep = np.zeros(code.size, dtype=bool)
    keep[distinct_first(code)] = True
    return np.flatnonzero(keep)


def first_touches(compiled: CompiledKernel, warps: WarpRows, sector_bytes: int) -> FirstTouches:
    """The first touches of the load instructions of a block whose warp instructions ``warps``
    groups (:func:`warpspeed.memory.warps.block_warp_rows`; module docstring).

    The (instruction, sector) pairs are formed for the instructions that are not a repetition of
    an earlier one only: an instruction that touches the same sectors of the same field as an
    earlier one (the same lowest sector and the same set above it, e.g. neighbouring loads along x
    within one sector) touches only sectors that one touched first, so it misses nothing. A pair
    is a first touch where its sector's key first occurs."""
    sector = sector_bytes
    n_acc, rows = warps.inverse.shape
    folds = warps.folds
    n_warps = rows // folds
    field_id, n_fields = compiled.field_ids
    _, loads = compiled.load_mask
    sectors, ptr, _ = sector_ranks(warps, sector)
    per_rep = np.diff(ptr)

    acc, col = _program_order(loads, folds, n_warps)
    rep = warps.inverse[acc, col]
    shift = warps.shift[acc, col] // sector
    fields = field_id[acc]
    lowest, shape = _sector_shapes(warps, sector)
    new = _first_instructions(lowest[rep] + shift, shape[rep], fields, n_fields)
    counts = per_rep[rep[new]]  # the (instruction, sector) pairs of each new instruction
    total = int(counts.sum())
    offsets = np.cumsum(counts) - counts  # each new instruction's first pair
    position = np.arange(total) - np.repeat(offsets, counts)  # a pair's k-th sector of its instruction
    keys = (sectors[np.repeat(ptr[rep[new]], counts) + position] * n_fields
            + np.repeat(shift[new] * n_fields + fields[new], counts))
    # an instruction's sectors are distinct, so a pair misses exactly where its key first occurs
    first = distinct_first(keys)  # the earliest pair of each key, in ascending order of the keys
    # which sectors of each load instruction miss, as a bit mask over its representative's sectors
    # (a lane touches one sector: at most 64, a wave64's; the bits are distinct, so their sum is
    # their union, exact in 64-bit integers)
    bits = np.zeros(total, dtype=np.uint64)
    bits[first] = np.left_shift(np.uint64(1), position[first].astype(np.uint64))
    mask = np.zeros(rep.size, dtype=np.uint64)
    nonempty = counts > 0
    if total:
        mask[new[nonempty]] = np.add.reduceat(bits, offsets[nonempty])
    return FirstTouches(representatives=rep, masks=mask, keys=keys[first], fields=n_fields, sector_bytes=sector,
                        within_sectors=_within_sectors(warps, sector))
