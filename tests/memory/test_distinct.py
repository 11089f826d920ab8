"""The distinct-value helpers give numpy.unique's answers (an independent implementation) on
arrays with and without repeats, empty and single-element ones included."""

import numpy as np
import pytest

from warpspeed.memory.distinct import (distinct_first, distinct_first_counts, distinct_first_inverse, distinct_inverse,
                                      positions_in_runs)


@pytest.mark.parametrize("size, high", [(0, 5), (1, 5), (7, 3), (1664, 40), (6400, 3000), (500, 10**12)])
def test_distinct_helpers_equal_numpy_unique(size, high):
    values = np.random.default_rng(size).integers(-high, high, size)
    distinct, first, inverse, counts = np.unique(values, return_index=True, return_inverse=True, return_counts=True)
    got_distinct, got_inverse = distinct_inverse(values)
    assert np.array_equal(got_distinct, distinct) and np.array_equal(got_inverse, inverse.reshape(-1))
    assert np.array_equal(distinct_first(values), first)
    got_first, got_inverse = distinct_first_inverse(values)
    assert np.array_equal(got_first, first) and np.array_equal(got_inverse, inverse.reshape(-1))
    got_first, got_counts = distinct_first_counts(values)
    assert np.array_equal(got_first, first) and np.array_equal(got_counts, counts)


def test_first_occurrence_is_the_earliest_of_equal_values():
    # hand-made: 5 first at 1, 2 first at 0, 9 first at 3
    assert distinct_first(np.array([2, 5, 2, 9, 5, 9, 2])).tolist() == [0, 1, 3]
    assert distinct_first_counts(np.array([2, 5, 2, 9, 5, 9, 2]))[1].tolist() == [3, 2, 2]


def test_positions_in_runs_count_from_zero_in_each_run():
    """Runs of 2, 0 and 3 elements laid end to end: positions 0 1 | | 0 1 2 (by hand)."""
    assert positions_in_runs(np.array([2, 0, 3])).tolist() == [0, 1, 0, 1, 2]
    assert positions_in_runs(np.array([0, 0])).tolist() == []
