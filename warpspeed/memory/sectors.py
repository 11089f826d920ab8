"""DRAM sector cost of a block's rows: sectors a block covers only in part.

DRAM and the L2 move data in 32-byte sectors (Nsight Compute Kernel Profiling Guide, memory
chart). A block row of a field covers whole sectors in its middle and, where the row does not start
and end on a sector boundary, a sector at either end that the neighbouring block in x covers too.
Measured on an NVIDIA H200 (``fits/data/H200/``), such a shared sector is not shared in DRAM:

* a 19-array copy in blocks 4 cells wide (32 B rows starting 8 B into a sector) reads 2.76x and
  writes 1.78x the compulsory DRAM volume (Nsight Compute ``dram__bytes_read.sum``,
  ``dram__bytes_write.sum``; the L2 volumes are as the block-level model counts them), and the same
  kernel in blocks 128 wide moves 1.07x and 1.02x;
* the DRAM bandwidth of multi-array copies (4-38 arrays, tall or cubic blocks, 4- and 8-byte
  elements) falls with the block's row width as the sector count of this module predicts with
  each partly covered sector read once for the block that loads it (cost 1) and read, merged and
  written back for each block that stores into it (cost 2: HBM with ECC writes whole sectors, so a
  partial write is a read-modify-write): 6.8 % mean error over 95 rows.

:func:`sector_cost` gives, for one field and one kind of access (loads or stores), the DRAM
sector transfers per byte the block row touches, relative to whole sectors:
``(full sectors + cost x partial sectors) x 32 B / bytes touched``, averaged over the blocks along
x (their rows start at different offsets in a sector when the block's width in bytes is not a
multiple of 32). Rows that start and end on sector boundaries give exactly 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import sympy

from warpspeed.kernel.description import byte_address
from warpspeed.kernel.expressions import X, Y, Z
from warpspeed.units import SECTOR_BYTES

if TYPE_CHECKING:
    from warpspeed.kernel.description import Access, Field, Kernel
    from warpspeed.memory.dram import DramVolumes

#: Blocks along x are placed this many block widths away from the domain's origin, so that the
#: halo of the first evaluated block does not reach below address 0 (the address arithmetic is
#: affine; only the offsets within a sector matter).
_ORIGIN_BLOCKS = 64


def _accesses(kernel: "Kernel", field: str, kind: str) -> tuple["Access", ...]:
    """The accesses of ``field`` of ``kind`` ("load" or "store") in kernel order."""
    return tuple(a for a in (kernel.stores if kind == "store" else kernel.loads) if a.field == field)


@lru_cache(maxsize=1024)
def _row_addresses(f: "Field", accesses: tuple["Access", ...]) -> tuple[tuple[int, int], ...]:
    """Per access of the field ``f`` (``accesses``): (byte address at x = y = z = 0, bytes per x
    step). A pure function of the field and its accesses (shared by the kernels of a code
    generator's foldings, which differ in registers only)."""
    out = []
    for a in accesses:
        expr = sympy.expand(byte_address(f, a).subs({Y: 0, Z: 0}))
        base = expr.subs(X, 0)
        step = expr.subs(X, 1) - base
        if not (base.is_Integer and step.is_Integer and sympy.expand(expr - base - step * X) == 0):
            return ()  # not affine in x (floor/Mod indexing): no sector structure assumed
        out.append((int(base), int(step)))
    return tuple(out)


@dataclass(frozen=True)
class SectorCoverage:
    """The sectors one field's loads or stores touch in a block row, summed over the rows' offsets
    in a sector (the blocks along x): the bytes the rows touch, the sectors they cover whole and
    those they cover only in part (the neighbouring block in x covers the rest)."""

    touched_bytes: int
    full_sectors: int
    partial_sectors: int

    def cost(self, partial_cost: float) -> float:
        """DRAM sector transfers per touched byte relative to whole sectors, a partly covered
        sector priced at ``partial_cost`` transfers (1 for rows without a sector structure)."""
        if self.touched_bytes <= 0:
            return 1.0
        return (self.full_sectors + partial_cost * self.partial_sectors) * SECTOR_BYTES / self.touched_bytes


#: The coverage of rows without a sector structure (no accesses, or not affine in x): cost 1.
NO_COVERAGE = SectorCoverage(0, 0, 0)


@lru_cache(maxsize=4096)
def _coverage(f: "Field", accesses: tuple["Access", ...], row_cells: int, element_bytes: int) -> SectorCoverage:
    rows = _row_addresses(f, accesses)
    if not rows or row_cells < 1:
        return NO_COVERAGE
    block_bytes = row_cells * element_bytes
    period = SECTOR_BYTES // math.gcd(block_bytes, SECTOR_BYTES)
    cells = np.arange(row_cells, dtype=np.int64)
    touched = full = partial = 0
    for i in range(period):
        x0 = (_ORIGIN_BLOCKS + i) * row_cells
        starts = np.unique(np.concatenate([base + step * (x0 + cells) for base, step in rows]))
        # every byte the row touches, then the bytes per sector
        touched_bytes = np.unique((starts[:, None] + np.arange(element_bytes, dtype=np.int64)[None, :]).ravel())
        _, per_sector = np.unique(touched_bytes // SECTOR_BYTES, return_counts=True)
        whole = int(np.count_nonzero(per_sector == SECTOR_BYTES))
        full += whole
        partial += int(per_sector.size) - whole
        touched += int(touched_bytes.size)
    return SectorCoverage(touched, full, partial)


def sector_coverage(kernel: "Kernel", field: str, kind: str, row_cells: int) -> SectorCoverage:
    """The sectors ``field``'s ``kind`` accesses ("load" or "store") touch in a block row of
    ``row_cells`` cells (threads in x times the fold in x; module docstring)."""
    f = kernel.field(field)
    return _coverage(f, _accesses(kernel, field, kind), int(row_cells), f.element_bytes)


def sector_cost(kernel: "Kernel", field: str, kind: str, row_cells: int, partial_cost: float) -> float:
    """DRAM sector transfers per touched byte of ``field``'s ``kind`` accesses ("load" or "store")
    in a block row of ``row_cells`` cells (threads in x times the fold in x), relative to whole
    sectors (dimensionless, >= 1 for ``partial_cost`` >= 1; module docstring). Accesses that are
    not affine in x give 1."""
    return sector_coverage(kernel, field, kind, row_cells).cost(float(partial_cost))


@dataclass(frozen=True)
class FieldSectors:
    """One field's DRAM demand by sector coverage: its load and store volumes less the capacity
    curve's partial-store reads (bytes per lup; the sector cost prices every partly covered sector,
    so those reads of the same sectors are not counted a second time) and the coverage of its rows."""

    field: str
    load_bytes_per_lup: float
    store_bytes_per_lup: float
    load: SectorCoverage
    store: SectorCoverage


@dataclass(frozen=True)
class DramSectors:
    """The DRAM demand of a configuration by sector coverage (computed once by the predictor):
    per field, the volume and the sectors its block rows cover whole and in part; ``total_bytes_per_lup``
    the whole DRAM volume (load plus store, bytes per lup)."""

    fields: tuple[FieldSectors, ...]
    total_bytes_per_lup: float

    def factor(self, load_cost: float, store_cost: float) -> float:
        """The factor on the time of the DRAM volume when a partly covered sector costs
        ``load_cost`` transfers for a load and ``store_cost`` for a store (dimensionless; 1 when
        both are 1, the mechanism off, or for rows that start and end on sector boundaries):
        each field's volume weighted by its rows' sector cost, over the whole volume."""
        if self.total_bytes_per_lup <= 0 or (load_cost == 1.0 and store_cost == 1.0):
            return 1.0
        weighted = 0.0
        for f in self.fields:
            if f.load_bytes_per_lup:
                weighted += f.load_bytes_per_lup * f.load.cost(load_cost)
            if f.store_bytes_per_lup:
                weighted += f.store_bytes_per_lup * f.store.cost(store_cost)
        return weighted / self.total_bytes_per_lup


def dram_sectors(kernel: "Kernel", dram: "DramVolumes", row_cells: int,
                 memo: dict[tuple[str, str, int], SectorCoverage] | None = None) -> DramSectors:
    """The sector coverage of ``dram``'s volume per field (:class:`DramSectors`) for block rows
    of ``row_cells`` cells; ``memo``: the coverages of ``kernel`` found so far, by (field, kind,
    row cells) (a predictor keeps one, so that a ranking does not hash the kernel per configuration)."""
    memo = {} if memo is None else memo

    def coverage(name: str, kind: str) -> SectorCoverage:
        key = (name, kind, row_cells)
        if key not in memo:
            memo[key] = sector_coverage(kernel, name, kind, row_cells)
        return memo[key]

    fields = []
    for f in dram.fields:
        name = f.field
        load = f.load_bytes_per_lup - f.partial_store_read_bytes_per_lup
        store = f.store_bytes_per_lup - f.partial_store_read_bytes_per_lup
        fields.append(FieldSectors(name, load, store, coverage(name, "load") if load else NO_COVERAGE,
                                   coverage(name, "store") if store else NO_COVERAGE))
    return DramSectors(tuple(fields), dram.load_bytes_per_lup + dram.store_bytes_per_lup)
