"""The warp instructions of a thread block, grouped by what their costs depend on.

The block-level stages (:mod:`warpspeed.memory.l1`, :mod:`warpspeed.memory.footprint`) cost every
warp instruction of the representative block: one per access, fold copy and warp. What they count
depends on the instruction's lanes and on its byte addresses only through the bank of each word
(address // bank width, modulo the banks), the line, sector and store granule of each element
(address // granule): all of them are unchanged when every address of the instruction moves by a
multiple of ``period`` = lcm(banks x bank width, line, sector, store granule) (128 B on NVIDIA
GPUs). A block of power-of-two dimensions runs the same lane pattern in every warp, so most of its
instructions are such translations of each other: :func:`warp_rows` moves each instruction down by
the largest multiple of the period below its lowest address and keeps one representative of each
distinct (addresses, lanes, element size). The stages cost the representatives and read the costs
of the others off them, which gives the same integers and the same sums as costing every
instruction.

The distinct granules of an instruction form runs of consecutive granules; the block's unique
footprint (the union over all its instructions) is the union of those runs, each moved back by its
instruction's shift, counted by sorting the runs (:meth:`WarpRows.union_granules`): its cost depends
on the number of instructions, not on the addresses' span, so it does not grow with the domain.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import lcm
from typing import Sequence

import numpy as np

from warpspeed.hardware.device import Device

#: Multipliers of the row hash that finds equal instructions (odd 63-bit constants from a fixed
#: seed; equal hashes are verified lane by lane, so a collision costs time, never a wrong count).
_HASH_SEED = 20261126


def address_period(device: Device) -> int:
    """Bytes by which the addresses of an instruction may move without changing any of its costs
    (module docstring)."""
    return lcm(device.l1_banks * device.l1_bank_bytes, device.l1_line_bytes, device.l1_sector_bytes,
               device.store_granule_bytes)


def _pad_threads(values: np.ndarray, warp: int) -> np.ndarray:
    pad = (-values.shape[-1]) % warp
    if not pad:
        return values
    return np.pad(values, [(0, 0)] * (values.ndim - 1) + [(0, pad)])


def _distinct_rows(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(first, inverse)``: the index of the first row of each distinct row of ``keys`` and, per
    row, the number of its distinct row."""
    weights = np.random.default_rng(_HASH_SEED).integers(1, 2**62, size=keys.shape[1], dtype=np.int64) | 1
    hashed = keys @ weights  # int64 arithmetic wraps around: a hash, verified below
    _, first, inverse = np.unique(hashed, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    if not np.array_equal(keys, keys[first[inverse]]):  # a collision: compare the rows themselves
        _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
    return first, inverse


@dataclass(frozen=True)
class WarpRows:
    """The warp instructions of a block as representatives (module docstring).

    Attributes:
        addresses: ``(distinct, warp)`` int64 byte addresses of the representatives, moved by their
            shift (lanes that issue nothing hold 0).
        lanes: ``(distinct, warp)`` bool, the lanes that issue.
        element_bytes: ``(distinct,)`` bytes per lane of each representative.
        inverse: ``(accesses, rows)``: the representative of each instruction; ``rows`` is fold
            copies x warps, copy-major (the order of ``(accesses, folds, threads)`` arrays).
        shift: ``(accesses, rows)`` int64: the bytes each instruction was moved down by (a multiple
            of the period).
        folds: fold copies per access.
    """

    addresses: np.ndarray
    lanes: np.ndarray
    element_bytes: np.ndarray
    inverse: np.ndarray
    shift: np.ndarray
    folds: int

    def gather(self, values: np.ndarray, accesses: Sequence[int]) -> np.ndarray:
        """Per-representative ``values`` for every instruction of ``accesses``, shaped
        ``(len(accesses) * folds, warps)`` like the instruction arrays of the stages."""
        rows = values[self.inverse[list(accesses)]]
        return rows.reshape(len(accesses) * self.folds, -1)

    def granule_runs(self, granule: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(first, last, valid)``, each ``(distinct, runs)``: the runs of consecutive
        ``granule``-byte granules that the issuing lanes of each representative touch (first and
        last byte of every element), inclusive granule indices; ``valid`` marks the entries that
        are runs."""
        return self._runs(granule)

    def distinct_granules(self, granule: int) -> np.ndarray:
        """Distinct ``granule``-byte granules per representative, ``(distinct,)`` int64."""
        first, last, valid = self._runs(granule)
        return np.where(valid, last - first + 1, 0).sum(axis=1)

    def union_granules(self, accesses: Sequence[int], granule: int) -> int:
        """Distinct ``granule``-byte granules of all instructions of ``accesses`` together."""
        if not len(accesses):
            return 0
        first, last, valid = self._runs(granule)
        index = self.inverse[list(accesses)].reshape(-1)
        shift = (self.shift[list(accesses)].reshape(-1) // granule)[:, None]
        picked = valid[index]
        starts = (first[index] + shift)[picked]
        if not starts.size:
            return 0
        ends = (last[index] + shift)[picked]
        order = np.argsort(starts, kind="stable")
        starts, ends = starts[order], ends[order]
        reach = np.maximum.accumulate(ends)
        before = np.concatenate((starts[:1] - 1, reach[:-1]))  # the furthest granule covered so far
        return int(np.maximum(0, ends - np.maximum(starts - 1, before)).sum())

    def _runs(self, granule: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        cache = self.__dict__.setdefault("_run_cache", {})
        if granule not in cache:
            a, lanes = self.addresses, self.lanes
            ends = np.concatenate((a // granule, (a + self.element_bytes[:, None] - 1) // granule), axis=1)
            sentinel = np.iinfo(np.int64).max
            g = np.where(np.concatenate((lanes, lanes), axis=1), ends, sentinel)
            g.sort(axis=1)
            present = g != sentinel
            nxt = np.concatenate((g[:, 1:], np.full((g.shape[0], 1), sentinel)), axis=1)
            prv = np.concatenate((np.full((g.shape[0], 1), sentinel), g[:, :-1]), axis=1)
            # duplicates sit together: a run starts at a first occurrence that does not follow the
            # previous granule and ends at a last occurrence that the next granule does not follow
            starts = present & (prv != g) & ((prv == sentinel) | (prv + 1 != g))
            stops = present & (nxt != g) & ((nxt == sentinel) | (g + 1 != nxt))
            count = starts.sum(axis=1)
            width = max(1, int(count.max()) if count.size else 1)
            valid = np.arange(width)[None, :] < count[:, None]
            first = np.zeros(valid.shape, dtype=np.int64)
            last = np.zeros(valid.shape, dtype=np.int64)
            first[valid] = g[starts]
            last[valid] = g[stops]
            cache[granule] = (first, last, valid)
        return cache[granule]


def warp_rows(addresses: np.ndarray, lanes: np.ndarray, element_bytes: Sequence[int], warp_size: int,
              period: int) -> WarpRows:
    """Group the warp instructions of a block (module docstring).

    Args:
        addresses: int64 ``(accesses, folds, threads)`` byte addresses in linear thread order.
        lanes: bool of the same shape: the lanes on which each instruction issues.
        element_bytes: bytes per element of each access.
        warp_size: threads per warp.
        period: see :func:`address_period`.
    """
    n_acc, folds, _ = addresses.shape
    a = _pad_threads(addresses, warp_size).reshape(n_acc, -1, warp_size)
    v = _pad_threads(lanes, warp_size).reshape(n_acc, -1, warp_size)
    big = np.iinfo(np.int64).max
    low = np.where(v, a, big).min(axis=2)
    shift = np.where(low == big, 0, (low // period) * period)
    moved = np.where(v, a - shift[..., None], 0)
    elem = np.broadcast_to(np.asarray(element_bytes, dtype=np.int64)[:, None, None], (n_acc, a.shape[1], 1))
    keys = np.concatenate((np.where(v, moved, -1), elem), axis=2).reshape(-1, warp_size + 1)
    first, inverse = _distinct_rows(keys)
    flat_moved, flat_lanes = moved.reshape(-1, warp_size), v.reshape(-1, warp_size)
    return WarpRows(addresses=flat_moved[first], lanes=flat_lanes[first], element_bytes=elem.reshape(-1)[first],
                    inverse=inverse.reshape(n_acc, -1), shift=shift, folds=folds)
