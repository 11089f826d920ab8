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

from dataclasses import dataclass, field
from functools import lru_cache
from math import lcm
from typing import Callable, Hashable, Sequence, TypeVar

import numpy as np

from warpspeed.hardware.device import Device
from warpspeed.memory.addresses import BlockCells, CompiledKernel, block_addresses
from warpspeed.memory.distinct import distinct_first_inverse, distinct_inverse, positions_in_runs
from warpspeed.memo import BoundedMemo

T = TypeVar("T")

#: Multipliers of the row hash that finds equal instructions (odd 63-bit constants from a fixed
#: seed; equal hashes are verified lane by lane, so a collision costs time, never a wrong count).
_HASH_SEED = 20261126


def address_period(device: Device) -> int:
    """Bytes by which the addresses of an instruction may move without changing any of its costs
    (module docstring)."""
    return lcm(device.l1.banks * device.l1.bank_bytes, device.l1.line_bytes, device.l1.sector_bytes,
               device.l1.store_granule)


def _pad_threads(values: np.ndarray, warp: int) -> np.ndarray:
    pad = (-values.shape[-1]) % warp
    if not pad:
        return values
    return np.pad(values, [(0, 0)] * (values.ndim - 1) + [(0, pad)])


@lru_cache(maxsize=8)
def _hash_weights(width: int) -> np.ndarray:
    return np.random.default_rng(_HASH_SEED).integers(1, 2**62, size=width, dtype=np.int64) | 1


