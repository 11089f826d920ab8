"""DRAM sector cost of a block's rows (warpspeed.memory.sectors), counted by hand.

A 1D three-point kernel with one ghost cell: ``dst[x + 1] = src[x] + src[x + 1] + src[x + 2]``,
arrays at a 256-byte aligned address. A block row of ``n`` doubles stores bytes
``[8 n i + 8, 8 n i + 8 + 8 n)`` (relative to the array) and loads ``[8 n i, 8 n i + 8 n + 16)``.
"""

from __future__ import annotations

import pytest

from warpspeed import Field, Kernel, load, store
from warpspeed.kernel.description import X
import sympy
from warpspeed.memory.sectors import sector_cost

N = 1 << 12


def _kernel() -> Kernel:
    fields = (Field("src", 8, (N + 2,)), Field("dst", 8, (N + 2,)))
    return Kernel("three", fields, (load("src", X), load("src", X + 1), load("src", X + 2), store("dst", X + 1)),
                  (N, 1, 1))


@pytest.mark.parametrize("cells, load_cost, store_cost", [
    # 8 B rows: the store covers 8 B of one sector (2 x 32 / 8); the loads 24 B at offsets 0, 8,
    # 16, 24 of a sector: two of four rows cross a boundary: (1 + 1 + 2 + 2) x 32 / (4 x 24)
    (1, 6 * 32 / 96, 2 * 32 / 8),
    # 32 B rows from 8 B in: two partly covered sectors per store row; loads 48 B from a boundary
    (4, 2 * 32 / 48, 2 * 2 * 32 / 32),
    # 64 B rows: store 1 full + 2 partial; loads 80 B from a boundary: 2 full + 1 partial
    (8, 3 * 32 / 80, (1 + 2 * 2) * 32 / 64),
    # 24 B rows (period 4): store rows [8, 32), [32, 56), [56, 80), [80, 104): 1, 1, 2, 2 partial
    (3, None, (1 + 1 + 2 + 2) * 2 * 32 / (4 * 24)),
])
def test_sector_cost_by_hand(cells, load_cost, store_cost):
    k = _kernel()
    if load_cost is not None:
        assert sector_cost(k, "src", "load", cells, 1.0) == pytest.approx(load_cost)
    assert sector_cost(k, "dst", "store", cells, 2.0) == pytest.approx(store_cost)


def test_aligned_rows_cost_one_and_cost_one_turns_it_off():
    fields = (Field("src", 8, (N,)), Field("dst", 8, (N,)))
    k = Kernel("copy", fields, (load("src", X), store("dst", X)), (N, 1, 1))
    for cells in (4, 8, 32, 256):
        assert sector_cost(k, "src", "load", cells, 1.0) == 1.0
        assert sector_cost(k, "dst", "store", cells, 2.0) == 1.0
    assert sector_cost(_kernel(), "dst", "store", 4, 1.0) == pytest.approx(2 * 32 / 32)


def test_non_affine_rows_are_left_alone():
    fields = (Field("src", 8, (N,)), Field("dst", 8, (N,)))
    k = Kernel("gather", fields, (load("src", sympy.floor(X / 2)), store("dst", X)), (N, 1, 1))
    assert sector_cost(k, "src", "load", 4, 1.0) == 1.0


def test_the_dram_demand_prices_its_sectors():
    """The DRAM volume by sector coverage: 8 B of loads in rows covering 1 whole and 2 partial sectors
    per 64 touched bytes, 8 B of stores in rows covering 2 whole sectors: a partial load costs 1
    transfer, a partial store 2 (hand count: (1 + 2 c) 32 / 64 per load byte, 1 per store byte)."""
    from warpspeed.memory.sectors import DramSectors, FieldSectors, SectorCoverage

    demand = DramSectors((FieldSectors("a", 8.0, 0.0, SectorCoverage(64, 1, 2), SectorCoverage(0, 0, 0)),
                          FieldSectors("b", 0.0, 8.0, SectorCoverage(0, 0, 0), SectorCoverage(64, 2, 0))), 16.0)
    assert demand.factor(1.0, 1.0) == 1.0  # the mechanism off
    assert demand.factor(1.0, 2.0) == pytest.approx((8 * 96 / 64 + 8 * 1.0) / 16)
    assert demand.factor(2.0, 2.0) == pytest.approx((8 * 160 / 64 + 8 * 1.0) / 16)
