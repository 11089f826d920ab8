"""Distinct values of a 1-D integer array, with what the block and wave stages ask of them, and
the positions of elements within runs laid end to end (:func:`positions_in_runs`).

The same results as ``numpy.unique`` with ``return_index``, ``return_inverse`` and
``return_counts`` for 1-D arrays (sorted distinct values; the index of each value's first
occurrence; each element's position among the distinct values; each value's count), from one
argsort and one comparison of neighbours: on the few thousand elements of one configuration's
instructions or box boundaries about half the time of ``numpy.unique``, whose general path
(any shape, any axis, NaN handling) dominates at that size.
"""

from __future__ import annotations

import numpy as np


def _sorted_runs(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(order, sorted values, mask)``: the stable argsort of ``values`` (equal values keep their
    order, so the first of a run is its first occurrence; on these arrays of many repeated values
    also the faster sort), the sorted values and True where a sorted value differs from the one
    before (the first of each run)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.empty(ordered.size, dtype=bool)
    if ordered.size:
        starts[0] = True
        np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    return order, ordered, starts


def distinct_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``numpy.unique(values, return_inverse=True)`` of a 1-D array: the sorted distinct values and
    each element's index into them."""
    order, ordered, starts = _sorted_runs(values)
    inverse = np.empty(values.size, dtype=np.intp)
    inverse[order] = np.cumsum(starts) - 1
    return ordered[starts], inverse


def distinct_first(values: np.ndarray) -> np.ndarray:
    """``numpy.unique(values, return_index=True)[1]`` of a 1-D array: the index of the first
    occurrence of each distinct value, in the order of the sorted values."""
    order, _, starts = _sorted_runs(values)
    return order[starts]


def distinct_first_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``numpy.unique(values, return_index=True, return_inverse=True)[1:]`` of a 1-D array: the
    first occurrence of each distinct value and each element's index into the distinct values."""
    order, _, starts = _sorted_runs(values)
    inverse = np.empty(values.size, dtype=np.intp)
    inverse[order] = np.cumsum(starts) - 1
    return order[starts], inverse


def distinct_first_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``numpy.unique(values, return_index=True, return_counts=True)[1:]`` of a 1-D array: the
    first occurrence of each distinct value and how many elements have it."""
    order, _, starts = _sorted_runs(values)
    first = np.flatnonzero(starts)
    counts = np.diff(np.append(first, values.size))
    return order[first], counts


def positions_in_runs(lengths: np.ndarray) -> np.ndarray:
    """Each element's position within its run, for runs of ``lengths`` laid end to end: ``0 ..
    lengths[0] - 1, 0 .. lengths[1] - 1, ...`` (the ragged ``arange`` the stages index pairs with)."""
    return np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
