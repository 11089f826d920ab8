"""The waves of a grid, grouped into classes by the block-row and block-plane boundaries they cross.

Waves
    Blocks are launched in x-then-y-then-z order (linear index ``bx + gx * (by + gy * bz)``
    over the grid ``(gx, gy, gz)``) and a wave is ``B = blocks per SM x SMs`` consecutive
    blocks (:class:`warpspeed.launch.geometry.Wave`), so the grid's ``N = gx * gy * gz`` blocks
    form ``K = floor(N / B)`` full waves, wave ``k`` being the blocks ``k * B .. k * B + B - 1``,
    and, when ``B`` does not divide ``N``, one last partial wave of ``N mod B`` blocks. The DRAM
    volumes of the model are averages over the ``K`` full waves; the partial wave (at most one
    wave, with fewer blocks than the others, at the very end of the grid) is left out.

Classes
    A block row holds ``gx`` blocks and a block plane ``P = gx * gy``. Wave ``k`` starts at
    offset ``r_k = k * B mod gx`` within its row and ``t_k = k * B mod P`` within its plane; it
    contains ``cy_k = floor((r_k + B - 1) / gx)`` row boundaries and ``cz_k = floor((t_k + B -
    1) / P)`` plane boundaries (a plane boundary is a row boundary too). The class of a wave is
    ``(cz, cy)``. Each part of a wave on either side of a boundary carries its own halo of the
    accesses: a wave across a plane boundary covers two slabs of block planes, each with the z
    halo, and its rows on both sides each have their own y halo at the cut, so its footprint per
    lattice update is larger than that of a wave inside one plane (37 % for the 25-point stencil
    with blocks of 16 x 2 x 32 threads on the paper's 640 x 512 x 512 grid); likewise a wave
    across a row boundary repeats the x halo and the partly used sectors at the cut (2.4 % for
    blocks of 1 x 32 x 32). These are the differences between waves that the classes separate;
    ``cy`` and ``cz`` each take at most two values (``floor`` and ``ceil`` of the wave length in
    rows or planes). The waves across a plane boundary form one class per ``cz`` whatever their
    ``cy``: the plane's halo dominates their difference, and they are few, so a further
    evaluation would cost more than it changes. Hence at most three classes: for waves shorter
    than a plane, two values of ``cy`` inside a plane and one class across a boundary; for
    longer waves, which all cross a boundary, the two values of ``cz``.

    Within a class the waves differ only in where their first and last partial block rows and
    their boundaries fall. For accesses that are translations (stencils, LBM streaming) a shift
    of a wave by whole block rows or planes leaves its line counts unchanged, so what remains
    are the lines at the cuts: for the 25-point stencil on the paper's grid, the compulsory
    volumes of the waves of one class differ by at most 0.1 % (waves inside a plane) and 12 %
    (waves across a plane boundary, between a boundary near the wave's end and one in its
    middle); the class average of the whole grid lies 0.09 % from the enumeration of every
    full wave (16.139 against 16.1245 B/lup for the 16 x 2 x 32 blocks). For waves of few blocks
    per row the differences are larger (the position of the wave within the row decides which
    of its overlaps count for x, y or z), which the tests bound on small grids.

Representatives and weights
    ``r_k`` and ``t_k`` are periodic in ``k`` with period ``P / gcd(B, P)``, so the number of full
    waves of each class (its weight) is counted from one period: the cost does not grow with the
    number of waves. Up to :data:`ENUMERATED_WAVES` waves the period is listed; a longer one (large
    planes: a period of 2048 waves for 2048^3 cells in blocks of 32 x 8 x 4 and 264 blocks per wave)
    is counted from the residues of ``t_k`` and ``r_k`` (:func:`_residue_classes`): the waves across
    a plane boundary one residue each (at most ``B / gcd(B, P) + 1``), the others by their row
    offset (``gx / gcd(B, gx)`` of them), so that the cost does not grow with the plane either; more
    row offsets than :data:`ENUMERATED_WAVES`, or a representative not found within
    :data:`SEARCH_STEPS` steps, fall back to the listing. Each class is evaluated once, at a
    representative: among the waves whose first boundary (a plane boundary for ``cz >= 1``, else a
    row boundary for ``cy >= 1``) lies at the median position among the class's waves (counted in
    blocks before the boundary), the one nearest the middle of the grid that starts after the first
    block row of its plane. The last condition keeps the representative's previous-neighbour set
    along y (the block row before the wave) in the same plane: a wave that starts in the first row
    of a plane (about ``1 / gy`` of the waves) finds the data of its y neighbours only through the z
    window, and as a representative it would give its whole class no y reuse. Those waves, and the
    waves of the first block plane (whose previous-neighbour set along z is cut at the start of the
    grid, ``1 / gz`` of the waves), are counted with the class of their crossings but never
    represent it; their overlaps differ from the representative's. An average costs one wave
    evaluation per class, at most three, whatever the domain.

Against the exact average
    :mod:`warpspeed.memory.wave.exact` averages over every full wave exactly, at one evaluation
    per class of equal waves (18 701 evaluations instead of 454 for the 168 configurations of
    the 25-point stencil's paper space on 640 x 512 x 512, 19.8 s instead of 1.4 s). Over that
    space the class average differs from the exact one by at most 0.29 % in the compulsory DRAM
    load, 0.38 % in the DRAM volume and 0.22 % in the predicted lup/s, and the ten best configurations
    are the same in the same order (``benchmarks/bench_exact_waves.py``,
    ``benchmarks/results/exact_waves.json``), so the predictor uses the classes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from warpspeed.errors import LaunchError


@dataclass(frozen=True)
class WaveClass:
    """Full waves that cross the same numbers of block-plane and block-row boundaries.

    Attributes:
        crossings: block-plane boundaries inside each wave of the class.
        row_crossings: block-row boundaries inside each wave of the class (plane boundaries
            included); None for waves across a plane boundary, which form one class whatever
            their rows.
        waves: number of full waves of the grid in the class (the weight).
        first_block: linear index of the first block of the representative wave.
        blocks: blocks per wave.
    """

    crossings: int
    row_crossings: int | None
    waves: int
    first_block: int
    blocks: int


def wave_classes(grid: tuple[int, int, int], blocks_per_wave: int) -> tuple[WaveClass, ...]:
    """The classes of the full waves of ``grid`` with ``blocks_per_wave`` blocks per wave
    (module docstring), in order of increasing plane, then row crossings."""
    gx, gy, gz = grid
    if min(gx, gy, gz, blocks_per_wave) <= 0:
        raise LaunchError(f"grid {grid} and wave size {blocks_per_wave} must be positive")
    plane = gx * gy
    total = plane * gz
    size = min(blocks_per_wave, total)
    full = total // size
    period = plane // math.gcd(size, plane)
    if min(full, period) > ENUMERATED_WAVES and size <= plane and period < RESIDUE_LIMIT \
            and gx // math.gcd(size, gx) <= ENUMERATED_WAVES:
        found = _residue_classes(gx, plane, size, full, period)
        if found is not None:
            return found
    return _enumerated_classes(gx, plane, size, full, period)


#: Up to this many waves of a period (and blocks of a row per row offset) :func:`wave_classes`
#: lists the waves of one period; beyond it, when every wave is shorter than a plane, it counts
#: them by their residues (:func:`_residue_classes`). Both give the same classes.
ENUMERATED_WAVES = 512

#: Periods below this keep the products of residues (``j * inverse``, both below the period)
#: within int64.
RESIDUE_LIMIT = 1 << 31

#: Steps of the searches for a class's representative along its waves (:func:`_search`); a search
#: that needs more falls back to listing the waves of a period.
SEARCH_STEPS = 64


def _residue_classes(gx: int, plane: int, size: int, full: int, period: int) -> tuple[WaveClass, ...] | None:
    """:func:`wave_classes` of waves shorter than a plane (``size <= plane``) without listing the
    waves of a period; None when a representative's search would take more than
    :data:`SEARCH_STEPS` steps.

    With ``g = gcd(B, P)``, wave ``k`` starts ``t_k = g * j`` blocks into its plane, where ``j =
    k * (B / g) mod T`` runs through every residue of the period ``T = P / g`` once, and wave
    ``k`` follows from ``j`` as ``k = j * u mod T`` (``u`` the inverse of ``B / g`` modulo ``T``).
    A residue stands for ``K // T`` full waves, one more when its ``k < K mod T``. The waves
    across a plane boundary (``t_k > P - B``) are the residues ``j >= (P - B + 1) / g``: at most
    ``B / g + 1``, listed one by one. The row offset ``r_k = k * B mod gx`` has the period
    ``gx / gcd(B, gx)``: the waves of each row offset are counted from it, and those across a
    plane boundary subtracted. The medians and the representatives then follow as in
    :func:`_enumerated_classes`, each representative searched among the waves at the class's
    median position (an arithmetic progression of ``k``) from both ends and from the middle."""
    g = math.gcd(size, plane)
    rest, per_residue = full % period, full // period
    listed = min(full, period)
    middle = (full - 1) / 2
    qr, tr = divmod(size - 1, gx)
    edge = plane - (size - 1)  # a wave starting at or beyond this offset crosses a plane boundary
    # waves across a plane boundary: their residues j, wave residues k, weights and row offsets
    js = np.arange(-(-edge // g), period, dtype=np.int64)
    inverse = pow(size // g, -1, period) if period > 1 else 0
    ks = (js * inverse) % period
    wj = per_residue + (ks < rest)
    row_j = (js * g) % gx
    # every wave by its row offset: r = m * B mod gx for k = m mod (gx / h)
    h = math.gcd(size, gx)
    pr = gx // h
    m = np.arange(pr, dtype=np.int64)
    row_m = (m * size) % gx
    wm = full // pr + (m < full % pr)
    high_m, high_j = row_m >= gx - tr, row_j >= gx - tr  # one row boundary more than qr
    counts = (int(wm[~high_m].sum() - wj[~high_j].sum()), int(wm[high_m].sum() - wj[high_j].sum()), int(wj.sum()))
    classes = []
    for code, count in enumerate(counts):
        if count <= 0:
            continue
        cz, cy = (1, None) if code == 2 else (0, qr + code)
        if code == 2:  # the (lower) median of the blocks before the plane boundary, B - ... in units of g
            before = period - js  # (P - t) / g
            weights = np.cumsum(np.bincount(before, weights=wj))
            j = period - int(np.searchsorted(weights, (count - 1) // 2, side="right"))
            members: np.ndarray | None = np.array([(j * inverse) % period], dtype=np.int64)
        else:
            in_class, in_class_j = (high_m, high_j) if code else (~high_m, ~high_j)
            if cy:  # the median of the blocks before the row boundary, in units of h
                hist = np.bincount((gx - row_m[in_class]) // h, weights=wm[in_class], minlength=pr + 1)
                hist -= np.bincount((gx - row_j[in_class_j]) // h, weights=wj[in_class_j], minlength=pr + 1)
                median = int(np.searchsorted(np.cumsum(hist), (count - 1) // 2, side="right")) * h
                start = int(np.flatnonzero(row_m == gx - median)[0])
                members = _search(start, pr, listed, period, full, middle, gx, plane, size, edge, None)
            else:
                members = _search(0, 1, listed, period, full, middle, gx, plane, size, edge, gx - tr)
            if members is None:
                return None
        first = _nearest(members, period, full, middle)
        classes.append(WaveClass(crossings=cz, row_crossings=cy, waves=count, first_block=first * size, blocks=size))
    return tuple(classes)


def _search(start: int, step: int, listed: int, period: int, full: int, middle: float, gx: int, plane: int,
            size: int, edge: int, row_limit: int | None) -> np.ndarray | None:
    """The waves ``k = start + i * step < listed`` inside a plane (and with a row offset below
    ``row_limit``, if given) that :func:`_nearest` chooses among: those starting after the first
    block row of their plane when there are any, else all; every one of them when they are at
    most four, else the first, the last and the two around the middle (``middle``, modulo the
    period when the grid has more than one). None when a search takes more than
    :data:`SEARCH_STEPS` steps."""
    count = (listed - 1 - start) // step + 1 if start < listed else 0

    def member(k: int) -> bool:
        t = k * size % plane
        return t < edge and (row_limit is None or t % gx < row_limit)

    def after_first_row(k: int) -> bool:
        return k * size % plane >= gx

    def interior(k: int) -> bool:
        return member(k) and after_first_row(k)

    if count <= 2 * SEARCH_STEPS:
        waves = [start + i * step for i in range(count)]
        found = [k for k in waves if member(k)]
        inside = [k for k in found if after_first_row(k)]
        return np.array(inside or found, dtype=np.int64)
    keep = interior if any(interior(start + i * step) for i in range(SEARCH_STEPS)) else None
    if keep is None:
        return None

    def scan(i: int, direction: int, want: int = 1) -> list[int] | None:
        hits: list[int] = []
        for _ in range(SEARCH_STEPS):
            if not 0 <= i < count:
                return hits
            k = start + i * step
            if keep(k):
                hits.append(k)
                if len(hits) == want:
                    return hits
            i += direction
        return None

    target = middle if full <= period else middle % period
    above = max(0, math.ceil((target - start) / step))
    lowest, last, after, before = scan(0, 1, 5), scan(count - 1, -1), scan(above, 1), scan(above - 1, -1)
    if lowest is None or last is None or after is None or before is None or len(lowest) < 5:
        return None
    picked = {lowest[0], last[0], *after[:1], *before[:1]}
    return np.array(sorted(picked), dtype=np.int64)


def _enumerated_classes(gx: int, plane: int, size: int, full: int, period: int) -> tuple[WaveClass, ...]:
    """:func:`wave_classes` from the waves of one period, listed."""
    listed = min(full, period)
    k = np.arange(listed, dtype=np.int64)
    in_plane = k * size
    in_plane %= plane
    in_row = in_plane % gx  # a row divides a plane
    unique, key_index = _class_keys(in_plane, in_row, size, plane, gx)
    counts = np.bincount(key_index, minlength=unique.size) * (full // listed)
    rest = full % listed
    if rest:
        counts += np.bincount(key_index[:rest], minlength=unique.size)
    middle = (full - 1) / 2
    classes = []
    for i, key in enumerate(unique.tolist()):
        members = k if unique.size == 1 else np.flatnonzero(key_index == i)  # wave k is k[k]
        cz, shifted = divmod(key, size + 2)
        cy = shifted - 1
        if cz > 0 or cy > 0:  # the (lower) median position of the first boundary over all waves
            before = (plane - in_plane[members]) if cz > 0 else (gx - in_row[members])
            repeats = full // listed + (members < rest)
            # the weighted median of ``before``, from its histogram: ``before`` is a multiple of
            # gcd(wave, plane) (of gcd(wave, row) for row boundaries), so the histogram has at most
            # one bin per wave of a period
            unit = math.gcd(size, plane if cz > 0 else gx)
            weights = np.cumsum(np.bincount(before // unit, weights=repeats))
            median = int(np.searchsorted(weights, (int(counts[i]) - 1) // 2, side="right")) * unit
            members = members[before == median]
        interior = members[in_plane[members] >= gx]  # P_y (the row before) in the same plane
        first = _nearest(interior if interior.size else members, period, full, middle)
        classes.append(WaveClass(crossings=cz, row_crossings=None if cy < 0 else cy, waves=int(counts[i]),
                                 first_block=first * size, blocks=size))
    return tuple(classes)


def _nearest(members: np.ndarray, period: int, full: int, middle: float) -> int:
    """The wave index ``m + j * period`` (``m`` in ``members``, ascending, ``j >= 0``, below
    ``full``) nearest ``middle`` (the lowest ``m`` among equals).

    Only a few members can be it: with at most one period of waves (``full <= period``) every
    ``j`` is 0 and it is a neighbour of ``middle`` among the members; with more (``full > period``)
    no ``j`` is clipped, ``m + j * period`` is the wave of ``m``'s class of residues nearest
    ``middle``, and it is a neighbour of ``middle mod period``, the first or the last member. The
    formula below is evaluated on those."""
    if members.size > 4:
        at = int(np.searchsorted(members, middle if full <= period else middle % period))
        members = members[sorted({0, max(at - 1, 0), min(at, members.size - 1), members.size - 1})]
    best, distance = 0, math.inf
    for m in members.tolist():  # at most four: plain integers (round() rounds half to even, as numpy)
        j = min(max(round((middle - m) / period), 0), (full - 1 - m) // period)
        candidate = m + j * period
        if abs(candidate - middle) < distance:  # the first of equals
            best, distance = candidate, abs(candidate - middle)
    return best


def _class_keys(in_plane: np.ndarray, in_row: np.ndarray, size: int, plane: int, gx: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)`` of the waves' class keys ``planes * (size + 2) +
    rows + 1``, with ``planes = floor((in_plane + size - 1) / plane)`` and ``rows = floor((in_row +
    size - 1) / gx)`` (-1 across a plane), without a sort: writing ``size - 1 = q * n + t``
    (``0 <= t < n``) for a plane (row) of ``n`` blocks, a wave that starts ``r < n`` blocks into it
    crosses ``q + (r >= n - t)`` of its boundaries, so every key is one of three, found by
    comparisons: linear in the waves of a period."""
    stride = size + 2
    qp, tp = divmod(size - 1, plane)
    crossing = in_plane >= plane - tp  # one plane boundary more than qp
    if qp > 0:  # every wave crosses a plane: rows -1
        code = crossing.astype(np.int64)
        keys = np.array([qp * stride, (qp + 1) * stride], dtype=np.int64)
    else:
        qr, tr = divmod(size - 1, gx)
        code = np.where(crossing, 2, in_row >= gx - tr)  # rows qr, rows qr + 1, across a plane
        keys = np.array([qr + 1, qr + 2, stride], dtype=np.int64)
    present = np.flatnonzero(np.bincount(code, minlength=keys.size))
    rank = np.zeros(keys.size, dtype=np.int64)
    rank[present] = np.arange(present.size)
    return keys[present], rank[code]
