"""Counts as sums of box sizes (fields whose maps never overlap) against the compressed grid of
``box_field_counts`` and against points enumerated one by one, and the fallback to the grid where
the boxes of a set overlap after all."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from warpspeed.launch.geometry import make_launch
from warpspeed.memory.wave import box_counts
from warpspeed.memory.wave.box_sums import rows_separated, separating_axis
from warpspeed.memory.wave.boxmaps import AxisMap, BoxMap, MapStack
from warpspeed.memory.wave.geometry import DIMENSIONS, wave_cell_arrays

LINE = 32  # bytes per line; 8-byte elements


def component_map(q: int, dx: int, dy: int, dz: int) -> BoxMap:
    """Component ``q`` of a 4-D field (component slowest), read at the cell shifted by (dx, dy, dz)."""
    return BoxMap((AxisMap("const", -1, q), AxisMap("shift", 2, dz), AxisMap("shift", 1, dy),
                   AxisMap("line", 0, 8 * dx + 64, 8, LINE)))


def plane_map(dx: int, dy: int) -> BoxMap:
    """A 2-D field read in a 3-D kernel: every z plane reads the same lines."""
    return BoxMap((AxisMap("shift", 1, dy), AxisMap("line", 0, 8 * dx + 64, 8, LINE)))


def requests_for(stacks, waves):
    return [(stacks, a.wave, a.previous, a.bands) for a in wave_cell_arrays(waves)]


def enumerated(stacks, request):
    """The counts by enumerating every line of every set (reference, no boxes merged)."""
    _, wave, previous, bands = request

    def lines(stack: MapStack, cells: np.ndarray) -> set:
        found = set()
        for box in stack.image(np.asarray(cells).reshape(-1, 3, 2)).tolist():
            ranges = [range(lo, hi + 1) for lo, hi in box]
            grid = np.stack(np.meshgrid(*ranges, indexing="ij"), axis=-1).reshape(-1, len(ranges))
            found.update(map(tuple, grid.tolist()))
        return found

    load, store = lines(stacks.loads, wave), lines(stacks.stores, wave)
    touched = {d: lines(stacks.both, previous[d]) for d in DIMENSIONS}
    covered: set = set()
    overlap = []
    for d in DIMENSIONS:
        shared = load & touched[d]
        overlap.append(len(shared - covered))
        covered |= shared
    band = sum(len(lines(stacks.loads, b)) + len(lines(stacks.stores, b)) for b in bands)
    return (len(load), len(store), *overlap, *(len(load | touched[d]) for d in DIMENSIONS), band)


def as_tuple(c):
    return (c.load, c.store, *c.overlap, *c.layer, c.band)


maps = st.tuples(st.integers(-2, 2), st.integers(-2, 2), st.integers(-2, 2))


@settings(max_examples=40, deadline=None)
@given(offsets=st.lists(maps, min_size=1, max_size=5), stores=st.lists(maps, max_size=2),
       domain=st.tuples(st.integers(4, 40), st.integers(2, 12), st.integers(2, 9)),
       block=st.sampled_from([(4, 2, 1), (8, 1, 2), (2, 2, 2), (16, 1, 1)]), data=st.data())
def test_sums_equal_the_grid_and_enumeration(offsets, stores, domain, block, data):
    loads = [component_map(q, *o) for q, o in enumerate(offsets)]
    stored = [component_map(10 + q, *o) for q, o in enumerate(stores)]
    stacks = box_counts.field_stacks(loads, stored, 4)
    assert stacks.separated
    launch = make_launch(block, (1, 1, 1), domain)
    total = launch.total_blocks
    waves = []
    for _ in range(3):
        blocks = data.draw(st.integers(1, total))
        waves.append((launch, data.draw(st.integers(0, total - blocks)), blocks))
    requests = requests_for(stacks, waves)
    summed = box_counts.box_counts_many(requests)
    for request, counts in zip(requests, summed):
        assert counts == box_counts.box_field_counts(*request)
        assert as_tuple(counts) == enumerated(stacks, request)


def test_overlapping_boxes_go_to_the_grid(monkeypatch):
    """A 2-D field read in a 3-D kernel: one map (separated rows) whose wave spans two z planes of
    the same rows, so two boxes of a set share their lines; the grid counts it."""
    stacks = box_counts.field_stacks([plane_map(0, 0)], [], 2)
    assert stacks.separated
    launch = make_launch((8, 4, 1), (1, 1, 1), (16, 8, 6))
    waves = [(launch, 6, 6), (launch, 13, 3)]  # the first wave crosses a plane boundary
    requests = requests_for(stacks, waves)
    grid_calls = []
    count_together = box_counts._count_together

    def counted_on_grid(batch):
        grid_calls.append(len(batch))
        return count_together(batch)

    monkeypatch.setattr(box_counts, "_count_together", counted_on_grid)
    counts = box_counts.box_counts_many(requests)
    assert counts == [box_counts.box_field_counts(*r) for r in requests]
    assert sum(grid_calls) >= 1  # at least the wave across the plane boundary


def test_rows_separated_by_hand():
    assert rows_separated(MapStack.of([component_map(0, 1, 0, 0)], 4))
    assert rows_separated(MapStack.of([component_map(0, 1, 0, 0), component_map(1, 1, 0, 0)], 4))
    # two maps of one component: shifted neighbours, whose lines overlap
    assert not rows_separated(MapStack.of([component_map(0, 1, 0, 0), component_map(0, 0, 0, 0)], 4))
    # a run of components 0..2 (covering) and component 2 alone overlap in component 2
    run = MapStack.covering([component_map(q, 0, 0, 0) for q in range(3)], 4)
    both = MapStack(4, np.concatenate([run.dims, run.dims]), np.concatenate([run.offset, run.offset + [[2, 0, 0, 0]]]),
                    np.concatenate([run.scale, run.scale]), np.concatenate([run.line, run.line]),
                    np.concatenate([run.offset_hi, run.offset_hi]))
    assert not rows_separated(both)


def test_separating_axis_by_hand():
    """The component coordinate of a 4-D field (first target, or last where it is the contiguous
    index: AoS); 0 where no coordinate is constant."""
    assert separating_axis(MapStack.of([component_map(q, 0, 0, 0) for q in range(3)], 4)) == 0
    aos = [BoxMap((AxisMap("shift", 2, 0), AxisMap("shift", 1, 0), AxisMap("shift", 0, 0), AxisMap("const", -1, q)))
           for q in range(3)]
    assert separating_axis(MapStack.of(aos, 4)) == 3
    assert separating_axis(MapStack.of([plane_map(0, 0), plane_map(1, 0)], 2)) == 0
