"""L1 misses in the data stage: the wavefronts and L2 requests of loads that miss.

The bank rule of :mod:`warpspeed.memory.l1` counts the data-stage wavefronts of loads that hit:
it reproduces the counter ``l1tex__data_pipe_lsu_wavefronts`` exactly on the A100's gpu-strides
rows, whose loads all hit in L1. A load that misses is different. Its request waits in the miss
stage until L2 returns the missing sectors, and the data stage then serves the lanes of each
missing cache line when that line arrives: one more wavefront per missing line, while the lanes
that hit are served by the bank rule as before. An NVIDIA engineer describes the wavefront as the
unit of work of a stage and lists "a maximum number of cache lines that can be accessed" among the
limits of one wavefront (NVIDIA Developer Forums, "What's the difference between wavefronts and
sectors/req?", 2021); the Nsight Compute Kernel Profiling Guide (L1TEX unit: tag, miss and data
stages) describes the miss path.

Evidence: three Nsight Compute profiles of the 25-point star stencil (640x512x512, double) on an
NVIDIA H200 (``fits/data/H200/``). The counter per lattice update is 2.27 (block 8x4x32, folded
2 in z), 2.02 (32x32x1) and 1.67 (256x4x1, folded 2 in y) against 1.38, 1.63 and 1.38 from the
bank rule alone; with one wavefront per missing line it is 2.14, 1.98 and 1.71 from the
compulsory misses below (-6, -2, +2 %), and the L1 capacity misses raise the first. The 8-wide
block needs the most extra wavefronts although it misses the fewest sectors: its warps touch four
rows of 64 B, so a miss splits an instruction into more lines than a 256 B row does.

Which loads miss (per thread block, the representative block of
:func:`~warpspeed.memory.addresses.block_cells`):

* *first touch*: the instructions run warp by warp, each warp's instructions in program order
  (copy by copy, accesses in kernel order); a 32 B sector misses in the first instruction that
  touches it (per field) and hits afterwards. This is the block's compulsory L2 -> L1 volume
  (the footprint of :mod:`warpspeed.memory.footprint`). The order matters little: warp-major and
  instruction-major orders give the same counts within 1 % on the three profiles;
* *capacity*: a line that would hit misses with probability ``capacity_miss_rate`` (the L1
  capacity curve's miss rate of the configuration, :mod:`warpspeed.memory.capacity.terms`),
  independently per instruction. The expected cost is taken per lane group: a group keeps at
  least one wavefront while any of its hit lines survives, and a group with conflicting words
  keeps its wavefronts in proportion to the surviving lines (within 1 % of a Monte Carlo draw of
  the misses on the three profiled blocks, within 6 % on blocks one thread wide).

Cost of a load instruction = max(bank rule over all lanes, bank rule over the lanes that hit +
missing lines); stores keep the bank rule (write-through, nothing waits). The tag stage
(:class:`~warpspeed.memory.l1.TagStage`) still bounds the cost from below.

L2 requests: one per missing line of a load instruction and one per line of a store instruction
(the L1TEX miss stage sends a request per cache line, ``l1tex__m_l1tex2xbar_req``); the time
models compare them with the miss stage's request rate.

Only NVIDIA's L1TEX unit is modelled this way (Volta and later; every NVIDIA family of
:data:`~warpspeed.memory.l1.NVIDIA_L1_FAMILIES`). AMD's first levels keep the roofline's
first-level cost: nothing is known about their miss path's wavefronts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from warpspeed.hardware.device import Device
from warpspeed.memory.addresses import BlockCells, CompiledKernel
from warpspeed.memory.l1 import (
    _pad_last,
    distinct_lines,
    lane_group_size,
    lane_group_wavefronts,
    tag_stage_for,
    warp_instruction_costs,
)


@dataclass(frozen=True)
class L1MissCosts:
    """First-level costs of a block with its L1 misses, per lattice update (lup).

    Attributes:
        data_wavefronts_per_lup: data-stage wavefronts with one per missing line (NVIDIA: the
            counter ``l1tex__data_pipe_lsu_wavefronts`` per lup).
        cycles_per_lup: first-level cycles: per instruction the larger of the data-stage and
            tag-stage wavefronts (AMD: the roofline's first-level cycles).
        requests_per_lup: L1 -> L2 requests, one per missing line of a load and one per line of
            a store.
        first_touch_load_bytes_per_lup: sectors of the block missed at their first touch x
            32 B (equal to the block's compulsory L2 -> L1 volume).
        capacity_miss_rate: the probability used for capacity misses of lines that would hit.
        modelled: ``False`` where the first level has no miss model (AMD): the numbers are the
            bank rule's and the requests count first touches only.
    """

    data_wavefronts_per_lup: float
    cycles_per_lup: float
    requests_per_lup: float
    first_touch_load_bytes_per_lup: float
    capacity_miss_rate: float
    modelled: bool = True


def first_touch_misses(compiled: CompiledKernel, addresses: np.ndarray, lanes: np.ndarray,
                       warp_size: int, sector_bytes: int) -> np.ndarray:
    """Lanes whose load misses at the first touch of its sector in the block.

    Args:
        addresses: int64 byte addresses ``(accesses, folds, threads)``.
        lanes: bool, same shape: lanes that issue the access.

    Returns:
        bool array of the same shape: load lanes whose sector no earlier instruction touched
        (order: warp by warp, each warp copy by copy, accesses in kernel order). Lanes of one
        instruction that share a sector all miss. Stores are never misses.
    """
    n_acc, n_fold, threads = addresses.shape
    fields = {name: k for k, name in enumerate(dict.fromkeys(a.field.name for a in compiled.accesses))}
    is_load = np.array([not a.access.is_store for a in compiled.accesses])
    field_id = np.array([fields[a.field.name] for a in compiled.accesses], dtype=np.int64)
    key = (addresses // sector_bytes) * len(fields) + field_id[:, None, None]
    take = lanes & is_load[:, None, None]

    def in_order(x: np.ndarray) -> np.ndarray:
        """(access, copy, thread) -> (warp, copy, access, lane), flattened: the visiting order."""
        x = _pad_last(x, warp_size).reshape(n_acc, n_fold, -1, warp_size)
        return x.transpose(2, 1, 0, 3).ravel()

    k, t = in_order(key), in_order(take)
    instruction = np.arange(len(k)) // warp_size  # the lanes of one instruction share a number
    k, instruction = k[t], instruction[t]
    _, first, inverse = np.unique(k, return_index=True, return_inverse=True)  # first = earliest lane
    ordered = np.zeros(len(t), dtype=bool)
    ordered[np.flatnonzero(t)] = instruction == instruction[first][inverse]
    padded = _pad_last(np.zeros(addresses.shape, dtype=bool), warp_size)
    miss = ordered.reshape(-1, n_fold, n_acc, warp_size).transpose(2, 1, 0, 3).reshape(padded.shape)
    miss = miss[..., :threads]
    return miss


def _distinct_rows(addr: np.ndarray, lanes: np.ndarray, miss: np.ndarray,
                   line_bytes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The distinct warp instructions among the rows of ``addr`` (with their ``lanes`` and ``miss``
    masks) and how often each occurs. Rows that differ by a whole number of cache lines are the
    same instruction for every cost here: banks repeat every 128 B and lines every ``line_bytes``
    (a multiple of 128 B), so each row is moved to the line of its lowest active address first."""
    active = lanes.any(axis=1)
    low = np.where(lanes, addr, np.iinfo(np.int64).max).min(axis=1)
    base = np.where(active, low // line_bytes * line_bytes, 0)
    rel = np.where(lanes, addr - base[:, None], -1)
    bits = (miss.astype(np.int64) << np.arange(miss.shape[1], dtype=np.int64)).sum(axis=1)
    # one byte string per row (relative addresses and the miss bits), unique as a 1-D array
    key = np.concatenate([rel, bits[:, None]], axis=1)
    key = np.ascontiguousarray(key).view(np.dtype((np.void, key.dtype.itemsize * key.shape[1]))).ravel()
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    return rel[first].clip(min=0), lanes[first], miss[first], counts.astype(float)


def _expected_cost(addr: np.ndarray, lanes: np.ndarray, miss: np.ndarray, bank_all: np.ndarray,
                   element_bytes: int, device: Device, capacity_miss_rate: float) -> tuple[np.ndarray, np.ndarray]:
    """Expected data-stage wavefronts and L2 requests of load instructions (rows of ``addr``,
    one warp instruction each; ``bank_all`` their bank-rule wavefronts) with first-touch misses
    ``miss`` and capacity misses of rate ``capacity_miss_rate``."""
    lines = addr // device.l1_line_bytes
    hit = lanes & ~miss
    bank_hit = lane_group_wavefronts(addr, hit, element_bytes, device).astype(float)
    group = lane_group_size(device, element_bytes)
    groups = bank_hit.shape[1]
    g_lines = _pad_last(lines, groups * group).reshape(-1, group)
    g_hit = _pad_last(hit, groups * group).reshape(-1, group)
    hit_lines_per_group = distinct_lines(g_lines, g_hit).reshape(-1, groups)
    # a group keeps a wavefront while any of its hit lines survives; conflicting words of
    # different lines survive one by one
    survive_any = np.where(bank_hit > 0, 1.0 - capacity_miss_rate ** hit_lines_per_group, 0.0)
    kept = np.maximum(bank_hit * (1.0 - capacity_miss_rate), survive_any)
    missing = distinct_lines(lines, miss) + capacity_miss_rate * distinct_lines(lines, hit)
    return np.maximum(bank_all, kept.sum(axis=1) + missing), missing


def l1_miss_costs(compiled: CompiledKernel, cells: BlockCells, device: Device, addresses: np.ndarray,
                  lanes: np.ndarray, capacity_miss_rate: float) -> L1MissCosts:
    """First-level costs of the block ``cells`` with its misses (see the module docstring).

    ``addresses`` and ``lanes`` are :func:`~warpspeed.memory.addresses.block_addresses` and
    :func:`~warpspeed.memory.addresses.instruction_lanes` of ``cells``;
    ``capacity_miss_rate`` in [0, 1].
    """
    p = min(1.0, max(0.0, float(capacity_miss_rate)))
    warp, line = device.warp_size, device.l1_line_bytes
    miss = first_touch_misses(compiled, addresses, lanes, warp, device.l1_sector_bytes)
    first_touch = 0
    for f in dict.fromkeys(a.field.name for a in compiled.accesses):
        idx = [i for i, a in enumerate(compiled.accesses) if a.field.name == f]
        first_touch += len(np.unique(addresses[idx][miss[idx]] // device.l1_sector_bytes))
    modelled = device.vendor == "nvidia"
    stage = tag_stage_for(device) if modelled else None
    data = cycles = requests = 0.0
    for elem in sorted({a.field.element_bytes for a in compiled.accesses}):
        for store in (False, True):
            idx = [i for i, a in enumerate(compiled.accesses)
                   if a.field.element_bytes == elem and a.access.is_store == store]
            if not idx:
                continue
            a, v, m = (_pad_last(x[idx].reshape(-1, x.shape[-1]), warp).reshape(-1, warp)
                       for x in (addresses, lanes, miss))
            a, v, m, weight = _distinct_rows(a, v, m, line)
            if not modelled:  # the roofline's first-level cost; requests for first touches and stores
                bank, tag = warp_instruction_costs(a, v, elem, device)
                cost, tag = bank.ravel(), tag.ravel()
                req = distinct_lines(a // line, v if store else m)
            else:
                bank = lane_group_wavefronts(a, v, elem, device).sum(axis=1)
                tag = stage.wavefronts(distinct_lines(a // line, v), v.sum(axis=1)) if stage else 0.0
                if store:
                    cost, req = bank, distinct_lines(a // line, v)
                else:
                    cost, req = _expected_cost(a, v, m, bank, elem, device, p)
            data += float(weight @ cost)
            cycles += float(weight @ np.maximum(cost, tag))
            requests += float(weight @ req)
    lups = cells.lups
    return L1MissCosts(
        data_wavefronts_per_lup=data / lups, cycles_per_lup=cycles / lups, requests_per_lup=requests / lups,
        first_touch_load_bytes_per_lup=first_touch * device.l1_sector_bytes / lups,
        capacity_miss_rate=p, modelled=modelled)
