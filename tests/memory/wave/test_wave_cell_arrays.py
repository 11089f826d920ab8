"""The batched cell boxes of waves (``wave_cell_arrays``) and of block ranges (``launch_range_cells``)
against the cells of every block enumerated one by one, and on large grids against the boxes a
scalar reference gives each part's block range (the five boxes of the module docstring, below),
box by box; ``wave_cells`` is the same as lists."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from warpspeed.launch.geometry import Launch, make_launch
from warpspeed.errors import LaunchError
from warpspeed.memory.wave.geometry import DIMENSIONS, launch_range_cells, wave_cell_arrays, wave_cells

Box = tuple[tuple[int, int], tuple[int, int], tuple[int, int]]


def linear_range_boxes(first: int, last: int, grid: tuple[int, int, int]) -> list[Box]:
    """Boxes (inclusive block-index ranges per dimension) whose union is exactly the blocks with
    linear index ``first .. last`` (x fastest); at most five disjoint boxes."""
    gx, gy, gz = grid
    if first > last:
        return []
    if not 0 <= first <= last < gx * gy * gz:
        raise LaunchError(f"block range {first}..{last} lies outside the grid {grid}")
    sx, sy, sz = first % gx, (first // gx) % gy, first // (gx * gy)
    ex, ey, ez = last % gx, (last // gx) % gy, last // (gx * gy)
    if sz == ez and sy == ey:
        return [((sx, ex), (sy, sy), (sz, sz))]  # x0 <= x1: first <= last within one row
    if sz == ez:
        candidates = [(sx, gx - 1, sy, sy, sz, sz), (0, gx - 1, sy + 1, ey - 1, sz, sz), (0, ex, ey, ey, sz, sz)]
    else:
        candidates = [(sx, gx - 1, sy, sy, sz, sz), (0, gx - 1, sy + 1, gy - 1, sz, sz),
                      (0, gx - 1, 0, gy - 1, sz + 1, ez - 1), (0, gx - 1, 0, ey - 1, ez, ez), (0, ex, ey, ey, ez, ez)]
    boxes: list[Box] = [((x0, x1), (y0, y1), (z0, z1)) for x0, x1, y0, y1, z0, z1 in candidates
                        if x0 <= x1 and y0 <= y1 and z0 <= z1]
    return boxes


def cell_boxes(launch: Launch, block_boxes: list[Box]) -> list[Box]:
    """The valid cells of block boxes: block ``b`` covers cells ``[b*C, (b+1)*C)`` with
    ``C = blockDim * fold``, clipped to ``0 <= cell < domain`` (inclusive bounds)."""
    (cx, cy, cz), (nx, ny, nz) = launch.cells_per_block, launch.domain
    result: list[Box] = []
    for (x0, x1), (y0, y1), (z0, z1) in block_boxes:
        lx, hx = x0 * cx, min((x1 + 1) * cx, nx) - 1
        ly, hy = y0 * cy, min((y1 + 1) * cy, ny) - 1
        lz, hz = z0 * cz, min((z1 + 1) * cz, nz) - 1
        if lx <= hx and ly <= hy and lz <= hz:
            result.append(((lx, hx), (ly, hy), (lz, hz)))
    return result


def part_ranges(launch, first: int, blocks: int) -> tuple[dict, list]:
    """The block ranges of the previous-neighbour sets (the block, the row and the plane launched
    before the wave; none along an axis of one block or for a wave at block 0) and of the non-empty
    x and y bands (the ``min(blocks, gx)`` blocks before the wave within its row, only when the wave
    is shorter than a row; the ``min(gy, ceil(blocks / gx))`` block rows before it within its plane),
    from the module docstring of ``warpspeed.memory.wave.geometry``."""
    gx, gy, _ = launch.grid
    previous = {}
    for d, axis, stride in zip(DIMENSIONS, range(3), (1, gx, gx * gy)):
        empty = launch.grid[axis] == 1 or first == 0
        previous[d] = None if empty else (max(0, first - stride), first - 1)
    rows = min(gy, -(-blocks // gx))
    bands = []
    if blocks < gx:
        bands.append((max(first - first % gx, first - blocks), first - 1))
    bands.append((max(first - first % (gx * gy), first - rows * gx), first - 1))
    return previous, [b for b in bands if b[0] <= b[1]]


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
        previous, band_ranges = part_ranges(launch, first, blocks)
        for d, rng in previous.items():
            expected = set() if rng is None else enumerated_cells(launch, *rng)
            assert box_set(arrays.previous[d]) == expected
            assert arrays.previous_lups[d] == len(expected)
        bands = [enumerated_cells(launch, *rng) for rng in band_ranges]
        assert [box_set(b) for b in arrays.bands] == bands


def test_same_boxes_as_the_ranges_on_large_grids():
    """Waves of grids of thousands of blocks per plane, across row and plane boundaries and at the
    grid's start: each part the boxes of its block range (``linear_range_boxes`` clipped by
    ``cell_boxes``), in their order; ``wave_cells`` the same boxes as lists."""
    launches = [make_launch((32, 8, 4), (1, 1, 1), (2048, 2048, 2048)), make_launch((64, 4, 4), (1, 2, 1), (640, 512, 500)),
                make_launch((1, 1024, 1), (1, 1, 1), (2048, 2048, 2048)), make_launch((256, 1, 4), (1, 1, 2), (300, 7, 9))]
    waves = []
    for launch in launches:
        gx, gy, _ = launch.grid
        for first, blocks in ((0, 264), (gx * gy - 100, 264), (gx - 3, 7), (gx * gy * 2 + gx, gx * gy + 5), (5, 1)):
            if 0 <= first and first + blocks <= launch.total_blocks:
                waves.append((launch, first, blocks))

    def boxes(launch, rng):
        return [] if rng is None else [list(map(list, b)) for b in cell_boxes(launch, linear_range_boxes(*rng, launch.grid))]

    for (launch, first, blocks), arrays in zip(waves, wave_cell_arrays(waves)):
        previous, band_ranges = part_ranges(launch, first, blocks)
        assert arrays.wave.tolist() == boxes(launch, (first, first + blocks - 1))
        for d in DIMENSIONS:
            assert arrays.previous[d].tolist() == boxes(launch, previous[d])
        assert [b.tolist() for b in arrays.bands] == [boxes(launch, rng) for rng in band_ranges]
        cells = wave_cells(launch, first, blocks)
        assert [list(map(list, b)) for b in cells.wave] == arrays.wave.tolist()
        assert {d: [list(map(list, b)) for b in cells.previous[d]] for d in DIMENSIONS} == {
            d: arrays.previous[d].tolist() for d in DIMENSIONS}
        assert [[list(map(list, b)) for b in band] for band in cells.bands] == [b.tolist() for b in arrays.bands]
        assert (cells.lups, tuple(cells.previous_lups)) == (arrays.lups, tuple(arrays.previous_lups))


def test_a_wave_outside_its_grid_is_refused():
    launch = make_launch((32, 8, 4), (1, 1, 1), (64, 64, 64))  # 2 x 8 x 16 blocks
    for first, blocks in ((-1, 4), (250, 10)):
        with pytest.raises(LaunchError, match="outside the grid"):
            wave_cell_arrays([(launch, first, blocks)])


@settings(max_examples=60, deadline=None)
@given(domain=st.tuples(st.integers(1, 12), st.integers(1, 12), st.integers(1, 9)),
       block=st.tuples(sizes, sizes, sizes), fold=st.tuples(st.sampled_from([1, 2]), st.just(1), st.sampled_from([1, 2])),
       data=st.data())
def test_block_ranges_are_the_enumerated_cells(domain, block, fold, data):
    """A group of block ranges (a shader array's blocks): their boxes cover exactly the cells of the
    ranges' blocks, enumerated one by one, and an empty range adds none."""
    launch = make_launch(block, fold, domain)
    total = launch.total_blocks
    ranges = []
    for _ in range(data.draw(st.integers(0, 3))):
        first = data.draw(st.integers(0, total - 1))
        ranges.append((first, data.draw(st.integers(first - 1, total - 1))))
    expected = set().union(*(enumerated_cells(launch, first, last) for first, last in ranges))
    cells = launch_range_cells(launch, ranges)
    boxes = [box_set(cells[i:i + 1]) for i in range(cells.shape[0])]
    assert set().union(*boxes) == expected
    assert sum(len(b) for b in boxes) == sum(len(enumerated_cells(launch, *r)) for r in ranges)


def test_block_ranges_on_a_large_grid_and_outside_it():
    """On a 64 x 256 x 512 grid: the boxes of the scalar reference, range by range in order; a range
    beyond the grid is refused."""
    launch = make_launch((32, 8, 4), (1, 1, 1), (2048, 2048, 2048))
    ranges = [(0, 263), (16384 - 100, 16384 + 163), (61, 67), (5, 4), (40000, 40000 + 16389)]
    expected = [list(map(list, b)) for rng in ranges for b in cell_boxes(launch, linear_range_boxes(*rng, launch.grid))]
    assert launch_range_cells(launch, ranges).tolist() == expected
    with pytest.raises(LaunchError, match="outside the grid"):
        launch_range_cells(launch, [(0, launch.total_blocks)])
