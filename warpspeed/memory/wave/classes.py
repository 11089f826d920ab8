"""The waves of a grid, grouped into classes by the block-plane boundaries they cross.

Waves
    Blocks are launched in x-then-y-then-z order (linear index ``bx + gx * (by + gy * bz)``
    over the grid ``(gx, gy, gz)``) and a wave is ``B = blocks per SM x SMs`` consecutive
    blocks (:class:`warpspeed.launch.geometry.Wave`), so the grid's ``N = gx * gy * gz`` blocks
    form ``K = floor(N / B)`` full waves, wave ``k`` being the blocks ``k * B .. k * B + B - 1``,
    and, when ``B`` does not divide ``N``, one last partial wave of ``N mod B`` blocks. The DRAM
    volumes of the model are averages over the ``K`` full waves; the partial wave (at most one
    wave, with fewer blocks than the others, at the very end of the grid) is left out.

Classes
    A block plane holds ``P = gx * gy`` blocks. Wave ``k`` starts at offset ``t_k = k * B mod P``
    within its plane and contains ``c_k = floor((t_k + B - 1) / P)`` plane boundaries (for
    ``B < P``: 0 or 1; for larger waves ``floor((B - 1) / P)`` or one more). A wave that
    crosses a boundary covers two slabs of block planes, each with its own z halo of the
    accesses, so its footprint per lattice update is larger than that of a wave inside one
    plane: this is the main difference between waves, and the classes are the values of ``c``.
    Within a class the waves differ only where their first and last partial block rows, and
    the plane boundary inside them, fall; for accesses that are translations (stencils, LBM
    streaming) a shift of a wave by whole block rows or planes leaves its line counts
    unchanged, so what remains are the few lines at those cuts: for the 25-point stencil of
    Ernst et al. 2023 on the paper's grid, the compulsory volumes of the waves inside one
    plane differ by 0.1 %, those of crossing waves by up to 12 % between a boundary near
    the wave's end and one in its middle.

Representatives and weights
    ``t_k`` is periodic in ``k`` with period ``P / gcd(B, P)``, so the number of full waves of
    each class is counted from one period (cost independent of the number of waves). Each
    class is evaluated once, at a representative: for ``c = 0`` the wave of the class nearest
    the middle of the grid (away from the first and last planes); for ``c >= 1`` the waves
    whose first boundary lies at the median position among the class's waves (blocks before
    the boundary), and of those the one nearest the middle of the grid. The class weight is its
    number of full waves. There are at most two classes, so an average costs at most two
    wave evaluations, whatever the domain.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from warpspeed.errors import LaunchError


@dataclass(frozen=True)
class WaveClass:
    """Full waves that cross the same number of block-plane boundaries.

    Attributes:
        crossings: block-plane boundaries inside each wave of the class.
        waves: number of full waves of the grid in the class (the weight).
        first_block: linear index of the first block of the representative wave.
        blocks: blocks per wave.
    """

    crossings: int
    waves: int
    first_block: int
    blocks: int


def wave_classes(grid: tuple[int, int, int], blocks_per_wave: int) -> tuple[WaveClass, ...]:
    """The classes of the full waves of ``grid`` with ``blocks_per_wave`` blocks per wave
    (module docstring), in order of increasing crossings."""
    gx, gy, gz = grid
    if min(gx, gy, gz, blocks_per_wave) <= 0:
        raise LaunchError(f"grid {grid} and wave size {blocks_per_wave} must be positive")
    plane = gx * gy
    total = plane * gz
    size = min(blocks_per_wave, total)
    full = total // size
    period = plane // math.gcd(size, plane)
    listed = min(full, period)
    k = np.arange(listed, dtype=np.int64)
    offset = (k * size) % plane
    crossings = (offset + size - 1) // plane
    counts = np.bincount(crossings) * (full // listed)
    rest = full % listed
    if rest:
        counts += np.bincount(crossings[:rest], minlength=counts.size)
    middle = (full - 1) / 2
    classes = []
    for c in np.flatnonzero(counts):
        members = k[crossings == c]
        if c > 0:
            before = plane - offset[members]  # blocks of the wave before its first boundary
            median = np.sort(before)[(before.size - 1) // 2]
            members = members[before == median]
        first = _nearest(members, period, full, middle)
        classes.append(WaveClass(crossings=int(c), waves=int(counts[c]), first_block=first * size, blocks=size))
    return tuple(classes)


def _nearest(members: np.ndarray, period: int, full: int, middle: float) -> int:
    """The wave index ``m + j * period`` (``m`` in ``members``, ``j >= 0``, below ``full``)
    nearest ``middle``."""
    top = (full - 1 - members) // period
    j = np.clip(np.round((middle - members) / period), 0, top).astype(np.int64)
    candidates = members + j * period
    return int(candidates[np.argmin(np.abs(candidates - middle))])
