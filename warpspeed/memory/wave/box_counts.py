"""Exact line counts of the wave footprints as box unions (the fast path, no ISL).

When every access of a field is box-preserving (:mod:`warpspeed.memory.wave.boxmaps`), the
wave's cells and the previous-neighbour sets, which are unions of cell boxes, map to unions of
line boxes, and every count of :class:`~warpspeed.memory.wave.volumes.FieldLineCounts`
(compulsory lines, overlaps with the previous-neighbour sets attributed x, then y, then z, layer
volumes) is a cardinality of unions and intersections of boxes.
:mod:`warpspeed.memory.wave.box_union` counts them exactly on a compressed grid; where a field's
maps never overlap (:attr:`FieldStacks.separated`: lattice-Boltzmann populations, single
streams), :mod:`warpspeed.memory.wave.box_sums` adds up box sizes instead, without a grid
(:func:`box_counts_many`). The results are the same integers ISL gives (tested case by case);
for fields whose accesses are not
box-preserving, or whose compressed grid would be too large, the counter returns ``None`` and
the caller uses :mod:`warpspeed.memory.wave.isl_counts`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Mapping, Sequence

import numpy as np

from warpspeed.memory.distinct import positions_in_runs
from warpspeed.memory.wave.box_sums import disjoint_counts, rows_separated, separating_axis
from warpspeed.memory.wave.box_union import build_grid, joint_coverage
from warpspeed.memory.wave.boxmaps import BoxMap, MapStack
from warpspeed.memory.wave.geometry import DIMENSIONS, Box, PerDim
from warpspeed.memory.wave.volumes import FieldLineCounts


def box_array(boxes: Sequence[Box] | np.ndarray) -> np.ndarray:
    """Cell boxes as an int64 array ``(boxes, 3, 2)``."""
    return np.asarray(boxes, dtype=np.int64).reshape(-1, 3, 2)


_array = box_array


@dataclass(frozen=True)
class FieldStacks:
    """A field's loads, stores and all accesses as map stacks at one line size."""

    loads: MapStack
    stores: MapStack
    both: MapStack

    @cached_property
    def separated(self) -> bool:
        """True when no two rows of any of the three stacks can map a cell box to overlapping line
        boxes (:func:`~warpspeed.memory.wave.box_sums.rows_separated`): the field's counts are sums."""
        return all(rows_separated(stack) for stack in (self.loads, self.stores, self.both))

    @cached_property
    def separating_axis(self) -> int:
        """The target coordinate along which the sums match boxes
        (:func:`~warpspeed.memory.wave.box_sums.separating_axis` of all the field's accesses)."""
        return separating_axis(self.both)


def field_stacks(loads: Sequence[BoxMap], stores: Sequence[BoxMap], targets: int) -> FieldStacks:
    """The :class:`FieldStacks` of a field's load and store box maps (``targets`` coordinates)."""
    return FieldStacks(MapStack.covering(loads, targets), MapStack.covering(stores, targets),
                       MapStack.covering([*loads, *stores], targets))


def box_field_counts(stacks: FieldStacks, wave: Sequence[Box], previous: Mapping[str, Sequence[Box]],
                     bands: Sequence[Sequence[Box]] = ()) -> FieldLineCounts | None:
    """Line counts of one field, or None when the compressed grid would be too large.

    Args:
        stacks: the field's maps at the line granularity (loads, stores, both).
        wave: cell boxes of the wave; previous: cell boxes of ``P_x``, ``P_y``, ``P_z``.
        bands: cell boxes of each band; their lines (``|L(B)| + |S(B)|`` per band) are counted on
            the same grid (``FieldLineCounts.band``; 0 without bands).
    """
    cells = [_array(wave), *(_array(b) for b in bands)]
    loads, stores = stacks.loads.images(cells), stacks.stores.images(cells)
    touched = stacks.both.images([_array(previous.get(d, ())) for d in DIMENSIONS])
    sets = {"LW": loads[0], "SW": stores[0], **dict(zip(DIMENSIONS, touched))}
    for i in range(len(bands)):
        sets[f"BL{i}"], sets[f"BS{i}"] = loads[i + 1], stores[i + 1]
    grid = build_grid(sets)
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
        band=sum(grid.size(f"BL{i}") + grid.size(f"BS{i}") for i in range(len(bands))),
    )


#: One field's counting problem: its map stacks, the wave's cell boxes, the previous-neighbour
#: sets' cell boxes per dimension and the bands' cell boxes.
CountRequest = tuple[FieldStacks, Sequence[Box], Mapping[str, Sequence[Box]], Sequence[Sequence[Box]]]


#: Most requests :func:`box_counts_many` counts in one batch: the batch's grids are padded to a
#: common shape, so requests of similar size go together (sorted by their boxes) and a batch stays
#: small enough that the padding costs less than the numpy calls it saves (on the 658 requests of
#: the star3d-r4 ranking's waves, batches of 32 take 0.55 of the time of one batch per grid on the
#: 2-core reference machine; 16: 0.6, 64: more, as larger batches exceed the joint grid's limit).
BATCH_REQUESTS = 32


