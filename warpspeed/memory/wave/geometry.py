"""Geometry of the wave and of its previous-neighbour sets, as boxes of blocks and of cells.

Thread and cell sets
    The representative wave is the linear block range ``first_block .. first_block + blocks - 1``
    of :class:`~warpspeed.launch.geometry.Wave`; blocks are numbered ``bx + gx * (by + gy * bz)``
    (x fastest) over ``launch.grid = (gx, gy, gz)``. A linear range of blocks is a union of at
    most five boxes in block coordinates (partial first row, full rows up to the end of the
    first plane, full planes, full rows of the last plane, partial last row). A thread of block
    ``b`` with thread index ``t`` updates the cells ``(b * blockDim + t) * fold + j`` with
    ``0 <= t < blockDim`` and ``0 <= j < fold``; per dimension these cells are exactly the
    interval ``[b * blockDim * fold, (b + 1) * blockDim * fold)``, so a block box maps to one cell
    box. Each box is intersected with the valid domain ``0 <= cell < domain`` (the kernel's
    ``if (cell < N)`` guard).

Previous-neighbour sets (Ernst et al. 2023, section 4.4.2)
    For dimension ``d`` with block-index stride ``R_x = 1``, ``R_y = gx``, ``R_z = gx * gy`` in
    launch order, the previous-neighbour set ``P_d`` is the set of blocks launched within one
    reuse distance along ``d`` before the wave: linear block indices
    ``max(0, first - R_d) .. first - 1``. So ``P_x`` is the block launched just before the wave,
    ``P_y`` the block row (``gx`` blocks) before it, ``P_z`` the block plane (``gx * gy`` blocks)
    before it. Every block of the wave whose neighbour one block back along ``d`` lies outside
    the wave finds that neighbour in ``P_d``, together with everything launched in between, which
    is the data that competes for the cache between the two uses (the layer condition). When the
    wave spans more than one row (plane), ``P_y`` (``P_z``) is the last row (plane) of the
    previous wave. ``P_d`` is empty when the grid has a single block along ``d`` (no block has a
    predecessor along ``d``) or when the wave starts at block 0. The windows are nested
    (``P_x ⊆ P_y ⊆ P_z``).

The y band (the cached volume of the x and y layer curve)
    The curve of the x and y layer hits (``y_layer``, :mod:`warpspeed.memory.capacity.curves`) is
    the one of the reference implementation of Ernst et al. 2023 as of 2022 (repository
    te42kyfo/warpspeed, file volumes_isl3d.py, commit c214074), which evaluates it at the volume
    of *its* x and y sets: for a wave of ``B`` blocks that spans ``w_x = min(B, gx)`` blocks of a
    row and ``w_y = min(gy, ceil(B / gx))`` block rows, the y set is the ``w_y`` full block rows
    before the wave within its block plane, and the x set (only when the wave is shorter than a
    row, ``B < gx``) the ``w_x`` blocks before the wave within its row. That code places its
    (rectangular) wave at the end of a row; warpspeed's waves are linear block ranges, so the
    sets are anchored at the wave's first block ``f``: the y band is the linear block range
    ``max(plane start, f - w_y * gx) .. f - 1`` and the x band ``max(row start, f - w_x) .. f - 1``
    (empty when ``B >= gx``). For a wave that starts at the beginning of a row these are exactly
    the sets of that code; otherwise they hold the same number of blocks, shifted by the wave's
    offset in its row. :func:`wave_cell_arrays` gives them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from warpspeed.errors import LaunchError
from warpspeed.launch.geometry import Launch

#: Dimensions of the previous-neighbour sets, in the order overlaps are attributed.
DIMENSIONS: tuple[str, str, str] = ("x", "y", "z")

#: Inclusive ``(lo, hi)`` index ranges per dimension x, y, z (of blocks or of cells).
Box = tuple[tuple[int, int], tuple[int, int], tuple[int, int]]


@dataclass(frozen=True)
class PerDim:
    """One value per dimension x, y, z (of a previous-neighbour set)."""

    x: float
    y: float
    z: float

    def __getitem__(self, dim: str) -> float:
        if dim not in DIMENSIONS:
            raise KeyError(f"dimension {dim!r}; allowed: x, y, z")
        return getattr(self, dim)

    def __iter__(self) -> Iterator[float]:
        return iter((self.x, self.y, self.z))

    def items(self) -> tuple[tuple[str, float], ...]:
        return tuple(zip(DIMENSIONS, (self.x, self.y, self.z)))


def range_cell_arrays(lo: np.ndarray, hi: np.ndarray, grid: np.ndarray, cells: np.ndarray,
                      domain: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The valid cells of inclusive linear block ranges ``lo .. hi`` (int64 arrays of any shape;
    ``lo > hi``: empty) as cell boxes ``(boxes, 3, 2)``, range by range in C order, and the number
    of boxes of each range (the shape of ``lo``): each range is split into the five candidate boxes
    of the module docstring (partial first row, rows to the end of the first plane, full planes,
    rows of the last plane, partial last row; within one plane the
    second runs to the last row but one and the third and fourth are empty, within one row only the
    first, ending at the last block), block box ``b`` covers cells ``[b * C, (b + 1) * C)`` with
    ``C`` the cells per block, clipped to ``0 <= cell < domain``, and empty boxes are left out.
    ``grid``, ``cells`` and ``domain``: blocks, cells per block and cells per axis, shape
    ``(..., 3)``, broadcast against the ranges (one launch: shape ``(3,)``)."""
    g, c, n = grid, cells[..., None, :], domain[..., None, :]
    sx, sy, sz = lo % g[..., 0], (lo // g[..., 0]) % g[..., 1], lo // (g[..., 0] * g[..., 1])
    ex, ey, ez = hi % g[..., 0], (hi // g[..., 0]) % g[..., 1], hi // (g[..., 0] * g[..., 1])
    top_x, top_y = (np.broadcast_to(g[..., axis] - 1, sx.shape) for axis in (0, 1))
    zero = np.zeros_like(sx)
    one_plane, one_row = sz == ez, (sz == ez) & (sy == ey)
    # (x0, x1, y0, y1, z0, z1) of the five candidates
    candidates = np.stack([
        np.stack([sx, np.where(one_row, ex, top_x), sy, sy, sz, sz], axis=-1),
        np.stack([zero, top_x, sy + 1, np.where(one_plane, ey - 1, top_y), sz, sz], axis=-1),
        np.stack([zero, top_x, zero, top_y, sz + 1, np.where(one_plane, sz, ez - 1)], axis=-1),
        np.stack([zero, top_x, zero, np.where(one_plane, -1, ey - 1), ez, ez], axis=-1),
        np.stack([zero, np.where(one_row, -1, ex), ey, ey, ez, ez], axis=-1),
    ], axis=-2)  # (..., 5, 6)
    boxes = candidates.reshape(*candidates.shape[:-1], 3, 2)
    valid = np.all(boxes[..., 0] <= boxes[..., 1], axis=-1) & (lo <= hi)[..., None]
    cell_lo = boxes[..., 0] * c
    cell_hi = np.minimum((boxes[..., 1] + 1) * c, n) - 1
    valid &= np.all(cell_lo <= cell_hi, axis=-1)
    return np.stack((cell_lo, cell_hi), axis=-1)[valid], valid.sum(axis=-1)


def launch_range_cells(launch: Launch, ranges: Sequence[tuple[int, int]]) -> np.ndarray:
    """The cell boxes ``(boxes, 3, 2)`` of inclusive linear block ranges ``(first, last)`` of one
    launch (:func:`range_cell_arrays`); LaunchError for a range of blocks outside its grid."""
    for first, last in ranges:
        _check_range(launch, first, last)
    bounds = np.array(ranges, dtype=np.int64).reshape(-1, 2)
    return range_cell_arrays(bounds[:, 0], bounds[:, 1], np.array(launch.grid, dtype=np.int64),
                             np.array(launch.cells_per_block, dtype=np.int64),
                             np.array(launch.domain, dtype=np.int64))[0]


def _check_range(launch: Launch, first: int, last: int) -> None:
    """LaunchError unless the blocks ``first .. last`` (none when ``first > last``) lie in the grid."""
    if first <= last and not 0 <= first <= last < launch.total_blocks:
        raise LaunchError(f"block range {first}..{last} lies outside the grid {launch.grid}")


def box_cells(boxes: np.ndarray) -> int:
    """Number of cells in disjoint cell boxes ``(boxes, 3, 2)`` (inclusive bounds)."""
    return int(np.prod(boxes[..., 1] - boxes[..., 0] + 1, axis=-1).sum())


@dataclass(frozen=True)
class WaveCells:
    """The cells of the wave, of its previous-neighbour sets and of its x and y bands, as
    disjoint cell boxes (per set).

    Attributes:
        wave: cell boxes of the wave.
        previous: per dimension, the cell boxes of ``P_d`` (empty when the set is empty).
        bands: the cell boxes of each non-empty band (the x band, then the y band).
        lups: valid cells of the wave (lattice updates).
        previous_lups: valid cells of each ``P_d``.
    """

    wave: list[Box]
    previous: dict[str, list[Box]]
    lups: int
    previous_lups: PerDim
    bands: tuple[list[Box], ...] = ()


def wave_cells(launch: Launch, first_block: int, blocks: int) -> WaveCells:
    """Cell boxes of the wave ``first_block .. first_block + blocks - 1``, of its
    previous-neighbour sets and of its bands, as lists (:func:`wave_cell_arrays` of the one wave)."""
    return wave_cell_arrays([(launch, first_block, blocks)])[0].as_lists()


@dataclass(frozen=True)
class WaveCellArrays:
    """The cell boxes of :class:`WaveCells` as int64 arrays ``(boxes, 3, 2)`` (inclusive bounds),
    the form the box counter takes (:mod:`warpspeed.memory.wave.box_counts`).

    Attributes:
        wave: cell boxes of the wave.
        previous: per dimension, the cell boxes of ``P_d`` (no rows when the set is empty).
        bands: the cell boxes of each non-empty band.
        lups: valid cells of the wave.
        previous_lups: valid cells of each ``P_d``.
    """

    wave: np.ndarray
    previous: dict[str, np.ndarray]
    bands: tuple[np.ndarray, ...]
    lups: int
    previous_lups: PerDim

    def as_lists(self) -> WaveCells:
        """The same boxes as lists of tuples (:class:`WaveCells`, the form the ISL counter takes)."""
        def boxes(part: np.ndarray) -> list[Box]:
            return [((x0, x1), (y0, y1), (z0, z1)) for (x0, x1), (y0, y1), (z0, z1) in part.tolist()]

        return WaveCells(wave=boxes(self.wave), previous={d: boxes(b) for d, b in self.previous.items()},
                         lups=self.lups, previous_lups=self.previous_lups, bands=tuple(boxes(b) for b in self.bands))


#: The block ranges of a wave that :func:`wave_cell_arrays` evaluates, in the order of its parts:
#: the wave, ``P_x``, ``P_y``, ``P_z``, the x band and the y band.
_PARTS = 6


def wave_cell_arrays(waves: Sequence[tuple[Launch, int, int]]) -> list[WaveCellArrays]:
    """The cell boxes of each wave ``(launch, first block, blocks)``, of its previous-neighbour
    sets and of its bands, every part of every wave evaluated together: each part's linear block
    range (the wave; ``P_x``, ``P_y``, ``P_z``: the block, the row and the plane before the wave,
    empty along an axis of one block or at block 0; the x and y bands of the module docstring)
    as cell boxes (:func:`range_cell_arrays`). Raises LaunchError for a wave of blocks outside its
    grid."""
    if not waves:
        return []
    for launch, first_block, blocks in waves:
        _check_range(launch, first_block, first_block + blocks - 1)
    launches = [w[0] for w in waves]
    grid = np.array([launch.grid for launch in launches], dtype=np.int64)  # (W, 3)
    cells = np.array([launch.cells_per_block for launch in launches], dtype=np.int64)
    domain = np.array([launch.domain for launch in launches], dtype=np.int64)
    first = np.array([w[1] for w in waves], dtype=np.int64)
    blocks = np.array([w[2] for w in waves], dtype=np.int64)
    gx, gy, gz = grid.T
    plane = gx * gy
    # every part's inclusive linear block range (lo > hi: empty)
    lo = np.empty((len(waves), _PARTS), dtype=np.int64)
    hi = np.empty_like(lo)
    lo[:, 0], hi[:, 0] = first, first + blocks - 1
    for axis, stride in enumerate((1, gx, plane)):  # P_x, P_y, P_z: empty along an axis of one block or at block 0
        lo[:, axis + 1] = np.maximum(0, first - stride)
        hi[:, axis + 1] = np.where((grid[:, axis] == 1) | (first == 0), -1, first - 1)
    row_start, plane_start = first - first % gx, first - first % plane
    rows = np.minimum(gy, -(-blocks // gx))
    lo[:, 4], hi[:, 4] = np.maximum(row_start, first - blocks), np.where(blocks < gx, first - 1, -1)
    lo[:, 5], hi[:, 5] = np.maximum(plane_start, first - rows * gx), first - 1
    # wave by wave, part by part; counts (W, parts)
    every, counts = range_cell_arrays(lo, hi, grid[:, None, :], cells[:, None, :], domain[:, None, :])
    sizes = np.prod(every[..., 1] - every[..., 0] + 1, axis=-1)
    ends = np.cumsum(counts.reshape(-1))
    starts = ends - counts.reshape(-1)
    # valid cells per part: differences of the running sum at the parts' ends (0 for an empty part)
    running = np.concatenate(([0], np.cumsum(sizes)))
    part_cells = (running[ends] - running[starts]).tolist()
    starts, ends = starts.tolist(), ends.tolist()
    result = []
    for w in range(len(waves)):
        at = w * _PARTS
        parts = [every[starts[at + p]:ends[at + p]] for p in range(_PARTS)]
        result.append(WaveCellArrays(
            wave=parts[0], previous=dict(zip(DIMENSIONS, parts[1:4])),
            bands=tuple(b for b in parts[4:] if b.shape[0]),
            lups=part_cells[at], previous_lups=PerDim(*part_cells[at + 1:at + 4])))
    return result
