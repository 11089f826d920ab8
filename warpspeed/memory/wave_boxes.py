"""Fast path of the wave-level footprints: box unions instead of ISL sets.

When every access of a field is box-preserving (:mod:`warpspeed.memory.boxmaps`), the wave's thread
set and the previous-neighbour sets, which are unions of cell boxes, map to unions of line
boxes, and every count of :mod:`warpspeed.memory.wave` (compulsory lines, overlaps with the
previous-neighbour sets attributed x, then y, then z, layer and allocation volumes) is a
cardinality of unions and intersections of boxes. :mod:`warpspeed.memory.boxcount` counts them exactly
on a compressed grid. The results are the same integers ISL gives (tested case by case); fields
whose accesses are not box-preserving, or whose compressed grid would be too large, return
``None`` and the caller uses ISL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from warpspeed.memory.boxcount import BoxGrid, build_grid
from warpspeed.memory.boxmaps import BoxMap, MapStack

#: Order in which overlaps are attributed to the previous-neighbour sets (as in warpspeed.memory.wave).
_DIMS = ("x", "y", "z")

Box = tuple[tuple[int, int], tuple[int, int], tuple[int, int]]


def _array(boxes: Sequence[Box]) -> np.ndarray:
    return np.asarray(boxes, dtype=np.int64).reshape(-1, 3, 2)


@dataclass(frozen=True)
class FieldStacks:
    """A field's loads, stores and all accesses as map stacks at one line size."""

    loads: MapStack
    stores: MapStack
    both: MapStack


def field_stacks(loads: Sequence[BoxMap], stores: Sequence[BoxMap], targets: int) -> FieldStacks:
    return FieldStacks(MapStack.of(loads, targets), MapStack.of(stores, targets),
                       MapStack.of([*loads, *stores], targets))


def box_field_counts(transfer: FieldStacks, allocation: FieldStacks, wave: Sequence[Box],
                     previous: Mapping[str, Sequence[Box]]) -> dict | None:
    """Line counts of one field, or None when the compressed grid would be too large.

    Args:
        transfer: the field's maps at the transfer granularity (loads, stores, both).
        allocation: the same at the allocation granularity.
        wave: cell boxes of the wave; previous: cell boxes of ``P_x``, ``P_y``, ``P_z``.

    Returns:
        ``{"load": int, "store": int, "overlap": {d: int}, "allocated": int, "layer": {d: int}}``
        with the same meaning as in :mod:`warpspeed.memory.wave`.
    """
    w = _array(wave)
    prev = {d: _array(previous.get(d, ())) for d in _DIMS}
    grid = _grid({"LW": transfer.loads.image(w), "SW": transfer.stores.image(w)}, transfer.both, prev)
    if grid is None:
        return None
    load_w = grid.masks["LW"]
    overlap = {}
    covered = np.zeros_like(load_w)
    for d in _DIMS:
        shared = load_w & grid.masks[d]
        overlap[d] = grid.count(shared & ~covered)
        covered |= shared
    grid_a = _grid({"AW": allocation.both.image(w)}, allocation.both, prev)
    if grid_a is None:
        return None
    alloc_w = grid_a.masks["AW"]
    layer = {d: grid_a.count(alloc_w | grid_a.masks[d]) for d in _DIMS}
    return {"load": grid.count(load_w), "store": grid.size("SW"), "overlap": overlap,
            "allocated": grid_a.count(alloc_w), "layer": layer}


def _grid(wave_sets: dict[str, np.ndarray], touched: MapStack, previous: Mapping[str, np.ndarray]) -> BoxGrid | None:
    """One compressed grid for the wave's line boxes and what each previous set touched."""
    return build_grid({**wave_sets, **{d: touched.image(previous[d]) for d in _DIMS}})
