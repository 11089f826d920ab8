"""Block-level unique footprints: L2 -> L1 and L1 -> L2 volumes.

Model: Ernst, Holzer, Hager, Knorr, Wellein: "Analytical Performance Estimation during Code
Generation on Modern GPUs", Journal of Parallel and Distributed Computing, 2023, section 4.3.

Threads of one block share the L1, so what a block loads from L2 at least once is its unique
footprint of 32 B sectors (the L1 transfer granularity), per field (fields never alias).
The L1 allocates 128 B lines; the unique lines give the block's L1 allocation. The L1 is
write-through: every store instruction sends its sectors to L2, counted per warp
instruction, in the device's write granularity (``Device.l1.store_granule``: the 32 B sector on
NVIDIA, 64 B byte-masked write requests on AMD, whose first level has 128 B lines). The "L1 load volume" is the upper bound without any reuse between
instructions: every load instruction's per-warp unique sectors.

All volumes are bytes per lattice update (lup) of the representative block, except
``l1_alloc_bytes_per_block``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from warpspeed.memory.addresses import BlockCells, CompiledKernel, block_addresses, instruction_lanes
from warpspeed.memory.first_touch import FirstTouches
from warpspeed.memory.warps import WarpRows
from warpspeed.hardware.device import Device


@dataclass(frozen=True)
class FieldFootprint:
    """Block-level volumes of one field, bytes per lup (allocation: bytes per block)."""

    l2_load_bytes_per_lup: float  # unique sectors of the block's loads (compulsory L2 -> L1)
    l2_store_bytes_per_lup: float  # write-through sectors, per warp store instruction
    l1_load_bytes_per_lup: float  # no reuse between instructions: per-warp unique sectors
    l1_alloc_bytes_per_block: int  # unique 128 B lines of the block's loads x line size


@dataclass(frozen=True)
class BlockFootprint:
    """Block-level volumes per field and in total."""

    per_field: dict[str, FieldFootprint]
    lups_per_block: int  # valid cells of the representative block

    @property
    def l2_load_bytes_per_lup(self) -> float:
        return sum(f.l2_load_bytes_per_lup for f in self.per_field.values())

    @property
    def l2_store_bytes_per_lup(self) -> float:
        return sum(f.l2_store_bytes_per_lup for f in self.per_field.values())

    @property
    def l1_load_bytes_per_lup(self) -> float:
        return sum(f.l1_load_bytes_per_lup for f in self.per_field.values())

    @property
    def l1_alloc_bytes_per_block(self) -> int:
        return sum(f.l1_alloc_bytes_per_block for f in self.per_field.values())


def _granules(addr: np.ndarray, element_bytes: int, granule: int) -> np.ndarray:
    """Granule indices touched by elements at ``addr`` (first and last byte), stacked on a new
    trailing axis of length 1 or 2."""
    first = addr // granule
    last = (addr + element_bytes - 1) // granule
    if np.array_equal(first, last):
        return first[..., None]
    return np.stack([first, last], axis=-1)


#: Largest value span counted with a dense bitmap instead of sorting (1 byte per value, so
#: at most 8 MiB of scratch memory); wider spans fall back to np.unique.
BITMAP_SPAN_LIMIT = 1 << 23


def _unique_count(values: np.ndarray) -> int:
    """Number of distinct integers in ``values`` (bitmap when the span is small, else sort)."""
    if values.size == 0:
        return 0
    lo = int(values.min())
    span = int(values.max()) - lo + 1
    if span <= BITMAP_SPAN_LIMIT:
        seen = np.zeros(span, dtype=bool)
        seen[(values - lo).ravel()] = True
        return int(np.count_nonzero(seen))
    return int(np.unique(values).size)


def _per_warp_unique(granules: np.ndarray, valid: np.ndarray, warp_size: int) -> int:
    """Sum over rows and warps of the distinct valid granules.

    ``granules``: ``(rows, threads, k)``; ``valid``: ``(rows, threads)``.
    """
    rows, threads, k = granules.shape
    pad = (-threads) % warp_size
    g = np.where(valid[..., None], granules, -1)
    if pad:
        g = np.pad(g, ((0, 0), (0, pad), (0, 0)), constant_values=-1)
    g = g.reshape(-1, warp_size * k)
    g.sort(axis=1)
    distinct = g != -1
    distinct[:, 1:] &= g[:, 1:] != g[:, :-1]
    return int(distinct.sum())


def _field_footprint(load_sectors: int, store_granules: int, l1_load_sectors: int, load_lines: int,
                     device: Device, lups: int) -> FieldFootprint:
    """One field's volumes from its counts in the block: the distinct sectors and lines of its
    loads, the per-warp distinct sectors of its loads and the store granules of its stores."""
    l1 = device.l1
    return FieldFootprint(
        l2_load_bytes_per_lup=load_sectors * l1.sector_bytes / lups,
        l2_store_bytes_per_lup=store_granules * l1.store_granule / lups,
        l1_load_bytes_per_lup=l1_load_sectors * l1.sector_bytes / lups,
        l1_alloc_bytes_per_block=load_lines * l1.line_bytes,
    )


def block_footprint(compiled: CompiledKernel, cells: BlockCells, device: Device,
                    addresses: np.ndarray | None = None, lanes: np.ndarray | None = None,
                    warps: WarpRows | None = None, touches: FirstTouches | None = None) -> BlockFootprint:
    """Unique-footprint volumes of the block ``cells`` per field (see the module docstring).

    ``addresses``, ``lanes`` and ``warps`` may pass what :func:`warpspeed.memory.l1.l1_cycles`
    takes too (block addresses, instruction lanes, the grouped instructions); with ``warps`` every
    count is taken from the groups (:mod:`warpspeed.memory.warps`), the same integers at a cost
    that does not grow with the domain. ``touches``: the first touches of the loads of ``warps``
    (:func:`~warpspeed.memory.first_touch.first_touches`), if at hand: their distinct sectors are
    the loads' unique sectors where every element lies within a sector
    (:meth:`~warpspeed.memory.first_touch.FirstTouches.field_granules`).
    """
    if warps is not None:
        return _grouped_footprint(compiled, cells, device, warps, touches)
    addr = block_addresses(compiled, cells) if addresses is None else addresses
    lups = cells.lups
    sector = device.l1.sector_bytes
    line = device.l1.line_bytes
    store_granule = device.l1.store_granule
    valid = cells.valid
    issued = instruction_lanes(compiled, cells) if lanes is None else lanes  # merged fold-copy loads issue nothing
    result: dict[str, FieldFootprint] = {}
    for name, loads, stores_at in compiled.field_accesses:
        load_idx, store_idx = list(loads), list(stores_at)  # lists: index arrays, not tuples of axes
        if not load_idx and not store_idx:
            result[name] = FieldFootprint(0.0, 0.0, 0.0, 0)
            continue
        elem = compiled.accesses[min(load_idx + store_idx)].field.element_bytes
        load_sectors = load_lines = l1_load = stores = 0
        if load_idx:
            a = addr[load_idx]  # (loads, folds, threads)
            va = np.broadcast_to(valid, a.shape)
            sectors = _granules(a, elem, sector)
            lines = _granules(a, elem, line)
            load_sectors = _unique_count(sectors[va])
            load_lines = _unique_count(lines[va])
            l1_load = _per_warp_unique(sectors.reshape(-1, a.shape[-1], sectors.shape[-1]),
                                       issued[load_idx].reshape(-1, a.shape[-1]), device.warp_size)
        if store_idx:
            a = addr[store_idx]
            va = np.broadcast_to(valid, a.shape)
            granules = _granules(a, elem, store_granule)
            stores = _per_warp_unique(granules.reshape(-1, a.shape[-1], granules.shape[-1]),
                                      va.reshape(-1, a.shape[-1]), device.warp_size)
        result[name] = _field_footprint(load_sectors, stores, l1_load, load_lines, device, lups)
    return BlockFootprint(per_field=result, lups_per_block=lups)


def _grouped_footprint(compiled: CompiledKernel, cells: BlockCells, device: Device, warps: WarpRows,
                       touches: FirstTouches | None = None) -> BlockFootprint:
    """:func:`block_footprint` from the grouped instructions. A merged fold-copy load issues on no
    lane and its earlier twin on the lanes of both, at the same addresses, so the unions over the
    issuing lanes are the unions over the valid cells; stores issue on their valid lanes."""
    lups = cells.lups
    sector, line, store_granule = device.l1.sector_bytes, device.l1.line_bytes, device.l1.store_granule
    field_id, _ = compiled.field_ids
    result: dict[str, FieldFootprint] = {}
    for name, loads, stores_at in compiled.field_accesses:
        load_idx, store_idx = list(loads), list(stores_at)  # lists: index arrays, not tuples of axes
        l1_load = stores = 0
        if load_idx:
            l1_load = int(warps.distinct_granules(sector)[warps.inverse[load_idx]].sum())
        if store_idx:
            stores = int(warps.distinct_granules(store_granule)[warps.inverse[store_idx]].sum())
        counted = None
        if touches is not None and load_idx:
            counted = touches.field_granules(int(field_id[load_idx[0]]), (sector, line))
        sectors, lines = counted if counted is not None else warps.union_granules(load_idx, (sector, line))
        result[name] = _field_footprint(sectors, stores, l1_load, lines, device, lups)
    return BlockFootprint(per_field=result, lups_per_block=lups)