def box_counts_many(requests: Sequence[CountRequest]) -> list[FieldLineCounts | None]:
    """:func:`box_field_counts` of several requests (the fields of the waves of one or several
    grids), counted together: the requests, ordered by their number of cell boxes and line maps,
    go in batches of at most :data:`BATCH_REQUESTS` (one per number of target coordinates); the
    line boxes of a batch come from one evaluation of the maps (:func:`_joint_images`) and go to
    one call of :func:`warpspeed.memory.wave.box_union.joint_coverage`, each request on its own
    compressed grid, and all its counts come from one product with the grids' weights. A batch
    whose joint grid would be too large is split in two. The number of numpy calls does not grow
    with the number of requests of a batch (the arrays they work on do: a grid's two classes of
    waves cost 1.3-1.5 times one class on the 2-core reference machine). The requests of a field
    whose maps never overlap (:attr:`FieldStacks.separated`) are counted first, field by field, as
    sums of box sizes (:func:`_sum_together`), 3-4 times faster on the lattice-Boltzmann kernels;
    those whose boxes overlap after all join the batches. The integers are those of
    :func:`box_field_counts`; a request whose grid would be too large gets None."""
    results: list[FieldLineCounts | None] = [None] * len(requests)
    by_targets: dict[int, list[int]] = {}  # one batch per number of target coordinates
    for i, request in enumerate(requests):
        by_targets.setdefault(request[0].loads.targets, []).append(i)
    for members in by_targets.values():
        by_field: dict[int, list[int]] = {}  # fields with separated maps, one sum per field
        for i in members:
            if requests[i][0].separated:
                by_field.setdefault(id(requests[i][0]), []).append(i)
        for separated in by_field.values():
            for at in range(0, len(separated), SUM_REQUESTS):
                chunk = separated[at:at + SUM_REQUESTS]
                for i, counts in zip(chunk, _sum_together([requests[i] for i in chunk])):
                    results[i] = counts
        members = [i for i in members if results[i] is None]
        members.sort(key=lambda i: _request_size(requests[i]))
        batches = [members[at:at + BATCH_REQUESTS] for at in range(0, len(members), BATCH_REQUESTS)]
        while batches:
            batch = batches.pop()
            counted = _count_together([requests[i] for i in batch])
            if counted is None and len(batch) > 1:
                half = len(batch) // 2
                batches += [batch[:half], batch[half:]]
                continue
            if counted is None:
                counted = [box_field_counts(*requests[batch[0]])]
            for i, counts in zip(batch, counted):
                results[i] = counts
    return results


#: Most requests of one field with separated maps counted as sums at once (:func:`_sum_together`):
#: their arrays grow with the requests (a few boxes per map each), not with a grid. The rankings of
#: d3q27-srt and copy19-pull (up to 190 requests per field and call) peak at 16 MiB with any limit
#: from 256 on, and take the same time with 64 to 1024 (2-core reference machine).
SUM_REQUESTS = 256


def _sum_together(requests: Sequence[CountRequest]) -> list[FieldLineCounts | None]:
    """The counts of requests of one field with separated maps, as sums of box sizes
    (:func:`~warpspeed.memory.wave.box_sums.disjoint_counts`); None for a request two of whose line
    boxes of one set overlap after all (the grid counts it)."""
    values, valid = disjoint_counts(*_joint_images(requests, max(len(r[3]) for r in requests)),
                                    axis=requests[0][0].separating_axis)
    return [_line_counts(v) if ok else None for v, ok in zip(values.tolist(), valid.tolist())]


def _line_counts(row: Sequence[int]) -> FieldLineCounts:
    """The counts of one request from a row of nine integers: load, store, the overlaps along x, y,
    z, the layers along x, y, z and the bands' lines (the rows both counters produce)."""
    return FieldLineCounts(load=row[0], store=row[1], overlap=PerDim(row[2], row[3], row[4]),
                           layer=PerDim(row[5], row[6], row[7]), band=row[8])


def _request_size(request: CountRequest) -> int:
    """Line boxes of a request's sets (cell boxes x maps), the order of its compressed grid's size."""
    stacks, wave, previous, bands = request
    loads, stores, both = (m.dims.shape[0] for m in (stacks.loads, stacks.stores, stacks.both))
    return ((loads + stores) * (len(wave) + sum(len(b) for b in bands))
            + both * sum(len(previous.get(d, ())) for d in DIMENSIONS))


