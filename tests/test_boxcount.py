"""Box-union counting against explicit enumeration of lattice points."""

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from warpspeed.memory.wave.boxcount import build_grid


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
