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
  touches it (per field) and hits afterwards (:mod:`warpspeed.memory.first_touch`). This is the block's compulsory L2 -> L1 volume
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
(:class:`~warpspeed.memory.l1_stages.TagStage`) still bounds the cost from below.

L2 requests: one per missing line of a load instruction and one per line of a store instruction
(the L1TEX miss stage sends a request per cache line, ``l1tex__m_l1tex2xbar_req``); the time
models compare them with the miss stage's request rate.

Only NVIDIA's L1TEX unit is modelled this way (Volta and later; every NVIDIA family of
:data:`~warpspeed.memory.l1_stages.NVIDIA_L1_FAMILIES`): the strategy
:class:`~warpspeed.memory.first_level.NvidiaL1Tex` costs the instructions. AMD's first levels keep
the roofline's first-level cost: nothing is known about their miss path's wavefronts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from warpspeed.hardware.device import Device
from warpspeed.memo import BoundedMemo
from warpspeed.memory.addresses import BlockCells, CompiledKernel
from warpspeed.memory.distinct import distinct_first_counts
from warpspeed.memory.first_level import FirstLevel, first_level
from warpspeed.memory.first_touch import FirstTouches, first_touches, sector_ranks
from warpspeed.memory.l1 import L1Cycles, hit_cycles, refill_load_bytes, representative_costs
from warpspeed.memory.warps import WarpRows, address_period, warp_rows


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
        requests_limited: whether the first level sends its L2 requests through a miss stage of
            limited rate (NVIDIA L1TEX: :attr:`~warpspeed.memory.first_level.FirstLevel.models_misses`).

    Where the first level has no miss model (AMD, :attr:`~warpspeed.memory.first_level.FirstLevel.models_misses`)
    the numbers are its own instruction costs and the requests count first touches and store lines.
    """

    data_wavefronts_per_lup: float
    cycles_per_lup: float
    requests_per_lup: float
    first_touch_load_bytes_per_lup: float
    capacity_miss_rate: float
    requests_limited: bool = False


@dataclass(frozen=True)
class FirstLevelDemand:
    """What a block asks of the first level, from one pass over its warp instructions: ``hits``,
    the cycles when every access hits (the bank rule and the tag stage, :mod:`warpspeed.memory.l1`;
    the roofline's L1 limit), and ``misses``, the costs with the block's misses (module docstring)."""

    hits: L1Cycles
    misses: L1MissCosts


#: Sets of instruction kinds whose counts (:func:`_kind_counts`) are kept per set of representatives
#: and device (least recently used out): the 168 configurations of the star3d-r4 ranking have 88
#: distinct sets among some 40 sets of representatives.
KIND_COUNTS_MEMO_SIZE = 64

#: Bits of a packed (representative, miss mask) key left for the mask: masks below 2**33 (every warp
#: of 32 lanes) pack into one int64 with representatives below 2**30.
_PACKED_MASK_BITS = 33


def _kinds(reps: np.ndarray, masks: np.ndarray | None, representatives: int
           ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """The distinct (representative, miss mask) pairs of instructions, in ascending order of the
    representative, then the mask: their representatives, their masks (None without masks) and how
    many instructions each stands for. The pairs without a miss (every repetition of an earlier
    instruction, most of a block's) are counted per representative, the others found by sorting."""
    counts = np.bincount(reps if masks is None else reps[masks == 0], minlength=representatives)
    r0 = np.flatnonzero(counts)
    if masks is None:
        return r0, None, counts[r0]
    some = masks != 0
    rs, ms = reps[some], masks[some]
    if ms.size == 0:
        return r0, np.zeros(r0.size, dtype=np.uint64), counts[r0]
    if int(ms.max()) >> _PACKED_MASK_BITS == 0 and int(rs.max()) < 1 << 30:
        key = rs.astype(np.int64) * (np.int64(1) << _PACKED_MASK_BITS) + ms.astype(np.int64)
        first, weight = distinct_first_counts(key)
    else:  # wave64 masks need all 64 bits: unique rows
        pairs = np.stack([rs.astype(np.uint64), ms], axis=1)
        _, first, weight = np.unique(pairs, axis=0, return_index=True, return_counts=True)
    r = np.concatenate((r0, rs[first]))
    # a representative's pair without a miss (mask 0) before its others, which are in mask order
    order = np.argsort(r, kind="stable")
    return (r[order], np.concatenate((np.zeros(r0.size, dtype=np.uint64), ms[first]))[order],
            np.concatenate((counts[r0], weight))[order])


def _kind_counts(level: FirstLevel, warps: WarpRows, r: np.ndarray, masks: np.ndarray | None, rank: np.ndarray,
                 store: bool) -> tuple[tuple[np.ndarray, tuple[np.ndarray, ...]], ...]:
    """Per element size of the kinds' representatives ``r`` (with their miss ``masks`` over the
    representatives' sectors, None: nothing misses): which kinds have it and the first level's
    :meth:`~warpspeed.memory.first_level.FirstLevel.miss_counts` of them (read-only)."""
    a, v = warps.addresses[r], warps.lanes[r]
    m = (np.zeros_like(v) if masks is None else
         v & ((masks[:, None] >> np.maximum(rank[r], 0).astype(np.uint64)) & np.uint64(1)).astype(bool))
    sizes = warps.element_bytes[r]
    groups = []
    for elem in sorted(set(sizes.tolist())):
        sel = sizes == elem
        counts = level.miss_counts(a[sel], v[sel], m[sel], int(elem), store)
        for item in (sel, *counts):
            item.flags.writeable = False
        groups.append((sel, counts))
    return tuple(groups)


def first_level_demand(compiled: CompiledKernel, warps: WarpRows, lups: int, device: Device,
                       capacity_miss_rate: float, load_bytes: float,
                       touches: FirstTouches | None = None) -> FirstLevelDemand:
    """The first level's costs of a block whose warp instructions ``warps`` groups
    (:func:`warpspeed.memory.warps.block_warp_rows`), without and with its misses (module
    docstring); ``lups``: the block's lattice updates, ``capacity_miss_rate`` in [0, 1],
    ``load_bytes`` the block's load allocation (:func:`~warpspeed.memory.l1.refill_load_bytes`).

    Every representative instruction is costed once by the first level's rule
    (:func:`~warpspeed.memory.l1.representative_costs`); the costs when all hit sum those. The
    first touches are found among the instructions' sectors in the order of the module docstring
    (warp by warp, copy by copy, access by access); each load instruction is then one of few kinds,
    its representative and which of its sectors miss, and each kind is costed once from its
    representative's cost. ``touches``: the block's first touches
    (:func:`~warpspeed.memory.first_touch.first_touches`), if at hand."""
    p = min(1.0, max(0.0, float(capacity_miss_rate)))
    level = first_level(device)
    bank_rep, tag_rep = representative_costs(level, warps, load_bytes)
    hits = hit_cycles(compiled, warps, lups, bank_rep, tag_rep)
    sector = device.l1.sector_bytes
    is_load, _ = compiled.load_mask
    if touches is None or touches.sector_bytes != sector:
        touches = first_touches(compiled, warps, sector)
    _, _, rank = sector_ranks(warps, sector)
    rep, mask = touches.representatives, touches.masks

    data = cycles = requests = 0.0
    kinds = [(rep, mask, False), (warps.inverse[~is_load].reshape(-1), None, True)]
    for reps, masks, store in kinds:
        if reps.size == 0:
            continue
        r, kind_masks, weight = _kinds(reps, masks, warps.addresses.shape[0])
        # the kinds' counts depend on the representatives and the masks alone: blocks of a ranking
        # whose representatives are equal often have the same kinds (only their weights differ)
        memo = warps.derived_value(("miss counts", level.device), lambda: BoundedMemo(KIND_COUNTS_MEMO_SIZE))
        counted = memo.get((store, r.tobytes(), b"" if kind_masks is None else kind_masks.tobytes()),
                           lambda: _kind_counts(level, warps, r, kind_masks, rank, store))
        for sel, counts in counted:
            we, bank, tag = weight[sel].astype(float), bank_rep[r[sel]], tag_rep[r[sel]]
            cost, req = level.costs_from_counts(counts, store, p, bank)
            data += float(we @ cost)
            cycles += float(we @ np.maximum(cost, tag))
            requests += float(we @ req)
    misses = L1MissCosts(
        data_wavefronts_per_lup=data / lups, cycles_per_lup=cycles / lups, requests_per_lup=requests / lups,
        first_touch_load_bytes_per_lup=len(touches.keys) * sector / lups, capacity_miss_rate=p,
        requests_limited=level.models_misses)
    return FirstLevelDemand(hits=hits, misses=misses)


def l1_miss_costs(compiled: CompiledKernel, cells: BlockCells, device: Device, addresses: np.ndarray,
                  lanes: np.ndarray, capacity_miss_rate: float) -> L1MissCosts:
    """The costs with misses (:func:`first_level_demand`) of the block ``cells`` from its addresses:
    ``addresses`` and ``lanes`` are :func:`~warpspeed.memory.addresses.block_addresses` and
    :func:`~warpspeed.memory.addresses.instruction_lanes` of ``cells``."""
    warps = warp_rows(addresses, lanes, [a.field.element_bytes for a in compiled.accesses], device.warp_size,
                      address_period(device))
    load_bytes = refill_load_bytes(compiled, cells, device, warps, None)
    return first_level_demand(compiled, warps, cells.lups, device, capacity_miss_rate, load_bytes).misses