def distinct_rows(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(first, inverse)``: the index of the first row of each distinct row of ``keys`` and, per
    row, the number of its distinct row."""
    hashed = keys @ _hash_weights(keys.shape[1])  # int64 arithmetic wraps around: a hash, verified below
    first, inverse = distinct_first_inverse(hashed)
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
        derived: what is computed from the representatives alone (their granule runs, their
            first-level costs; :meth:`derived_value`), shared by the ``WarpRows`` of blocks whose
            representatives are equal (:func:`block_warp_rows` with ``shared``).
    """

    addresses: np.ndarray
    lanes: np.ndarray
    element_bytes: np.ndarray
    inverse: np.ndarray
    shift: np.ndarray
    folds: int
    derived: dict = field(default_factory=dict, compare=False, repr=False)

    def derived_value(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The value ``compute()`` of the representatives (a pure function of ``addresses``,
        ``lanes`` and ``element_bytes`` and of what ``key`` names), computed once per distinct
        ``key`` and kept in :attr:`derived`; numpy results are made read-only."""
        if key not in self.derived:
            value = compute()
            for item in value if isinstance(value, tuple) else (value,):
                if isinstance(item, np.ndarray):
                    item.flags.writeable = False
            self.derived[key] = value
        return self.derived[key]

    def gather(self, values: np.ndarray, accesses: Sequence[int]) -> np.ndarray:
        """Per-representative ``values`` for every instruction of ``accesses``, shaped
        ``(len(accesses) * folds, warps)`` like the instruction arrays of the stages."""
        rows = values[self.inverse[list(accesses)]]
        return rows.reshape(len(accesses) * self.folds, -1)

    def granule_runs(self, granule: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(first, last, owner)``: the runs of consecutive ``granule``-byte granules that the
        issuing lanes of the representatives touch (first and last byte of every element),
        inclusive granule indices, and the representative of each run, ordered by owner."""
        return self._runs(granule)

    def distinct_granules(self, granule: int) -> np.ndarray:
        """Distinct ``granule``-byte granules per representative, ``(distinct,)`` int64."""
        def count() -> np.ndarray:
            first, last, owner = self._runs(granule)
            return np.bincount(owner, weights=last - first + 1, minlength=self.addresses.shape[0]).astype(np.int64)
        return self.derived_value(("distinct granules", granule), count)

    def union_granules(self, accesses: Sequence[int], granules: Sequence[int]) -> tuple[int, ...]:
        """Distinct granules of all instructions of ``accesses`` together, for each size in
        ``granules`` (bytes; every size a multiple of the first, and the period a multiple of all):
        one sort of the first size's runs serves them all."""
        if not len(accesses):
            return (0,) * len(granules)
        unit = granules[0]
        first, last, owner = self._runs(unit)
        rows = list(accesses)
        index = self.inverse[rows].reshape(-1)
        shift = self.shift[rows].reshape(-1) // unit
        per_rep = self.derived_value(("runs per representative", unit),
                                     lambda: np.bincount(owner, minlength=self.addresses.shape[0]))
        if per_rep.size and per_rep.min() == per_rep.max() == 1:  # one run per representative
            starts, ends = first[index] + shift, last[index] + shift
        else:
            ptr = np.concatenate(([0], np.cumsum(per_rep)))
            counts = per_rep[index]
            total = int(counts.sum())
            if not total:
                return (0,) * len(granules)
            row = np.repeat(np.arange(index.size), counts)
            position = ptr[index][row] + positions_in_runs(counts)
            starts = first[position] + shift[row]
            ends = last[position] + shift[row]
        order = np.argsort(starts, kind="stable")
        starts, ends = starts[order], ends[order]
        result = []
        for size in granules:
            ratio = size // unit
            s, e = (starts, ends) if ratio == 1 else (starts // ratio, ends // ratio)  # still sorted
            reach = np.maximum.accumulate(e)
            before = np.concatenate((s[:1] - 1, reach[:-1]))  # the furthest granule covered so far
            result.append(int(np.maximum(0, e - np.maximum(s - 1, before)).sum()))
        return tuple(result)

    def _runs(self, granule: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.derived_value(("granule runs", granule), lambda: self._compute_runs(granule))

    def _compute_runs(self, granule: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
        return g[starts], g[stops], np.nonzero(starts)[0]


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
    every = bool(v.all())  # the common case: every lane of every instruction issues
    big = np.iinfo(np.int64).max
    low = a.min(axis=2) if every else np.where(v, a, big).min(axis=2)
    shift = (low // period) * period if every else np.where(low == big, 0, (low // period) * period)
    keys = np.empty((n_acc, a.shape[1], warp_size + 1), dtype=np.int64)
    moved = keys[..., :warp_size]
    np.subtract(a, shift[..., None], out=moved)
    if not every:
        moved[~v] = -1  # lanes that issue nothing: -1 in the key, 0 in the representative
    keys[..., warp_size] = np.asarray(element_bytes, dtype=np.int64)[:, None]
    keys = keys.reshape(-1, warp_size + 1)
    first, inverse = distinct_rows(keys)
    picked = keys[first]
    flat_lanes = v.reshape(-1, warp_size)[first]
    representatives = picked[:, :warp_size].copy()
    representatives[~flat_lanes] = 0
    return WarpRows(addresses=representatives, lanes=flat_lanes, element_bytes=picked[:, warp_size].copy(),
                    inverse=inverse.reshape(n_acc, -1), shift=shift, folds=folds)


@dataclass(frozen=True)
class WarpPlan:
    """What :func:`block_warp_rows` needs of a kernel and its fold copies, computed once
    (:func:`warp_plan`): the access each access is a translation of, by how many bytes, and the
    pattern tables (one per reference access, fold copy and set of issuing copies)."""

    references: CompiledKernel  # the reference accesses only
    delta: np.ndarray  # (accesses,): bytes each access lies above its reference
    combo_of: np.ndarray  # (accesses, folds): the pattern table of each instruction
    reference_of: np.ndarray  # (tables,): index into ``references``
    fold_of: np.ndarray  # (tables,): the fold copy whose cells the table's instructions access
    serves: np.ndarray  # (tables, folds) bool: the copies on whose valid lanes they issue
    element_bytes: np.ndarray  # (tables,)


def warp_plan(compiled: CompiledKernel, owner: np.ndarray) -> WarpPlan:
    """The :class:`WarpPlan` of ``compiled`` for fold copies merged as ``owner`` says
    (:func:`~warpspeed.memory.addresses.merged_copies`)."""
    accesses = compiled.accesses
    n_acc, folds = owner.shape
    # the copies whose valid lanes each instruction issues on (merged fold copies), as bitmasks
    # Python integers: a thread folds up to 64 cells, one bit each (more than an int64 holds)
    flat = [0] * (n_acc * folds)
    for r in range(folds):
        for i in owner[:, r].tolist():
            flat[i] |= 1 << r
    serves = [flat[i * folds:(i + 1) * folds] for i in range(n_acc)]
    # the accesses that are the same instructions moved by a constant
    reference: dict[tuple, int] = {}
    ref_of, delta = [], []
    for i, a in enumerate(accesses):
        key = ("affine", a.field.element_bytes, a.linear) if a.linear is not None else ("own", i)
        first = reference.setdefault(key, i)
        ref_of.append(first)
        delta.append(a.constant - accesses[first].constant if a.linear is not None else 0)
    refs = sorted(set(ref_of))
    tables: dict[tuple[int, int, int], int] = {}
    combo_of = np.empty((n_acc, folds), dtype=np.int64)
    for i in range(n_acc):
        for r in range(folds):
            combo_of[i, r] = tables.setdefault((refs.index(ref_of[i]), r, serves[i][r]), len(tables))
    keys = list(tables)
    return WarpPlan(
        references=CompiledKernel(compiled.kernel, tuple(accesses[i] for i in refs)),
        delta=np.array(delta, dtype=np.int64), combo_of=combo_of,
        reference_of=np.array([k[0] for k in keys], dtype=np.int64), fold_of=np.array([k[1] for k in keys], dtype=np.int64),
        serves=np.array([[k[2] >> q & 1 for q in range(folds)] for k in keys], dtype=bool).reshape(len(keys), folds),
        element_bytes=np.array([accesses[refs[k[0]]].field.element_bytes for k in keys], dtype=np.int64))


def block_warp_rows(compiled: CompiledKernel, cells: BlockCells, owner: np.ndarray, warp_size: int,
                    period: int, plan: WarpPlan | None = None,
                    shared: BoundedMemo[dict] | None = None) -> WarpRows:
    """:func:`warp_rows` of the block ``cells`` of ``compiled``, without evaluating every access.

    Accesses with affine addresses of the same element size and the same coefficients of x, y, z
    (a stencil's loads of one field) differ by a constant number of bytes ``delta``: their
    instructions are those of the first of them moved by ``delta``. So only the first one's
    addresses are evaluated; an instruction's group is then its lane pattern relative to its lowest
    address (found once per fold copy and set of issuing lanes) and its lowest address modulo the
    period. ``owner``: :func:`~warpspeed.memory.addresses.merged_copies` of ``cells.offsets``;
    ``plan``: :func:`warp_plan` of both, if at hand. ``shared``: a memo of
    :attr:`WarpRows.derived` by representatives, so that blocks whose representatives are equal
    (many blocks of a ranking: the lanes of a warp see the same pattern) compute what depends on
    them alone once.
    """
    plan = warp_plan(compiled, owner) if plan is None else plan
    n_acc, folds = plan.combo_of.shape
    ref_addresses = _pad_threads(block_addresses(plan.references, cells), warp_size)
    valid = _pad_threads(cells.valid, warp_size)
    addr = ref_addresses[plan.reference_of, plan.fold_of].reshape(len(plan.fold_of), -1, warp_size)
    issue = (plan.serves[:, :, None] & valid[None, :, :]).any(axis=1).reshape(addr.shape)
    tables, warps = addr.shape[0], addr.shape[1]
    big = np.iinfo(np.int64).max
    low = np.where(issue, addr, big).min(axis=2)  # (tables, warps); big: no lane issues
    empty = low == big
    low[empty] = 0
    keys = np.empty((tables, warps, warp_size + 1), dtype=np.int64)
    np.subtract(addr, low[..., None], out=keys[..., :warp_size])
    keys[..., :warp_size][~issue] = -1
    keys[..., warp_size] = plan.element_bytes[:, None]
    first, pattern = distinct_rows(keys.reshape(-1, warp_size + 1))
    pattern = pattern.reshape(tables, warps)
    # every instruction: its pattern and its lowest address moved by its access's delta
    start = low[plan.combo_of] + plan.delta[:, None, None]  # (accesses, folds, warps)
    none = empty[plan.combo_of]
    residue = np.where(none, 0, start % period)
    shift = np.where(none, 0, start - residue)
    codes = pattern[plan.combo_of] * period + residue
    distinct, inverse = distinct_inverse(codes.reshape(-1))
    rel = keys.reshape(-1, warp_size + 1)[first][distinct // period]  # each group's lanes relative to its lowest
    issuing = rel[:, :warp_size] >= 0
    addresses = np.where(issuing, rel[:, :warp_size] + (distinct % period)[:, None], 0)
    element_bytes = rel[:, warp_size].copy()
    derived = {} if shared is None else shared.get(
        (addresses.shape, addresses.tobytes(), issuing.tobytes(), element_bytes.tobytes()), dict)
    return WarpRows(addresses=addresses, lanes=issuing, element_bytes=element_bytes,
                    inverse=inverse.reshape(n_acc, folds * warps), shift=shift.reshape(n_acc, folds * warps),
                    folds=folds, derived=derived)
