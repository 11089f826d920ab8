"""Every full wave of the grid, grouped only where the counts are provably equal: the exact average.

:mod:`warpspeed.memory.wave.classes` evaluates at most three representative waves and weights
them; waves of one class still differ in the lines at their cuts, so that average is close to,
but not equal to, the average over every full wave. This module gives the exact average: it
groups the ``K = floor(N / B)`` full waves of the grid (``N`` blocks, ``B`` blocks per wave)
into classes whose members have *identical* line counts, and
:meth:`warpspeed.memory.wave.WaveModel.grid_volumes` (``exact=True``) evaluates one wave per
class with the class's number of waves as its weight. With these weights the averages of
:class:`warpspeed.memory.wave.GridWaveVolumes` are the sums over every full wave divided by the
total lattice updates (per-lup volumes) or by ``K`` (layer volumes, oversubscription factors),
which the tests check against a brute-force enumeration of every wave.

Which waves are equal
    Wave ``k`` is the blocks ``kB .. kB + B - 1`` and its previous-neighbour sets ``P_d`` the
    ``R_d`` blocks before it (``R_x = 1``, ``R_y = gx``, ``R_z = P = gx * gy``; clipped at block 0;
    :mod:`warpspeed.memory.wave.geometry`). Two waves ``k`` and ``k'`` with the same offset
    ``t = kB mod P`` in their block plane are the same block sets shifted by whole block planes,
    and so are their previous-neighbour sets, unless

    * the wave starts in the first block plane (``kB < P``): its ``P_z`` (and for ``kB < gx`` its
      ``P_y``) is cut at block 0 (in a grid of one block plane, without ``P_z``: the waves that
      start in the first block row);
    * the wave reaches the last block plane and the domain does not fill that plane (the
      kernel's domain guard clips the plane's cells: ``nz mod (block_z * fold_z) != 0``).

    A shift by whole block planes moves every cell by a multiple of ``block_z * fold_z`` in z; an
    access whose z coordinate enters its line address as ``z + c`` in a non-contiguous index
    (every box-preserving access of a field stored x-fastest: stencils, lattice-Boltzmann
    streaming; :mod:`warpspeed.memory.wave.boxmaps`) moves its lines by the same amount, so every
    union and intersection of footprints has the same number of lines. Waves of the two kinds
    above, and every wave of a kernel whose fields are not all of that kind, form a class of
    their own.

    Within a block plane, waves that lie between the plane's first and last block rows with a
    margin (below) are equal when they start at the same column offset ``r = kB mod gx``, for
    accesses that read y as ``y + c`` too. A shift of such a wave by one block row translates the
    wave, ``P_x`` and ``P_y``. ``P_z`` is not translated: it is the tail of the previous plane from
    the wave's start plus the head of the wave's plane up to it, and the shift moves one block
    row from the tail to the head. The tail loses the lines only its first row touched, the head
    (with the wave) gains those of the plane's first row: both are the increment of a stack of
    full block rows (``|A(head)| + |A(tail)|`` of one plane is the plane's count plus the lines
    both touch at the cut, which moves with the cut), and the lines that tail and head (with the
    wave) share lie at the cut and at the wave, which move together. So every count of
    :class:`~warpspeed.memory.wave.volumes.FieldLineCounts` stays the same as long as nothing
    near the cut or the wave reaches the plane's first or last row: two cells share a line only
    if their y differ by at most the spread of the ``c`` (``ceil(spread / cells per block row)``
    block rows), and the wave must keep :data:`ROW_MARGIN_BOTTOM` /
    :data:`ROW_MARGIN_TOP` further rows from them. This uses the shift by planes as well (tail
    and head lie in different planes), except for grids of one block plane, which have no
    ``P_z``. Waves across a plane boundary are not grouped this way: both ends are tied to the
    boundary. The wave's y band (:mod:`warpspeed.memory.wave.geometry`: the ``w_y`` block rows
    before the wave, cut at the start of its plane) is translated with the wave only when it is
    not cut, so a wave is grouped by rows only if it starts at least ``w_y`` rows into its plane.

Cost
    One wave evaluation per class. The waves near a plane's first and last rows, across its
    boundaries and in the first plane differ from plane to plane: for the 168 configurations of
    the 25-point stencil's paper space on 640 x 512 x 512 there are 18 701 classes (111 per
    configuration on average, up to 664) against 454 representative wave classes in
    :mod:`warpspeed.memory.wave.classes`, and the number grows with the domain (2 378 for
    blocks of 1 x 64 x 16 threads on 2048^3). So this path is an option of single predictions
    and rankings alike (``warpspeed predict --exact-waves``, ``warpspeed rank --exact-waves``; a
    caller may bound it, :class:`warpspeed.predict.Predictor`'s ``exact_budget``);
    ``benchmarks/README.md`` has the measured times.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from warpspeed.errors import LaunchError
from warpspeed.launch.geometry import Launch
from warpspeed.memory.wave.classes import WaveClass

#: Block rows kept between the first row of a wave (the cut of its ``P_z``) and the plane's
#: first row, beyond the ``ceil(spread / cells per block row)`` rows across which two cells can
#: share a line (module docstring): the wave's staggered first row plus one row of headroom
#: (the brute-force tests fail with no extra row).
ROW_MARGIN_BOTTOM = 2

#: Block rows kept between the last row of a wave and the plane's last row, beyond the sharing
#: rows: the wave's staggered last row, the translate of the wave by one row, and a partial
#: last block row of the domain (cells cut by the domain guard), which must not be reached.
ROW_MARGIN_TOP = 3


@dataclass(frozen=True)
class ShiftInvariance:
    """Which shifts of the cells leave every field's line counts unchanged.

    Attributes:
        planes: shifts by whole block planes (z).
        row_spread_cells: for shifts by whole block rows (y), the largest difference between
            the ``c`` of two accesses ``y + c`` of one field (cells): two cells share a line only
            if their y differ by at most this. None when some access reads y otherwise (no
            row-shift grouping).
    """

    planes: bool
    row_spread_cells: int | None


def exact_wave_classes(launch: Launch, blocks_per_wave: int,
                       invariance: ShiftInvariance | bool) -> tuple[WaveClass, ...]:
    """The full waves of ``launch``'s grid in classes of equal line counts (module docstring).

    Args:
        launch: the launch geometry (grid, domain, cells per block).
        blocks_per_wave: ``B``, blocks per wave (at most the grid's blocks are used).
        invariance: the shifts that leave the kernel's counts unchanged
            (:meth:`warpspeed.memory.wave.WaveModel.shift_invariance`); a bool for shifts by
            block planes only. Without any, every wave is a class of its own.

    Returns classes in order of their first wave; each class's representative is its first
    wave, ``waves`` its number of full waves, ``crossings`` / ``row_crossings`` the block-plane
    and block-row boundaries inside its waves (as in :mod:`warpspeed.memory.wave.classes`).
    """
    if isinstance(invariance, bool):
        invariance = ShiftInvariance(planes=invariance, row_spread_cells=None)
    gx, gy, gz = launch.grid
    if min(gx, gy, gz, blocks_per_wave) <= 0:
        raise LaunchError(f"grid {launch.grid} and wave size {blocks_per_wave} must be positive")
    plane = gx * gy
    total = plane * gz
    size = min(blocks_per_wave, total)
    first = np.arange(total // size, dtype=np.int64) * size
    keys = -1 - first  # every wave its own class unless a shift maps it onto another
    if invariance.planes or gz == 1:
        last = first + size - 1
        reach = plane if gz > 1 else (gx if gy > 1 else 1)  # the widest non-empty window P_d
        clipped = gz > 1 and launch.domain[2] % launch.cells_per_block[2] != 0
        special = (first < reach) | (clipped & (last // plane == gz - 1))
        t = first % plane
        keys = np.where(special, keys, t)
        if invariance.row_spread_cells is not None:
            sharing = math.ceil(invariance.row_spread_cells / launch.cells_per_block[1])
            start_row, end_row = t // gx, (last % plane) // gx
            band_rows = min(gy, -(-size // gx))  # the y band's rows must lie in the wave's plane
            rows = (~special & (last // plane == first // plane)
                    & (start_row >= max(sharing + ROW_MARGIN_BOTTOM, band_rows))
                    & (end_row + sharing + ROW_MARGIN_TOP <= gy - 1))
            keys = np.where(rows, plane + t % gx, keys)  # one class per column offset
    unique, representative, counts = np.unique(keys, return_index=True, return_counts=True)
    order = np.argsort(representative, kind="stable")
    classes = []
    for i in order.tolist():
        start = int(first[representative[i]])
        last_block = start + size - 1
        planes = last_block // plane - start // plane
        rows_crossed = None if planes else last_block // gx - start // gx
        classes.append(WaveClass(crossings=planes, row_crossings=rows_crossed, waves=int(counts[i]),
                                 first_block=start, blocks=size))
    return tuple(classes)
