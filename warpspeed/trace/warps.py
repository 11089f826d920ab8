"""Warps of a launch: how many carry work and how many lanes they keep busy.

A generated stencil kernel guards every thread with ``cell < domain`` in each dimension. A thread
is *valid* when its first cell lies inside the domain (then it updates at least one cell); a
warp is *full* when at least one of its threads is valid and *guard-only* when none is (it
evaluates the guard and exits). Blocks of a grid differ only in whether they are the last block
along a dimension, so at most 8 block kinds are enumerated exactly, thread by thread.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from warpspeed.launch.geometry import Launch


@dataclass(frozen=True)
class WarpCounts:
    """Warps and threads of a whole launch.

    ``full_warps``: warps with at least one valid thread; ``guard_warps``: warps whose threads all
    fail the guard; ``valid_threads``: threads whose first cell lies in the domain;
    ``active_lanes_per_warp``: valid threads / full warps (lanes a full warp keeps busy).
    """

    full_warps: int
    guard_warps: int
    valid_threads: int

    @property
    def active_lanes_per_warp(self) -> float:
        return self.valid_threads / self.full_warps if self.full_warps else 0.0


def _valid_threads_along(n_threads: int, fold: int, extent: int, block_start: int) -> np.ndarray:
    """Which of a block's ``n_threads`` threads along one dimension start inside ``extent``."""
    first_cell = (block_start + np.arange(n_threads)) * fold
    return first_cell < extent


def warp_counts(launch: Launch, warp_size: int) -> WarpCounts:
    """Exact full and guard-only warps and valid threads of ``launch`` (threads are linearised
    x fastest, ``warp_size`` consecutive threads form a warp, as CUDA and HIP do)."""
    per_block_warps = math.ceil(launch.threads_per_block / warp_size)
    full = valid = 0
    kinds = []
    for d in range(3):
        b, g = launch.block[d], launch.grid[d]
        # (count of blocks, validity mask along d): interior blocks and the last block
        last = _valid_threads_along(b, launch.fold[d], launch.domain[d], (g - 1) * b)
        kinds.append([(g - 1, np.ones(b, dtype=bool)), (1, last)] if g > 1 else [(1, last)])
    for (nx, mx), (ny, my), (nz, mz) in itertools.product(*kinds):
        count = nx * ny * nz
        mask = (mz[:, None, None] & my[None, :, None] & mx[None, None, :]).ravel()
        padded = np.zeros(per_block_warps * warp_size, dtype=bool)
        padded[: mask.size] = mask
        full += count * int(padded.reshape(per_block_warps, warp_size).any(axis=1).sum())
        valid += count * int(mask.sum())
    total = per_block_warps * launch.total_blocks
    return WarpCounts(full_warps=full, guard_warps=total - full, valid_threads=valid)
