"""Line counts as sums of box volumes, where no two line boxes of a set overlap.

The box counter (:mod:`warpspeed.memory.wave.box_counts`) takes the union of the line boxes of every
set (the wave's loads ``L(W)`` and stores ``S(W)``, the previous-neighbour sets ``A(P_x)``,
``A(P_y)``, ``A(P_z)``, the bands' loads and stores) on a compressed grid. Where the boxes of each
set are pairwise disjoint, the size of a union is the sum of its boxes' sizes and the size of an
intersection of unions the sum over every tuple of boxes of the size of their intersection, which
needs no grid:

* ``|L(W) ∩ A(P_x)|``, ``|L(W) ∩ A(P_y) \\ A(P_x)|`` (the same minus ``|L(W) ∩ A(P_x) ∩ A(P_y)|``)
  and ``|L(W) ∩ A(P_z) \\ (A(P_x) ∪ A(P_y))|`` by inclusion and exclusion: the overlaps, each line
  counted for the first dimension that reaches it;
* ``|L(W) ∪ A(P_d)| = |L(W)| + |A(P_d)| - |L(W) ∩ A(P_d)|``: the layer volumes.

This is the case of the fields whose maps never overlap: a field with one access of each kind (a
stream of a copy, the store of a stencil), or whose accesses differ in a constant coordinate (the
populations of a lattice-Boltzmann field, the index coordinate of a field with several
components) (:func:`rows_separated`); the cell boxes of a linear block range lie in different block
rows, so their images under one map do not overlap either where the map keeps the rows apart. A
request whose boxes do overlap after all (checked pair by pair) is left to the grid. The integers
are those of the grid.
"""

from __future__ import annotations

import numpy as np

from warpspeed.memory.distinct import positions_in_runs
from warpspeed.memory.wave.boxmaps import MapStack


def rows_separated(stack: MapStack) -> bool:
    """True when the images of any two rows of ``stack`` are disjoint for every cell box: at most
    one row, or every two rows take disjoint ranges of a constant target coordinate."""
    n = stack.dims.shape[0]
    if n <= 1:
        return True
    const = stack.scale == 0  # (rows, targets)
    lo, hi = stack.offset, stack.offset_hi
    apart = const[:, None, :] & const[None, :, :] & ((hi[:, None, :] < lo[None, :, :]) | (hi[None, :, :] < lo[:, None, :]))
    pairs = apart.any(axis=2)
    return bool(pairs[np.triu_indices(n, 1)].all())


def separating_axis(stack: MapStack) -> int:
    """The target coordinate that keeps the rows of ``stack`` apart: of those every row holds
    constant, the one with the most distinct ranges (the component index of a lattice-Boltzmann
    field); 0 when no coordinate is constant in every row. Boxes are matched along it
    (:func:`disjoint_counts`)."""
    const = np.all(stack.scale == 0, axis=0) if stack.dims.shape[0] else np.zeros(stack.targets, dtype=bool)
    if not const.any():
        return 0
    distinct = [len({(int(a), int(b)) for a, b in zip(stack.offset[:, t], stack.offset_hi[:, t])}) if const[t] else 0
                for t in range(stack.targets)]
    return int(np.argmax(distinct))


#: The sets of a request in the order of :func:`warpspeed.memory.wave.box_counts._joint_images`:
#: the wave's loads and stores, the previous-neighbour sets along x, y and z; the bands follow.
LOADS, STORES, PREVIOUS = 0, 1, (2, 3, 4)


