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


@dataclass(frozen=True)
class BlockKind:
    """Blocks of a launch that cover the domain alike: ``count`` of them, and per warp of the
    block whether it is full (at least one valid thread); ``valid_threads`` per block; ``last``:
    whether these blocks are the last along x, y and z (a grid one block wide along a dimension
    has only last blocks there), which identifies the kind of any block index."""

    count: int
    full: tuple[bool, ...]
    valid_threads: int
    last: tuple[bool, bool, bool]

    def as_dict(self) -> dict:
        """The trace's record of this kind (``launch.block_kinds``)."""
        return {"count": self.count, "last": list(self.last), "full": list(self.full)}


def block_kinds(launch: Launch, warp_size: int) -> tuple[BlockKind, ...]:
    """The at most 8 kinds of blocks of ``launch`` (interior or last along each dimension),
    enumerated thread by thread (threads are linearised x fastest, ``warp_size`` consecutive
    threads form a warp, as CUDA and HIP do)."""
    per_block_warps = math.ceil(launch.threads_per_block / warp_size)
    per_dim = []
    for d in range(3):
        b, g = launch.block[d], launch.grid[d]
        # (count of blocks, validity mask along d, last along d): interior blocks and the last block
        last = _valid_threads_along(b, launch.fold[d], launch.domain[d], (g - 1) * b)
        per_dim.append([(g - 1, np.ones(b, dtype=bool), False), (1, last, True)] if g > 1 else [(1, last, True)])
    kinds = []
    for (nx, mx, lx), (ny, my, ly), (nz, mz, lz) in itertools.product(*per_dim):
        mask = (mz[:, None, None] & my[None, :, None] & mx[None, None, :]).ravel()
        padded = np.zeros(per_block_warps * warp_size, dtype=bool)
        padded[: mask.size] = mask
        full = padded.reshape(per_block_warps, warp_size).any(axis=1)
        kinds.append(BlockKind(nx * ny * nz, tuple(full.tolist()), int(mask.sum()), (lx, ly, lz)))
    return tuple(kinds)


def warp_counts(launch: Launch, warp_size: int) -> WarpCounts:
    """Exact full and guard-only warps and valid threads of ``launch`` (:func:`block_kinds`)."""
    kinds = block_kinds(launch, warp_size)
    full = sum(k.count * sum(k.full) for k in kinds)
    valid = sum(k.count * k.valid_threads for k in kinds)
    total = math.ceil(launch.threads_per_block / warp_size) * launch.total_blocks
    return WarpCounts(full_warps=full, guard_warps=total - full, valid_threads=valid)
