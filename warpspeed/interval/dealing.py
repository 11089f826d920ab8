"""How a launch's blocks and their warps land on the SMs, their batches and their sub-cores.

AMALI section 4.7 (with GCoM's code for what it leaves open): blocks are dealt round robin to
``P_act = min(SMs, blocks)`` SMs in block-index order (block ``b`` to SM ``b mod P_act``, the
``j``-th block of an SM is block ``j P_act + s``); an SM runs its blocks in batches of ``M``
resident blocks, in order. A warp runs on sub-core ``warp_id mod n_sc`` (AMALI section 4.3,
``sub_core_id = warp_id % 4``, after Z. Jia, M. Maggioni, B. Staiger, D. P. Scarpazza,
"Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking", arXiv:1804.06826, 2018),
``warp_id`` being the warp's slot on the SM (what AMALI's NVBit traces record): the ``i``-th
resident block of a batch holds slots ``i w_b`` to ``i w_b + w_b - 1``, so warp ``w`` of it runs
on sub-core ``(i w_b + w) mod n_sc``. Blocks of a multiple of ``n_sc`` warps put warp ``w`` on
sub-core ``w mod n_sc``; one-warp blocks spread over the sub-cores.

A block's warps are *full* (at least one thread inside the domain: they issue the full path,
``I_full`` instructions) or *guard-only* (every thread fails the bounds guard: they issue the
guard-exit path, ``I_guard``). Which warps of a block are which depends only on whether the block
is the last one along x, y and z: the trace's ``launch.block_kinds`` give the full-warp mask of
each such kind, and the block index gives its kind. Everything here is exact for that dealing,
enumerating the blocks whose kind has guard-only warps (usually a small part of the grid).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from warpspeed.errors import WarpspeedError
from warpspeed.trace.document import TraceBlockKind

#: Kinds of blocks, coded ``last_x + 2 last_y + 4 last_z``.
KIND_CODES = 8


@dataclass(frozen=True)
class Dealing:
    """The blocks of a launch on the SMs.

    ``compositions``: the distinct batches, ``(full warps, guard-only warps)`` each;
    ``batch_counts[s, u]``: how many batches of composition ``u`` SM ``s`` runs;
    ``blocks[s]``: blocks SM ``s`` receives; ``sub_core_instructions[s, c]``: warp instructions
    sub-core ``c`` of SM ``s`` issues over the kernel (full warps ``I_full``, guard-only ``I_guard``).
    """

    active_sms: int
    compositions: tuple[tuple[int, int], ...]
    batch_counts: np.ndarray
    blocks: np.ndarray
    sub_core_instructions: np.ndarray


def _kind_tables(kinds: Sequence[TraceBlockKind], warps_per_block: int, sub_cores: int, full_instructions: int,
                 guard_instructions: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per kind code: full warps per block, instructions per sub-core, and whether the kind exists."""
    full = np.zeros(KIND_CODES, dtype=np.int64)
    per_sub_core = np.zeros((KIND_CODES, sub_cores), dtype=np.float64)
    known = np.zeros(KIND_CODES, dtype=bool)
    for kind in kinds:
        mask = list(kind.full)
        if len(mask) != warps_per_block:
            raise WarpspeedError(f"trace launch.block_kinds: a kind lists {len(mask)} warps, the block has "
                                 f"{warps_per_block}")
        code = sum(int(bool(flag)) << d for d, flag in enumerate(kind.last))
        full[code] = sum(bool(f) for f in mask)
        for w, is_full in enumerate(mask):
            per_sub_core[code, w % sub_cores] += full_instructions if is_full else guard_instructions
        known[code] = True
    return full, per_sub_core, known


def _blocks_of_kind(code: int, grid: Sequence[int]) -> np.ndarray:
    """Linear indices (x fastest) of the blocks of kind ``code`` (last along d where bit d is set)."""
    axes = []
    for d, g in enumerate(grid):
        last = bool(code >> d & 1)
        axes.append(np.array([g - 1]) if last else np.arange(g - 1))
    bx, by, bz = np.meshgrid(*axes, indexing="ij", sparse=True)
    return (bx + grid[0] * (by + grid[1] * bz)).ravel()


