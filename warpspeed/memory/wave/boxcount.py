"""Exact cardinalities of unions and intersections of integer boxes (Klee's measure problem).

The wave-level footprints of stencil-like accesses are unions of shifted boxes: the image of a
box of cells under an access whose every target coordinate is ``cell_d + c``, a constant, or
``floor((A + e * (cell_d + c)) / L)`` with ``0 < e <= L`` is again a box. Their sizes are counted
here without ISL: all box corners are compressed into one grid (the distinct boundaries per
dimension), each set's coverage is marked on that grid (box by box for a few hundred boxes,
else with a D-dimensional difference array and prefix sums, whose cost does not grow with the
boxes' extents), and a cell of the compressed grid counts with the product of its extents. The
cost depends on the number of distinct boundaries, not on the size of the boxes, so it does not
grow with the domain or the wave.

Results are exact integers; the tests check them against ISL and against brute-force enumeration.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import Mapping

import numpy as np

#: Largest compressed grid (cells) evaluated here; larger problems are left to ISL. 2^22 cells
#: of int32 coverage take 16 MiB per set.
MAX_GRID_CELLS = 1 << 22

#: Up to this many boxes a set's coverage is set box by box (numpy slice assignment, faster
#: than the difference array for the wave footprints of stencils, measured at 30 % per grid);
#: beyond it, when boxes may overlap many times, the difference array bounds the cost.
PAINT_MAX_BOXES = 256


@dataclass(frozen=True)
class BoxGrid:
    """Coverage masks of several box sets on one compressed grid.

    Attributes:
        masks: set name -> boolean array over the compressed grid (covered cells).
        weights: integer array of the same shape: lattice points in each compressed cell.
    """

    masks: Mapping[str, np.ndarray]
    weights: np.ndarray

    def count(self, mask: np.ndarray) -> int:
        """Lattice points in the cells where ``mask`` holds."""
        return int(self.weights[mask].sum())

    def size(self, name: str) -> int:
        """Lattice points of the union of the boxes of set ``name``."""
        return self.count(self.masks[name])


def build_grid(sets: Mapping[str, np.ndarray], max_cells: int = MAX_GRID_CELLS) -> BoxGrid | None:
    """Compress all boxes of ``sets`` into one grid and mark each set's coverage.

    Args:
        sets: name -> int64 array ``(boxes, dims, 2)`` of inclusive ``[lo, hi]`` per dimension
            (all sets must have the same number of dimensions; a set may have no boxes).
        max_cells: give up (return ``None``) when the compressed grid would be larger.
    """
    arrays = [np.asarray(b, dtype=np.int64) for b in sets.values()]
    dims = max((a.shape[1] for a in arrays if a.size), default=0)
    if dims == 0:
        return BoxGrid(masks={n: np.zeros((), dtype=bool) for n in sets}, weights=np.zeros((), dtype=np.int64))
    arrays = [a.reshape(-1, dims, 2) for a in arrays]
    everything = np.concatenate(arrays)
    bounds = []
    cells = 1
    for d in range(dims):
        b = np.unique(np.concatenate([everything[:, d, 0], everything[:, d, 1] + 1]))
        bounds.append(b)
        cells *= max(1, b.size - 1)
        if cells > max_cells:
            return None
    shape = tuple(max(1, b.size - 1) for b in bounds)
    weights = np.ones(shape, dtype=np.int64)
    for d, b in enumerate(bounds):
        w = np.diff(b) if b.size > 1 else np.ones(1, dtype=np.int64)
        weights = weights * w.reshape([-1 if i == d else 1 for i in range(dims)])
    sizes = [a.shape[0] for a in arrays]
    ends = np.cumsum(sizes)[:-1]
    lo_all = [np.split(np.searchsorted(bounds[d], everything[:, d, 0]), ends) for d in range(dims)]
    hi_all = [np.split(np.searchsorted(bounds[d], everything[:, d, 1] + 1), ends) for d in range(dims)]
    masks = {}
    for k, (name, boxes) in enumerate(zip(sets, arrays)):
        if boxes.size == 0:
            masks[name] = np.zeros(shape, dtype=bool)
            continue
        lo = [lo_all[d][k] for d in range(dims)]
        hi = [hi_all[d][k] for d in range(dims)]
        if boxes.shape[0] <= PAINT_MAX_BOXES:
            masks[name] = _painted(shape, lo, hi)
            continue
        diff = np.zeros(tuple(s + 1 for s in shape), dtype=np.int32)
        for corner in product((0, 1), repeat=dims):
            index = tuple(hi[d] if c else lo[d] for d, c in enumerate(corner))
            np.add.at(diff, index, -1 if sum(corner) % 2 else 1)
        for d in range(dims):
            np.cumsum(diff, axis=d, out=diff)
        masks[name] = diff[tuple(slice(0, s) for s in shape)] > 0
    return BoxGrid(masks=masks, weights=weights)


def _painted(shape: tuple[int, ...], lo: list[np.ndarray], hi: list[np.ndarray]) -> np.ndarray:
    """Coverage of boxes ``[lo, hi)`` (compressed-grid indices per dimension), set box by box."""
    mask = np.zeros(shape, dtype=bool)
    for low, high in zip(zip(*(a.tolist() for a in lo)), zip(*(a.tolist() for a in hi))):
        mask[tuple(map(slice, low, high))] = True
    return mask
