"""Box-union counting against explicit enumeration of lattice points."""

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from warpspeed.memory.wave.box_union import build_grid


def _points(boxes):
    pts = set()
    for box in boxes:
        pts.update(itertools.product(*(range(lo, hi + 1) for lo, hi in box)))
    return pts


box3 = st.lists(st.tuples(st.integers(-5, 8), st.integers(0, 6)), min_size=3, max_size=3).map(
    lambda dims: tuple((lo, lo + w) for lo, w in dims))


@settings(max_examples=60, deadline=None)
@given(a=st.lists(box3, min_size=0, max_size=6), b=st.lists(box3, min_size=1, max_size=6))
def test_union_and_intersection_match_enumeration(a, b):
    grid = build_grid({"a": np.array(a, dtype=np.int64).reshape(-1, 3, 2), "b": np.array(b).reshape(-1, 3, 2)})
    pa, pb = _points(a), _points(b)
    assert grid.size("a") == len(pa)
    assert grid.size("b") == len(pb)
    assert grid.count(grid.masks["a"] & grid.masks["b"]) == len(pa & pb)
    assert grid.count(grid.masks["a"] | grid.masks["b"]) == len(pa | pb)


def test_large_boxes_cost_nothing_extra():
    # two 10^6-wide boxes overlapping by half: 1.5e6 x 3 x 2 points, counted on a 3x1x1 grid
    boxes = np.array([[[0, 999_999], [0, 2], [5, 6]], [[500_000, 1_499_999], [0, 2], [5, 6]]])
    grid = build_grid({"s": boxes})
    assert grid.size("s") == 1_500_000 * 3 * 2
    assert grid.weights.size == 3


def test_too_large_grid_returns_none():
    boxes = np.array([[[i, i], [i, i], [i, i]] for i in range(0, 400, 2)])
    assert build_grid({"s": boxes}, max_cells=1000) is None


from warpspeed.memory.wave.box_union import group_coverage  # noqa: E402

boxes2 = st.lists(st.tuples(st.integers(-4, 9), st.integers(0, 5)), min_size=2, max_size=2).map(
    lambda dims: tuple((lo, lo + w) for lo, w in dims))


@settings(max_examples=60, deadline=None)
@given(groups=st.lists(st.lists(st.lists(box3, min_size=0, max_size=5), min_size=3, max_size=3), min_size=1, max_size=4))
def test_group_coverage_matches_enumeration(groups):
    """Several groups of sets, each group on its own grid (padded to a common shape): every set's
    size and every pairwise intersection equal the lattice points enumerated one by one."""
    arrays = [[np.array(s, dtype=np.int64).reshape(-1, 3, 2) for s in group] for group in groups]
    covered, weights = group_coverage(arrays)
    for g, group in enumerate(groups):
        points = [_points(s) for s in group]
        for s, pts in enumerate(points):
            assert int((covered[g, s] * weights[g]).sum()) == len(pts)
        assert int(((covered[g, 0] & covered[g, 1]) * weights[g]).sum()) == len(points[0] & points[1])
        assert int(((covered[g, 1] | ~covered[g, 2]) * weights[g]).sum()) == \
            len(points[1]) + sum(1 for p in _grid_points(group) if p not in points[1] and p not in points[2])


def _grid_points(group):
    """Lattice points of the bounding region of a group's boxes (the cells of its grid)."""
    boxes = [b for s in group for b in s]
    if not boxes:
        return set()
    lo = [min(b[d][0] for b in boxes) for d in range(3)]
    hi = [max(b[d][1] for b in boxes) for d in range(3)]
    return set(itertools.product(*(range(lo[d], hi[d] + 1) for d in range(3))))


def test_group_coverage_in_two_dimensions_and_empty_groups():
    a = np.array([[[0, 3], [0, 0]], [[2, 5], [1, 2]]])
    covered, weights = group_coverage([[a, a[:0]], [a[:0], a[:1]]])
    assert int((covered[0, 0] * weights[0]).sum()) == 4 + 8
    assert int((covered[0, 1] * weights[0]).sum()) == 0
    assert int((covered[1, 0] * weights[1]).sum()) == 0
    assert int((covered[1, 1] * weights[1]).sum()) == 4


def test_group_coverage_keeps_sets_with_many_overlapping_boxes_apart():
    """Sets share a layer of the difference array as digits of a base 2^bits, bits from the
    largest number of boxes of a set: a set of 5000 equal boxes (a cell counted 5000 times, 13
    bits per digit, so at most four sets per layer) next to eight sets of one or two boxes. Every
    set's size, counted point by point, is unchanged by its neighbours' counts."""
    big = np.repeat(np.array([[[0, 2], [0, 2], [0, 2]]], dtype=np.int64), 5000, axis=0)
    small = [np.array([[[i, i + 1], [0, 0], [1, 3]], [[i + 2, i + 2], [2, 3], [0, 0]]], dtype=np.int64)[: 1 + i % 2]
             for i in range(8)]
    groups = [[big, *small], [*small[::-1], big[:3]]]
    covered, weights = group_coverage(groups)
    for g, group in enumerate(groups):
        points = [_points([tuple(map(tuple, b)) for b in boxes.tolist()]) for boxes in group]
        for s, expected in enumerate(points):
            assert int((covered[g, s] * weights[g]).sum()) == len(expected)
        assert int(((covered[g, 0] & covered[g, 8]) * weights[g]).sum()) == len(points[0] & points[8])
