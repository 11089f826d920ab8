"""Bounded reads: the whole file up to the bound, refused beyond it, memory of the file's size only."""

from __future__ import annotations

import tracemalloc

import pytest

from warpspeed.files.text import READ_STEP, TooLarge, read_bounded_bytes


def test_a_file_of_several_steps_is_read_whole_and_refused_beyond_the_bound(tmp_path):
    data = bytes(range(256)) * (5 * READ_STEP // 2 // 256)  # 2.5 steps
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    assert read_bounded_bytes(path, len(data)) == data
    with pytest.raises(TooLarge):
        read_bounded_bytes(path, len(data) - 1)


def test_a_small_file_under_a_large_bound_takes_memory_of_its_size(tmp_path):
    """A 1 kB file under a 1 GiB bound: the read reserves no more than one step (1 MiB)."""
    path = tmp_path / "small.txt"
    path.write_bytes(b"x" * 1000)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        assert read_bounded_bytes(path, 2**30) == b"x" * 1000
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20 + 2**16
