"""The batched cell boxes of waves (``wave_cell_arrays``) against the cells of every block of each
part enumerated one by one, and against ``wave_cells`` box by box."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from warpspeed.launch.geometry import make_launch
from warpspeed.memory.wave.geometry import (DIMENSIONS, band_block_ranges, previous_block_ranges, wave_cell_arrays,
                                            wave_cells)


def enumerated_cells(launch, first: int, last: int) -> set[tuple[int, int, int]]:
    """The valid cells of the blocks ``first .. last`` (inclusive), block by block."""
    gx, gy, _ = launch.grid
    cx, cy, cz = launch.cells_per_block
    nx, ny, nz = launch.domain
    cells = set()
    for b in range(first, last + 1):
        bx, by, bz = b % gx, (b // gx) % gy, b // (gx * gy)
        for z in range(bz * cz, min((bz + 1) * cz, nz)):
            for y in range(by * cy, min((by + 1) * cy, ny)):
                for x in range(bx * cx, min((bx + 1) * cx, nx)):
                    cells.add((x, y, z))
    return cells


def box_set(boxes: np.ndarray) -> set[tuple[int, int, int]]:
    """The cells of disjoint boxes, checking that they are disjoint."""
    cells: set[tuple[int, int, int]] = set()
    total = 0
    for (x0, x1), (y0, y1), (z0, z1) in boxes.tolist():
        box = {(x, y, z) for z in range(z0, z1 + 1) for y in range(y0, y1 + 1) for x in range(x0, x1 + 1)}
        total += len(box)
        cells |= box
    assert total == len(cells), "overlapping boxes"
    return cells


sizes = st.sampled_from([1, 2, 3, 5, 8])


@settings(max_examples=60, deadline=None)
@given(domain=st.tuples(st.integers(1, 12), st.integers(1, 12), st.integers(1, 9)),
       block=st.tuples(sizes, sizes, sizes), fold=st.tuples(st.sampled_from([1, 2]), st.just(1), st.sampled_from([1, 2])),
       data=st.data())
def test_parts_are_the_enumerated_cells(domain, block, fold, data):
    launch = make_launch(block, fold, domain)
    total = launch.total_blocks
    waves = []
    for _ in range(3):
        blocks = data.draw(st.integers(1, total))
        waves.append((launch, data.draw(st.integers(0, total - blocks)), blocks))
    for (_, first, blocks), arrays in zip(waves, wave_cell_arrays(waves)):
        wave = enumerated_cells(launch, first, first + blocks - 1)
        assert box_set(arrays.wave) == wave and arrays.lups == len(wave)
        for d, rng in previous_block_ranges(launch, first).items():
            expected = set() if rng is None else enumerated_cells(launch, *rng)
            assert box_set(arrays.previous[d]) == expected
            assert arrays.previous_lups[d] == len(expected)
        bands = [enumerated_cells(launch, *rng) for rng in band_block_ranges(launch, first, blocks)]
        assert [box_set(b) for b in arrays.bands] == bands


def test_same_boxes_as_wave_cells_on_large_grids():
    """Waves of grids of thousands of blocks per plane, across row and plane boundaries and at the
    grid's start: the boxes of ``wave_cells``, in its order."""
    launches = [make_launch((32, 8, 4), (1, 1, 1), (2048, 2048, 2048)), make_launch((64, 4, 4), (1, 2, 1), (640, 512, 500)),
                make_launch((1, 1024, 1), (1, 1, 1), (2048, 2048, 2048)), make_launch((256, 1, 4), (1, 1, 2), (300, 7, 9))]
    waves = []
    for launch in launches:
        gx, gy, _ = launch.grid
        for first, blocks in ((0, 264), (gx * gy - 100, 264), (gx - 3, 7), (gx * gy * 2 + gx, gx * gy + 5), (5, 1)):
            if 0 <= first and first + blocks <= launch.total_blocks:
                waves.append((launch, first, blocks))
    for (launch, first, blocks), arrays in zip(waves, wave_cell_arrays(waves)):
        cells = wave_cells(launch, first, blocks)
        assert arrays.wave.tolist() == [list(map(list, b)) for b in cells.wave]
        for d in DIMENSIONS:
            assert arrays.previous[d].tolist() == [list(map(list, b)) for b in cells.previous[d]]
        assert [b.tolist() for b in arrays.bands] == [[list(map(list, b)) for b in band] for band in cells.bands]
        assert (arrays.lups, tuple(arrays.previous_lups)) == (cells.lups, tuple(cells.previous_lups))