def disjoint_counts(images: np.ndarray, counts: np.ndarray, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The line counts of every request from its sets' line boxes when the boxes of each set are
    pairwise disjoint (module docstring).

    Args:
        images: ``(boxes, targets, 2)`` inclusive line boxes, ordered by request, then set.
        counts: ``(requests, sets)``: the boxes of each set (sets as in :data:`LOADS`,
            :data:`STORES`, :data:`PREVIOUS`, then each band's loads and stores).
        axis: the target coordinate along which boxes are matched (:func:`_meeting_boxes`): the one that
            separates the rows, so that few boxes are compared.

    Returns:
        ``(values, valid)``: int64 ``(requests, 9)`` with load, store, the overlaps along x, y, z,
        the layers along x, y, z and the bands' lines; bool ``(requests,)``, False where two boxes
        of a set overlap (those rows of ``values`` are not the counts).
    """
    n, n_sets = counts.shape
    flat = counts.reshape(-1)
    lo, hi = images[..., 0], images[..., 1]
    owner = np.repeat(np.arange(n * n_sets), flat)  # (request, set) of every box
    request, kind = owner // n_sets, owner % n_sets
    volume = np.prod(hi - lo + 1, axis=1)
    sizes = _exact(np.bincount(owner, weights=volume, minlength=n * n_sets)).reshape(n, n_sets)
    a, b = _meeting_boxes(lo, hi, owner, lo, hi, owner, axis)  # pairs of boxes of one set that overlap
    valid = np.bincount(request[a[a < b]], minlength=n) == 0

    def meet(*sets: int) -> np.ndarray:
        box = np.flatnonzero(kind == sets[0])
        low, high, key = lo[box], hi[box], request[box]
        for s in sets[1:]:
            other = np.flatnonzero(kind == s)
            i, j = _meeting_boxes(low, high, key, lo[other], hi[other], request[other], axis)
            low, high, key = np.maximum(low[i], lo[other][j]), np.minimum(high[i], hi[other][j]), key[i]
        return _exact(np.bincount(key, weights=np.prod(high - low + 1, axis=1), minlength=n))

    px, py, pz = PREVIOUS
    i_x, i_y, i_z = meet(LOADS, px), meet(LOADS, py), meet(LOADS, pz)
    i_xy, i_xz, i_yz = meet(LOADS, px, py), meet(LOADS, px, pz), meet(LOADS, py, pz)
    i_xyz = meet(LOADS, px, py, pz)
    load = sizes[:, LOADS]
    values = np.stack([
        load, sizes[:, STORES],
        i_x, i_y - i_xy, i_z - i_xz - i_yz + i_xyz,
        load + sizes[:, px] - i_x, load + sizes[:, py] - i_y, load + sizes[:, pz] - i_z,
        sizes[:, 5:].sum(axis=1),
    ], axis=1)
    return values, valid


def _exact(sums: np.ndarray) -> np.ndarray:
    """Sums of box sizes as int64 (each below 2^53, so exact in the float64 of ``np.bincount``)."""
    return np.rint(sums).astype(np.int64)


def _meeting_boxes(lo_a: np.ndarray, hi_a: np.ndarray, key_a: np.ndarray, lo_b: np.ndarray, hi_b: np.ndarray,
                   key_b: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair ``(i, j)`` of a box of ``a`` and a box of ``b`` with the same key whose boxes
    overlap. The ``b`` boxes are sorted by key, then by their low bound along ``axis``; each ``a``
    box is compared only with those whose low bound lies within its range along ``axis`` widened by
    the widest ``b`` box (a sweep: boxes in separated rows are never compared)."""
    if lo_a.shape[0] == 0 or lo_b.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    base = min(int(lo_a[:, axis].min()), int(lo_b[:, axis].min()))
    span = int(hi_b[:, axis].max() - lo_b[:, axis].min()) + 1
    stride = max(int(hi_a[:, axis].max()), int(hi_b[:, axis].max())) - base + span + 1
    order = np.argsort(key_b * stride + (lo_b[:, axis] - base), kind="stable")
    sorted_keys = key_b[order] * stride + (lo_b[order, axis] - base)
    reach = int((hi_b[:, axis] - lo_b[:, axis]).max())
    first = np.searchsorted(sorted_keys, key_a * stride + (lo_a[:, axis] - base - reach), side="left")
    last = np.searchsorted(sorted_keys, key_a * stride + (hi_a[:, axis] - base), side="right")
    width = np.maximum(last - first, 0)
    i = np.repeat(np.arange(lo_a.shape[0]), width)
    j = order[np.repeat(first, width) + positions_in_runs(width)]
    meets = (key_a[i] == key_b[j]) & np.all(np.maximum(lo_a[i], lo_b[j]) <= np.minimum(hi_a[i], hi_b[j]), axis=1)
    return i[meets], j[meets]