def deal_blocks(grid: Sequence[int], kinds: Sequence[TraceBlockKind], warps_per_block: int, blocks_per_sm: int, sms: int,
                sub_cores: int, full_instructions: int, guard_instructions: int) -> Dealing:
    """The :class:`Dealing` of a ``grid`` of blocks of ``warps_per_block`` warps, ``blocks_per_sm``
    resident at once, on ``sms`` SMs of ``sub_cores`` sub-cores (see the module docstring).

    Every batch is first taken as all full warps; the blocks of the kinds with guard-only warps
    (enumerated by index, usually a small part of the grid) then move their batches to the
    composition with their guard-only warps."""
    grid = tuple(int(g) for g in grid)
    total = math.prod(grid)
    if sum(int(k.count) for k in kinds) != total:
        raise WarpspeedError(f"trace launch.block_kinds count {sum(int(k.count) for k in kinds)} blocks; "
                             f"the grid {'x'.join(map(str, grid))} has {total}")
    full_of, sub_core_of, known = _kind_tables(kinds, warps_per_block, sub_cores, full_instructions,
                                               guard_instructions)
    for code in range(KIND_CODES):
        exists = all(g > 1 or code >> d & 1 for d, g in enumerate(grid))
        if exists and not known[code]:
            raise WarpspeedError("trace launch.block_kinds lacks a kind of block the grid has (interior or last "
                                 "along a dimension)")
    active = min(sms, total)
    sm = np.arange(active)
    blocks = (total - sm + active - 1) // active  # blocks SM s receives: indices s, s + P, ...
    width = blocks_per_sm * warps_per_block + 1  # a batch composition is coded full * width + guard
    slots = math.ceil(int(blocks.max()) / blocks_per_sm)
    # batch (t, s): blocks t M .. t M + M - 1 of SM s
    in_batch = np.clip(blocks[None, :] - np.arange(slots)[:, None] * blocks_per_sm, 0, blocks_per_sm)
    guard = np.zeros((slots, active), dtype=np.int64)
    # blocks per SM, kind and slot offset class ((position in batch x w_b) mod n_sc)
    offset_of_position = (np.arange(blocks_per_sm) * warps_per_block) % sub_cores
    kind_counts = np.zeros((active, KIND_CODES, sub_cores), dtype=np.int64)
    for code in range(1, KIND_CODES):
        if not known[code] or full_of[code] == warps_per_block:
            continue  # absent, or every warp full: its batches and sub-cores are an interior block's
        index = _blocks_of_kind(code, grid)
        s_of, j_of = index % active, index // active
        np.add.at(guard, (j_of // blocks_per_sm, s_of), warps_per_block - int(full_of[code]))
        offset = offset_of_position[j_of % blocks_per_sm]
        kind_counts[:, code, :] = np.bincount(s_of * sub_cores + offset,
                                              minlength=active * sub_cores).reshape(active, sub_cores)
    whole, rest = np.divmod(blocks, blocks_per_sm)
    per_position = whole[:, None] + (np.arange(blocks_per_sm)[None, :] < rest[:, None])  # (SMs, M)
    all_blocks = np.zeros((active, sub_cores), dtype=np.int64)
    for c in range(sub_cores):
        all_blocks[:, c] = per_position[:, offset_of_position == c].sum(axis=1)
    kind_counts[:, 0, :] = all_blocks - kind_counts.sum(axis=1)  # the rest: blocks whose warps are all full
    sub_core_of[0] = _all_full(warps_per_block, sub_cores, full_instructions)
    used = in_batch > 0
    key = (in_batch * warps_per_block - guard) * width + guard
    sm_of_batch = np.broadcast_to(sm, key.shape)
    counts = np.bincount((sm_of_batch * width * width + key)[used], minlength=active * width * width)
    counts = counts.reshape(active, width * width)
    present_keys = np.flatnonzero(counts.any(axis=0))
    return Dealing(active_sms=active, compositions=tuple((int(k // width), int(k % width)) for k in present_keys),
                   batch_counts=counts[:, present_keys], blocks=blocks,
                   sub_core_instructions=_sub_core_instructions(kind_counts, sub_core_of))


def _sub_core_instructions(kind_counts: np.ndarray, sub_core_of: np.ndarray) -> np.ndarray:
    """Instructions per SM and sub-core: each kind's per-sub-core instructions (warp ``w`` on
    sub-core ``w mod n_sc``) shifted by the slot offset of the blocks' batch positions."""
    sub_cores = sub_core_of.shape[1]
    out = np.zeros((kind_counts.shape[0], sub_cores))
    for offset in range(sub_cores):
        out += kind_counts[:, :, offset] @ np.roll(sub_core_of, offset, axis=1)
    return out


def _all_full(warps_per_block: int, sub_cores: int, full_instructions: int) -> np.ndarray:
    """Instructions per sub-core of a block whose warps are all full."""
    out = np.zeros(sub_cores)
    for w in range(warps_per_block):
        out[w % sub_cores] += full_instructions
    return out
