"""L1 load/store throughput: bank-conflict wavefronts (Ernst et al., JPDC 2023, section 4.2).

The L1 serves ``banks x bank_bytes`` bytes per cycle (NVIDIA Volta/Ampere/Hopper: 16 x 8 B =
128 B), so one memory instruction is processed per *lane group* of
``min(warp_size, bytes_per_cycle // element_bytes)`` lanes: half warps for 8-byte elements,
full warps for 4-byte elements. For each group the number of wavefronts (cycles) is the
maximum, over banks, of the distinct ``bank_bytes`` words mapped to that bank. Two addresses
farther apart than ``l1_far_pair_bytes`` (1024 B) never share a wavefront: the group's words,
in ascending order, are split greedily into clusters that span at most that distance, and the
wavefronts of the clusters add up.

Wavefronts are summed over all lane groups of the representative block and over every load
and store instruction (one instruction per access and fold offset), then divided by the
block's lattice updates: L1 cycles per lup.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from warpspeed.memory.addresses import BlockCells, CompiledKernel, block_addresses
from warpspeed.hardware.device import Device

_SENTINEL = np.iinfo(np.int64).max


@dataclass(frozen=True)
class L1Cycles:
    """L1 wavefronts per lattice update, per field and total.

    Attributes:
        cycles_per_lup: total L1 cycles (wavefronts) per lup.
        per_field: field name -> cycles per lup.
        load_cycles_per_lup / store_cycles_per_lup: the split by instruction kind.
    """

    cycles_per_lup: float
    per_field: dict[str, float]
    load_cycles_per_lup: float
    store_cycles_per_lup: float


def group_wavefronts(words: np.ndarray, valid: np.ndarray, device: Device) -> np.ndarray:
    """Wavefronts of each lane group.

    Args:
        words: int64 array ``(groups, lanes)`` of bank-word indices (byte address // bank_bytes).
        valid: bool array of the same shape; invalid lanes do not access memory.
        device: gives banks, bank width and the far-pair distance.

    Returns:
        int64 array ``(groups,)``: wavefronts (cycles) per lane group; 0 for a group with no
        valid lane.
    """
    groups, lanes = words.shape
    if groups == 0:
        return np.zeros(0, dtype=np.int64)
    w = np.where(valid, words, _SENTINEL)
    w.sort(axis=1)
    present = w != _SENTINEL
    distinct = present.copy()
    distinct[:, 1:] &= w[:, 1:] != w[:, :-1]
    # Greedy clusters: a new cluster starts at a word more than `far` bytes past the
    # cluster's first word.
    far_words = device.l1_far_pair_bytes // device.l1_bank_bytes
    cluster = np.zeros((groups, lanes), dtype=np.int64)
    start = w[:, 0].copy()
    current = np.zeros(groups, dtype=np.int64)
    for lane in range(1, lanes):
        col = w[:, lane]
        new = present[:, lane] & (col - start > far_words)
        current = current + new
        start = np.where(new, col, start)
        cluster[:, lane] = current
    banks = device.l1_banks
    clusters = int(cluster.max()) + 1
    bank = np.where(present, w % banks, 0)
    key = (np.arange(groups)[:, None] * clusters + cluster) * banks + bank
    counts = np.bincount(key[distinct], minlength=groups * clusters * banks)
    per_cluster = counts.reshape(groups, clusters, banks).max(axis=2)
    return per_cluster.sum(axis=1)


def _lane_groups(values: np.ndarray, valid: np.ndarray, group: int) -> tuple[np.ndarray, np.ndarray]:
    """Reshape ``(..., threads)`` into ``(rows, group)``, padding the last group with invalid lanes."""
    threads = values.shape[-1]
    pad = (-threads) % group
    if pad:
        pad_width = [(0, 0)] * (values.ndim - 1) + [(0, pad)]
        values = np.pad(values, pad_width)
        valid = np.pad(valid, pad_width)
    return values.reshape(-1, group), valid.reshape(-1, group)


def l1_cycles(compiled: CompiledKernel, cells: BlockCells, device: Device,
              addresses: np.ndarray | None = None) -> L1Cycles:
    """L1 cycles per lup of the block ``cells`` (see the module docstring).

    ``addresses`` may pass precomputed :func:`~warpspeed.addresses.block_addresses`.
    Accesses with the same element size are counted in one vectorized batch.
    """
    addr = block_addresses(compiled, cells) if addresses is None else addresses
    lups = cells.lups
    per_access = np.zeros(len(compiled.accesses))
    sizes = sorted({a.field.element_bytes for a in compiled.accesses})
    for elem in sizes:
        idx = [i for i, a in enumerate(compiled.accesses) if a.field.element_bytes == elem]
        words_per_elem = max(1, -(-elem // device.l1_bank_bytes))
        group = max(1, min(device.warp_size, device.l1_bytes_per_cycle // elem))
        words = addr[idx] // device.l1_bank_bytes  # (accesses, folds, threads)
        valid = np.broadcast_to(cells.valid, words.shape)
        if words_per_elem > 1:  # wide elements touch several consecutive words
            words = (words[..., None] + np.arange(words_per_elem)).reshape(*words.shape[:2], -1)
            valid = np.repeat(valid, words_per_elem, axis=2)
            group *= words_per_elem
        g_words, g_valid = _lane_groups(words, valid, group)
        wavefronts = group_wavefronts(g_words, g_valid, device).reshape(len(idx), -1).sum(axis=1)
        per_access[idx] = wavefronts / lups
    per_field = {name: 0.0 for name in compiled.field_names}
    loads = stores = 0.0
    for i, acc in enumerate(compiled.accesses):
        per_field[acc.field.name] += float(per_access[i])
        if acc.access.is_store:
            stores += float(per_access[i])
        else:
            loads += float(per_access[i])
    return L1Cycles(cycles_per_lup=loads + stores, per_field=per_field,
                    load_cycles_per_lup=loads, store_cycles_per_lup=stores)
