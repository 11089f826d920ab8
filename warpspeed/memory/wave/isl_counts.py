"""Exact line counts of the wave footprints with implicit integer sets (``islpy``).

Address spaces (Ernst et al. 2023, section 4.4.1)
    Every access becomes an ``isl.Map`` from cells ``[x, y, z]`` to byte coordinates.

    * ``"nd"`` (default): the field's N-D index tuple is kept; its contiguous index (the first
      entry of ``Field.layout``) is scaled to bytes and shifted by the field's base alignment;
      the other indices stay as dimensions (slowest first). Dividing the byte coordinate by the
      line size gives ``floor((alignment + element_bytes * i_contig) / line)``. As the article
      notes, a line that wraps around into the next row is counted once per row, and per-row
      alignment is not modelled. A field with any linear-index access uses the linear space
      for all its accesses (the two spaces cannot be mixed within one field).
    * ``"linear"``: the 1-D byte address, divided into lines ``floor(byte_address / line)``.

Evaluation
    Images are first formed in byte coordinates (the access maps carry no floor division, so a
    footprint is a union of boxes in the N-D space) and then divided into lines. Cardinalities use ``count_val`` on
    ``isl.Set``, so the cost does not grow with the domain or the wave size: a configuration of
    the 25-point stencil takes some 30-60 ms in the N-D space (``benchmarks/bench_wave.py``).
    The linear space is exact too but much slower for kernels with many accesses (seconds for
    the 25-point stencil), as section 4.4.1 warns; its overlaps are computed from cardinalities
    of unions only, since ISL intersections and differences of its line sets are slower still.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from warpspeed.memory.addresses import CompiledAccess, CompiledKernel, isl_expr
from warpspeed.memory.wave.geometry import DIMENSIONS, Box, PerDim
from warpspeed.memory.wave.volumes import FieldLineCounts

#: The ISL names of the cell coordinates (must match the symbols of warpspeed.kernel.description).
_CELL_TUPLE = "[x, y, z]"


@dataclass(frozen=True)
class FieldMaps:
    """A field's accesses as ISL maps: cells -> byte coordinates (the union of its load maps and
    of its store maps; the last coordinate is a byte address, the others N-D indices)."""

    field: str
    address_space: str
    loads: isl.Map | None
    stores: isl.Map | None
    rank: int  # number of output coordinates


@dataclass(frozen=True)
class FieldLayout:
    """What :func:`field_maps` decides for a field without building its maps: its address space
    and the number of output coordinates."""

    field: str
    address_space: str
    rank: int


def field_layouts(compiled: CompiledKernel, linear_space: bool) -> tuple[FieldLayout, ...]:
    """The :class:`FieldLayout` of every field of ``compiled``, in field order (as :func:`field_maps`)."""
    layouts = []
    for field in compiled.kernel.fields:
        linear = linear_space or any(a.access.linear for a in compiled.accesses if a.field.name == field.name)
        layouts.append(FieldLayout(field.name, "linear" if linear else "nd", 1 if linear else field.ndim))
    return tuple(layouts)


def field_maps(compiled: CompiledKernel, linear_space: bool, ctx: isl.Context) -> tuple[FieldMaps, ...]:
    """The :class:`FieldMaps` of every field of ``compiled``, in field order; every field uses
    the linear space when ``linear_space``, else the N-D space unless it has a linear access."""
    maps = []
    for field in compiled.kernel.fields:
        accesses = [a for a in compiled.accesses if a.field.name == field.name]
        linear = linear_space or any(a.access.linear for a in accesses)
        loads = [_access_target(a, linear) for a in accesses if not a.access.is_store]
        stores = [_access_target(a, linear) for a in accesses if a.access.is_store]
        maps.append(FieldMaps(
            field=field.name, address_space="linear" if linear else "nd",
            loads=_union_map(loads, ctx), stores=_union_map(stores, ctx),
            rank=1 if linear else field.ndim,
        ))
    return tuple(maps)


def _access_target(access: CompiledAccess, linear: bool) -> str:
    """The ISL tuple of byte coordinates an access maps a cell to (before the line division)."""
    field = access.field
    if linear:
        return f"[{isl_expr(access.address_expr)}]"
    index = access.access.index
    contiguous = field.layout[0]  # type: ignore[index]
    others = [isl_expr(index[p]) for p in reversed(field.layout[1:])]  # type: ignore[index]
    byte = f"{field.alignment_bytes} + {field.element_bytes} * {isl_expr(index[contiguous])}"
    return "[" + ", ".join(others + [byte]) + "]"


def _union_map(targets: list[str], ctx: isl.Context) -> isl.Map | None:
    if not targets:
        return None
    unique = list(dict.fromkeys(targets))
    text = "{ " + "; ".join(f"{_CELL_TUPLE} -> {t}" for t in unique) + " }"
    return isl.Map.read_from_str(ctx, text).coalesce()


def line_map(rank: int, line_bytes: int, ctx: isl.Context) -> isl.Map:
    """Byte coordinates -> line coordinates: floor-divide the last (byte) coordinate."""
    names = [f"i{k}" for k in range(rank)]
    out = names[:-1] + [f"floor({names[-1]} / {line_bytes})"]
    return isl.Map.read_from_str(ctx, "{ [" + ", ".join(names) + "] -> [" + ", ".join(out) + "] }")


def isl_cell_set(boxes: list[Box], ctx: isl.Context) -> isl.Set:
    """The union of cell boxes as an ``isl.Set`` of cells (empty set for no boxes)."""
    if not boxes:
        return isl.Set.read_from_str(ctx, "{ " + _CELL_TUPLE + " : false }")
    pieces = [
        f"{_CELL_TUPLE} : {x0} <= x <= {x1} and {y0} <= y <= {y1} and {z0} <= z <= {z1}"
        for (x0, x1), (y0, y1), (z0, z1) in boxes
    ]
    return isl.Set.read_from_str(ctx, "{ " + "; ".join(pieces) + " }")


def _image(cells: isl.Set | None, m: isl.Map | None) -> isl.Set | None:
    if m is None or cells is None:
        return None
    return cells.apply(m).coalesce()


def _union(a: isl.Set | None, b: isl.Set | None) -> isl.Set | None:
    if a is None:
        return b
    if b is None:
        return a
    return a.union(b).coalesce()


def _count(s: isl.Set | None) -> int:
    return 0 if s is None else int(s.count_val().to_python())


def _overlaps_by_intersection(bytes_load_w: isl.Set | None, bytes_all_p: dict[str, isl.Set | None],
                              transfer: isl.Map) -> dict[str, int]:
    """``overlap_d = |L ∩ T_d|`` minus the lines already counted for an earlier dimension, by
    set operations on line sets (``L``: the wave's load lines, ``T_d``: the lines ``P_d``
    touched). Fast in the N-D address space."""
    overlap: dict[str, int] = {}
    load_w = _image(bytes_load_w, transfer)
    covered: isl.Set | None = None
    for d in DIMENSIONS:
        touched = _image(bytes_all_p[d], transfer)
        if load_w is None or touched is None:
            overlap[d] = 0
            continue
        shared = load_w.intersect(touched).coalesce()
        new = shared if covered is None else shared.subtract(covered)
        overlap[d] = _count(new)
        covered = _union(covered, shared)
    return overlap


def _overlaps_by_union(bytes_load_w: isl.Set | None, bytes_all_p: dict[str, isl.Set | None],
                       transfer: isl.Map, loads: int) -> dict[str, int]:
    """The same overlaps from cardinalities of unions only, for the linear address space, where
    intersections and differences of line sets (with the floor division's existential
    variables) are very slow in ISL. With ``U_d = T_x ∪ ... ∪ T_d``:
    ``overlap_d = |L ∩ U_d| - |L ∩ U_{d-1}|`` and ``|L ∩ U| = |L| + |U| - |L ∪ U|``; unions are
    formed on byte sets before the line division (the image of a union is the union of the
    images)."""
    overlap: dict[str, int] = {}
    reached = 0  # |L ∩ U_{d-1}|
    union_bytes: isl.Set | None = None  # byte coordinates of U_d
    for d in DIMENSIONS:
        if bytes_all_p[d] is None or bytes_load_w is None:
            overlap[d] = 0
            continue
        union_bytes = _union(union_bytes, bytes_all_p[d])
        u = _count(_image(union_bytes, transfer))
        l_or_u = _count(_image(_union(bytes_load_w, union_bytes), transfer))
        l_and_u = loads + u - l_or_u
        overlap[d] = l_and_u - reached
        reached = l_and_u
    return overlap


def isl_field_counts(fm: FieldMaps, transfer: isl.Map, wave: isl.Set,
                     previous: dict[str, isl.Set | None]) -> FieldLineCounts:
    """Line counts of one field; ``transfer`` divides byte coordinates into lines
    (:func:`line_map`); ``previous`` holds the cell set of each ``P_d`` (None when empty)."""
    bytes_load_w = _image(wave, fm.loads)
    bytes_store_w = _image(wave, fm.stores)
    bytes_all_p = {d: _union(_image(previous[d], fm.loads), _image(previous[d], fm.stores))
                   for d in DIMENSIONS}
    loads = _count(_image(bytes_load_w, transfer))
    stores = _count(_image(bytes_store_w, transfer))
    if fm.address_space == "nd":
        overlap = _overlaps_by_intersection(bytes_load_w, bytes_all_p, transfer)
    else:
        overlap = _overlaps_by_union(bytes_load_w, bytes_all_p, transfer, loads)
    layer: dict[str, int] = {}
    for d in DIMENSIONS:
        if bytes_all_p[d] is None:
            layer[d] = loads
        else:
            layer[d] = _count(_image(_union(bytes_load_w, bytes_all_p[d]), transfer))
    return FieldLineCounts(load=loads, store=stores, overlap=PerDim(*(overlap[d] for d in DIMENSIONS)),
                           layer=PerDim(*(layer[d] for d in DIMENSIONS)))
