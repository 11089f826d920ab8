"""Box-preserving access maps: the fast path of the wave-level footprints.

An access maps a box of cells to a box of cache lines when every target coordinate of its N-D
line address (see :mod:`warpspeed.memory.wave.isl_counts`) is

* ``cell_d + c`` (a shifted coordinate),
* a constant ``c`` (e.g. an LBM component index), or
* ``floor((A + e * (cell_d + c)) / L)`` for the contiguous index, with ``0 < e <= L`` (element
  not larger than a line, so consecutive cells hit consecutive or equal lines: no gaps),

and no cell coordinate feeds two target coordinates. Stencils and LBM streaming patterns in the
N-D address space are of this kind. For them the wave footprints are unions of boxes, counted
exactly by :mod:`warpspeed.memory.wave.box_union`; everything else goes through ISL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import sympy

from warpspeed.memory.addresses import CompiledAccess
from warpspeed.kernel.description import COORDINATES


@dataclass(frozen=True)
class AxisMap:
    """One target coordinate: ``kind`` is "shift", "const" or "line" (see the module docstring).

    ``dim`` is the cell dimension (0..2) it reads (-1 for "const"); the value for a cell
    coordinate ``v`` is ``v + offset`` (shift), ``offset`` (const) or
    ``floor((offset + scale * v) / line)`` (line).
    """

    kind: str
    dim: int
    offset: int
    scale: int = 1
    line: int = 1


@dataclass(frozen=True)
class BoxMap:
    """An access as a box-to-box map: one :class:`AxisMap` per target coordinate."""

    axes: tuple[AxisMap, ...]


def _shift(expr: sympy.Expr) -> tuple[int, int] | None:
    """(dim, c) for ``coord + c``, (-1, c) for a constant, None otherwise."""
    expr = sympy.expand(expr)
    if expr.is_Integer:
        return -1, int(expr)
    symbols = expr.free_symbols
    if len(symbols) != 1:
        return None
    (sym,) = symbols
    if sym not in COORDINATES:
        return None
    rest = sympy.expand(expr - sym)
    if not rest.is_Integer:
        return None
    return COORDINATES.index(sym), int(rest)


def box_map(access: CompiledAccess, line_bytes: int) -> BoxMap | None:
    """The N-D line-address map of ``access`` as a :class:`BoxMap`, or None if it is not one.

    The target tuple matches :mod:`warpspeed.memory.wave.isl_counts`'s N-D address space: the non-contiguous
    indices slowest first, then the contiguous index scaled to bytes, offset by the field's
    alignment and floor-divided by ``line_bytes``.
    """
    field = access.field
    if access.access.linear:
        return None
    layout = field.layout
    index = access.access.index
    axes = []
    for position in reversed(layout[1:]):  # type: ignore[index]
        parsed = _shift(index[position])
        if parsed is None:
            return None
        dim, c = parsed
        axes.append(AxisMap("const", -1, c) if dim < 0 else AxisMap("shift", dim, c))
    parsed = _shift(index[layout[0]])  # type: ignore[index]
    if parsed is None or field.element_bytes > line_bytes:
        return None
    dim, c = parsed
    base = field.alignment_bytes + field.element_bytes * c
    if dim < 0:
        axes.append(AxisMap("const", -1, base // line_bytes))
    else:
        axes.append(AxisMap("line", dim, base, field.element_bytes, line_bytes))
    used = [a.dim for a in axes if a.dim >= 0]
    if len(used) != len(set(used)):
        return None
    return BoxMap(tuple(axes))


def field_box_maps(accesses: Sequence[CompiledAccess], line_bytes: int) -> tuple[BoxMap, ...] | None:
    """Box maps of all ``accesses`` (one field), or None if any access is not box-preserving."""
    maps = []
    for a in accesses:
        m = box_map(a, line_bytes)
        if m is None:
            return None
        maps.append(m)
    return tuple(maps)


@dataclass(frozen=True)
class MapStack:
    """Several box maps with the same number of target coordinates, as arrays ``(maps, targets)``.

    Every axis is evaluated as ``floor((offset + scale * cell[dim]) / line)``: a shift has
    ``scale = line = 1``, a constant ``scale = 0``. A row may stand for a run of maps that
    differ only in the offset of one target (:meth:`covering`): its low bound uses ``offset``,
    its high bound ``offset_hi`` (equal to ``offset`` for a single map). Build once per field,
    apply to many box sets.
    """

    targets: int
    dims: np.ndarray
    offset: np.ndarray
    scale: np.ndarray
    line: np.ndarray
    offset_hi: np.ndarray

    @property
    def _bounds_offset(self) -> np.ndarray:
        """``(maps, targets, 2)``: the offsets of the low and the high bound."""
        cached = self.__dict__.get("_bounds")
        if cached is None:
            cached = np.stack((self.offset, self.offset_hi), axis=-1)
            object.__setattr__(self, "_bounds", cached)
        return cached

    @classmethod
    def of(cls, maps: Sequence[BoxMap], targets: int) -> "MapStack":
        """One row per map."""
        shape = (len(maps), targets)
        dims, offset = np.zeros(shape, dtype=np.int64), np.zeros(shape, dtype=np.int64)
        scale, line = np.ones(shape, dtype=np.int64), np.ones(shape, dtype=np.int64)
        for i, m in enumerate(maps):
            for t, axis in enumerate(m.axes):
                dims[i, t] = max(axis.dim, 0)
                offset[i, t] = axis.offset
                if axis.kind == "const":
                    scale[i, t] = 0
                elif axis.kind == "line":
                    scale[i, t], line[i, t] = axis.scale, axis.line
        return cls(targets, dims, offset, scale, line, offset.copy())

    @classmethod
    def covering(cls, maps: Sequence[BoxMap], targets: int) -> "MapStack":
        """Fewer rows with the same union of images as :meth:`of` (module :func:`covering_runs`):
        the 25 loads of a range-4 star stencil become 3 rows, one line per axis."""
        points = cls.of(maps, targets)
        runs = covering_runs(points)
        index = np.array([r[0] for r in runs], dtype=np.int64).reshape(-1)
        offset, offset_hi = points.offset[index].copy(), points.offset[index].copy()
        for row, (_, target, low, high) in enumerate(runs):
            if target >= 0:
                offset[row, target], offset_hi[row, target] = low, high
        return cls(targets, points.dims[index], offset, points.scale[index], points.line[index], offset_hi)

    def images(self, parts: Sequence[np.ndarray]) -> list[np.ndarray]:
        """:meth:`image` of several arrays of cell boxes, evaluated together."""
        sizes = [p.shape[0] for p in parts]
        total = sum(sizes)
        if total == 0 or self.dims.shape[0] == 0:
            return [np.zeros((0, self.targets, 2), dtype=np.int64) for _ in parts]
        boxes = np.concatenate(parts) if len(parts) > 1 else parts[0]
        picked = boxes[:, self.dims, :]  # (n, maps, targets, 2)
        out = np.floor_divide(self._bounds_offset + self.scale[..., None] * picked, self.line[..., None])
        out = out.transpose(1, 0, 2, 3)  # (maps, n, targets, 2)
        ends = np.cumsum(sizes)
        return [out[:, stop - n:stop].reshape(-1, self.targets, 2) for stop, n in zip(ends, sizes)]

    def image(self, boxes: np.ndarray) -> np.ndarray:
        """Union-preserving images of cell boxes ``(n, 3, 2)`` under every row:
        ``(rows * n, targets, 2)``."""
        n = boxes.shape[0]
        if n == 0 or self.dims.shape[0] == 0:
            return np.zeros((0, self.targets, 2), dtype=np.int64)
        picked = boxes[:, self.dims, :]  # (n, maps, targets, 2)
        out = np.floor_divide(self._bounds_offset + self.scale[..., None] * picked, self.line[..., None])
        return out.transpose(1, 0, 2, 3).reshape(-1, self.targets, 2)


def covering_runs(points: MapStack) -> list[tuple[int, int, int, int]]:
    """Rows ``(map, target, low, high)`` whose images cover exactly the union of the images of
    the single maps of ``points``: map ``map`` with the offset of ``target`` running over
    ``low .. high`` (``target = -1``: the map alone).

    Maps that agree in everything but the offset of one target, with offsets whose gaps are at
    most the axis's ``line`` (1 for a shift or a constant), have images that overlap or touch
    along that target for every non-empty box (an axis value grows by at most 1 when its offset
    grows by at most ``line``, as ``scale <= line``), so their union is one box from the first
    map's low bound to the last map's high bound. Runs are picked greedily, longest first, until
    every map is covered; the union stays the same because every run consists of the maps.
    """
    count, targets = points.offset.shape
    candidates: list[tuple[int, int, int, int, tuple[int, ...]]] = []  # (-size, target, low, high, members)
    for t in range(targets):
        keys: dict[tuple, list[int]] = {}
        for i in range(count):
            key = (points.dims[i].tobytes(), points.scale[i].tobytes(), points.line[i].tobytes(),
                   np.delete(points.offset[i], t).tobytes())
            keys.setdefault(key, []).append(i)
        for members in keys.values():
            gap = int(points.line[members[0], t])
            members.sort(key=lambda i: int(points.offset[i, t]))
            run = [members[0]]
            for i in members[1:]:
                if int(points.offset[i, t]) - int(points.offset[run[-1], t]) <= gap:
                    run.append(i)
                else:
                    candidates.append((-len(run), t, run[0], run[-1], tuple(run)))
                    run = [i]
            candidates.append((-len(run), t, run[0], run[-1], tuple(run)))
    covered: set[int] = set()
    rows = []
    for _, t, first, last, members in sorted(candidates):
        if covered.issuperset(members):
            continue
        covered.update(members)
        if len(members) == 1:
            rows.append((first, -1, 0, 0))
        else:
            rows.append((first, t, int(points.offset[first, t]), int(points.offset[last, t])))
    return rows
