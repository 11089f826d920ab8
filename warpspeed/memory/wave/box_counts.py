"""Exact line counts of the wave footprints as box unions (the fast path, no ISL).

When every access of a field is box-preserving (:mod:`warpspeed.memory.wave.boxmaps`), the
wave's cells and the previous-neighbour sets, which are unions of cell boxes, map to unions of
line boxes, and every count of :class:`~warpspeed.memory.wave.volumes.FieldLineCounts`
(compulsory lines, overlaps with the previous-neighbour sets attributed x, then y, then z, layer
volumes) is a cardinality of unions and intersections of boxes.
:mod:`warpspeed.memory.wave.boxcount` counts them exactly on a compressed grid. The results are
the same integers ISL gives (tested case by case); for fields whose accesses are not
box-preserving, or whose compressed grid would be too large, the counter returns ``None`` and
the caller uses :mod:`warpspeed.memory.wave.isl_counts`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from warpspeed.memory.wave.boxcount import BoxGrid, build_grid
from warpspeed.memory.wave.boxmaps import BoxMap, MapStack
from warpspeed.memory.wave.geometry import DIMENSIONS, Box, PerDim
from warpspeed.memory.wave.volumes import FieldLineCounts


def _array(boxes: Sequence[Box]) -> np.ndarray:
    return np.asarray(boxes, dtype=np.int64).reshape(-1, 3, 2)


@dataclass(frozen=True)
class FieldStacks:
    """A field's loads, stores and all accesses as map stacks at one line size."""

    loads: MapStack
    stores: MapStack
    both: MapStack


def field_stacks(loads: Sequence[BoxMap], stores: Sequence[BoxMap], targets: int) -> FieldStacks:
    """The :class:`FieldStacks` of a field's load and store box maps (``targets`` coordinates)."""
    return FieldStacks(MapStack.covering(loads, targets), MapStack.covering(stores, targets),
                       MapStack.covering([*loads, *stores], targets))


def box_field_counts(stacks: FieldStacks, wave: Sequence[Box],
                     previous: Mapping[str, Sequence[Box]]) -> FieldLineCounts | None:
    """Line counts of one field, or None when the compressed grid would be too large.

    Args:
        stacks: the field's maps at the line granularity (loads, stores, both).
        wave: cell boxes of the wave; previous: cell boxes of ``P_x``, ``P_y``, ``P_z``.
    """
    w = _array(wave)
    prev = {d: _array(previous.get(d, ())) for d in DIMENSIONS}
    grid = _grid({"LW": stacks.loads.image(w), "SW": stacks.stores.image(w)}, stacks.both, prev)
    if grid is None:
        return None
    load_w = grid.masks["LW"]
    overlap = {}
    covered = np.zeros_like(load_w)
    for d in DIMENSIONS:
        shared = load_w & grid.masks[d]
        overlap[d] = grid.count(shared & ~covered)
        covered |= shared
    return FieldLineCounts(
        load=grid.count(load_w), store=grid.size("SW"),
        overlap=PerDim(*(overlap[d] for d in DIMENSIONS)),
        layer=PerDim(*(grid.count(load_w | grid.masks[d]) for d in DIMENSIONS)),
    )


def _grid(wave_sets: dict[str, np.ndarray], touched: MapStack, previous: Mapping[str, np.ndarray]) -> BoxGrid | None:
    """One compressed grid for the wave's line boxes and what each previous set touched."""
    return build_grid({**wave_sets, **{d: touched.image(previous[d]) for d in DIMENSIONS}})