def _joint_images(requests: Sequence[CountRequest], bands: int) -> tuple[np.ndarray, np.ndarray]:
    """Per request the line boxes of LW, SW, P_x, P_y, P_z and of each band's loads and stores
    (``bands`` of them, empty where the request has fewer) as one array ordered by request, then
    set, and the number of boxes of each set ``(requests, 5 + 2 * bands)``: the maps of each set's
    stack applied to the set's cell boxes, every pair of every set of every request in one
    evaluation (the boxes of a set in any order, as only their union counts)."""
    n_sets, n = 5 + 2 * bands, len(requests)
    targets = requests[0][0].loads.targets
    maps: list[MapStack] = []  # loads, stores, both of each distinct field's stacks
    stack_rows: dict[int, int] = {}  # the first of a field's three entries of ``maps``
    arrays: list[np.ndarray] = []  # the distinct cell-box arrays
    array_of: dict[int, int] = {}
    stack_list: list[int] = []
    part_list: list[list[int]] = []  # per request: its wave's, P_x's, P_y's, P_z's and bands' arrays
    parts_of: dict[tuple[int, int, int], list[int]] = {}  # the fields of one wave share its cells
    empty = np.zeros((0, 3, 2), dtype=np.int64)
    for field_stacks, wave, previous, band_cells in requests:
        key = id(field_stacks)
        if key not in stack_rows:
            stack_rows[key] = len(maps)
            maps += [field_stacks.loads, field_stacks.stores, field_stacks.both]
        stack_list.append(stack_rows[key])
        cells_key = (id(wave), id(previous), id(band_cells))
        parts = parts_of.get(cells_key)
        if parts is None:
            parts = []
            for c in (wave, *(previous.get(d, empty) for d in DIMENSIONS),
                      *(band_cells[j] if j < len(band_cells) else empty for j in range(bands))):
                at = array_of.get(id(c))
                if at is None:
                    at = array_of[id(c)] = len(arrays)
                    arrays.append(box_array(c))
                parts.append(at)
            parts_of[cells_key] = parts
        part_list.append(parts)
    stack_of = np.array(stack_list, dtype=np.int64)
    part_of = np.array(part_list, dtype=np.int64).reshape(n, 4 + bands)  # wave, P_x, P_y, P_z, bands
    n_rows = np.array([m.dims.shape[0] for m in maps], dtype=np.int64)
    n_boxes = np.array([a.shape[0] for a in arrays], dtype=np.int64)
    total_rows, total_boxes = int(n_rows.sum()), int(n_boxes.sum())
    if total_rows == 0 or total_boxes == 0:
        return np.zeros((0, targets, 2), dtype=np.int64), np.zeros((n, n_sets), dtype=np.int64)
    dims = np.concatenate([m.dims for m in maps])
    bounds = np.concatenate([np.stack((m.offset, m.offset_hi), axis=-1) for m in maps])
    scale = np.concatenate([m.scale for m in maps])[..., None]
    line = np.concatenate([m.line for m in maps])[..., None]
    boxes = np.concatenate(arrays)
    # each set's map stack (0 loads, 1 stores, 2 both) and cells (column of ``part_of``)
    kind = np.array([0, 1, 2, 2, 2] + [0, 1] * bands, dtype=np.int64)
    cells_at = np.array([0, 0, 1, 2, 3] + [4 + j for j in range(bands) for _ in (0, 1)], dtype=np.int64)
    stack = (stack_of[:, None] + kind[None, :]).reshape(-1)
    part = part_of[:, cells_at].reshape(-1)
    first_row = (np.cumsum(n_rows) - n_rows)[stack]
    first_box = (np.cumsum(n_boxes) - n_boxes)[part]
    width = n_rows[stack]
    counts = width * n_boxes[part]
    pair = np.repeat(np.arange(counts.size), counts)
    local = positions_in_runs(counts)
    width = width[pair]
    box, row = first_box[pair] + local // width, first_row[pair] + local % width  # each (cell box, map) pair once
    images = np.floor_divide(bounds[row] + scale[row] * boxes[box[:, None], dims[row], :], line[row])
    return images, counts.reshape(n, n_sets)


def _count_together(requests: Sequence[CountRequest]) -> list[FieldLineCounts] | None:
    bands = max(len(r[3]) for r in requests)
    coverage = joint_coverage(*_joint_images(requests, bands))
    if coverage is None:
        return None
    covered, weights = coverage
    n = len(requests)
    cov = covered.reshape(n, covered.shape[1], -1)
    load_w, store_w, px, py, pz = (cov[:, k] for k in range(5))
    queries = [load_w, store_w, load_w & px, load_w & py & ~px, load_w & pz & ~(px | py),
               load_w | px, load_w | py, load_w | pz, *(cov[:, k] for k in range(5, 5 + 2 * bands))]
    stacked = np.stack(queries, axis=1)  # (requests, queries, cells)
    # exact integers: an integer einsum (no BLAS), about five times faster than masking and summing
    sums = np.einsum("nqc,nc->nq", stacked, weights.reshape(n, -1))
    rows = np.concatenate((sums[:, :8], sums[:, 8:].sum(axis=1, keepdims=True)), axis=1).tolist()  # Python ints
    return [_line_counts(row) for row in rows]
