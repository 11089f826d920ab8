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
      ``P_y``) is cut at block 0;
    * the wave reaches the last block plane and the domain does not fill that plane (the
      kernel's domain guard clips the plane's cells: ``nz mod (block_z * fold_z) != 0``).

    A shift by whole block planes moves every cell by a multiple of ``block_z * fold_z`` in z; an
    access whose z coordinate enters its line address as ``z + c`` in a non-contiguous index
    (every box-preserving access of a field stored x-fastest: stencils, lattice-Boltzmann
    streaming; :mod:`warpspeed.memory.wave.boxmaps`) moves its lines by the same amount, so every
    union and intersection of footprints has the same number of lines. Waves of the two kinds
    above, and every wave of a kernel whose fields are not all of that kind, form a class of
    their own.

Cost
    One wave evaluation per class: ``min(K, P / gcd(B, P))`` classes plus the waves of the first
    and of a partial last block plane, up to one per full wave (``K``) for the 25-point stencil on
    the 640 x 512 x 512 grid (758 waves for blocks of 16 x 2 x 32), so this path is for single
    predictions and for measuring how far the representative classes are from the exact
    average, not for ranking large configuration spaces.
"""

from __future__ import annotations

import numpy as np

from warpspeed.errors import LaunchError
from warpspeed.launch.geometry import Launch
from warpspeed.memory.wave.classes import WaveClass


def exact_wave_classes(launch: Launch, blocks_per_wave: int, plane_shift_invariant: bool) -> tuple[WaveClass, ...]:
    """The full waves of ``launch``'s grid in classes of equal line counts (module docstring).

    Args:
        launch: the launch geometry (grid, domain, cells per block).
        blocks_per_wave: ``B``, blocks per wave (at most the grid's blocks are used).
        plane_shift_invariant: True when every field's line counts are unchanged by a shift of
            the cells by whole block planes (:meth:`warpspeed.memory.wave.WaveModel.plane_shift_invariant`);
            False puts every wave in a class of its own.

    Returns classes in order of their first wave; each class's representative is its first
    wave, ``waves`` its number of full waves, ``crossings`` / ``row_crossings`` the block-plane
    and block-row boundaries inside its waves (as in :mod:`warpspeed.memory.wave.classes`).
    """
    gx, gy, gz = launch.grid
    if min(gx, gy, gz, blocks_per_wave) <= 0:
        raise LaunchError(f"grid {launch.grid} and wave size {blocks_per_wave} must be positive")
    plane = gx * gy
    total = plane * gz
    size = min(blocks_per_wave, total)
    first = np.arange(total // size, dtype=np.int64) * size
    if plane_shift_invariant:
        clipped = launch.domain[2] % launch.cells_per_block[2] != 0
        special = (first < plane) | (clipped & ((first + size - 1) // plane == gz - 1))
        keys = np.where(special, -1 - first, first % plane)
    else:
        keys = -1 - first
    unique, representative, counts = np.unique(keys, return_index=True, return_counts=True)
    order = np.argsort(representative, kind="stable")
    classes = []
    for i in order.tolist():
        start = int(first[representative[i]])
        last = start + size - 1
        planes = last // plane - start // plane
        rows = None if planes else last // gx - start // gx
        classes.append(WaveClass(crossings=planes, row_crossings=rows, waves=int(counts[i]),
                                 first_block=start, blocks=size))
    return tuple(classes)
