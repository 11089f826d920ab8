"""The capacity terms of the volume model, one function per equation (Ernst et al. 2023, 4.5).

The predictor (:mod:`warpspeed.predict`, :mod:`warpspeed.memory.dram`) and the refit of the
curves on measurements (:mod:`warpspeed.validation.refit`) both evaluate these functions, so a
changed curve changes both in the same way.

* Redundant volume (eq. (2)): what a cache level is asked for beyond the compulsory volume of
  the level below, ``V_red = max(0, V_requested - V_compulsory)`` bytes per lattice update.
* L1 capacity misses (eq. (5)): the L2 -> L1 load volume is the compulsory volume of the block
  plus the part of the redundant L1 volume that misses,
  ``V_L2 = V_L2,compulsory + m_l1_load(o_L1) * max(0, V_L1,load - V_L2,compulsory)``, where
  ``V_L1,load`` is the L1 load volume without reuse (4.3).

Oversubscription factors (eq. (4): allocated volume over cache capacity). The curve parameters
in ``fits/`` come from the reference implementation of Ernst et al. 2023 (repository
te42kyfo/warpspeed, file warpspeed/predict_metrics.py, class DerivedMetrics, commit
2ad0722c3f6c5a1657ac495d09bbc86d6c7983ec of 2025-03-10), which evaluates each curve at its own
definition of the oversubscription; a curve is only meaningful at the definition it was fitted
with, so these functions follow that code:

* L1 redundant loads (``popt_L1Rover``, ``L1coverage``): the L1 allocation of one block (its
  load lines at 128 B) over the geometric mean of the L1 capacity and 128 KiB,
  ``V_alloc,block / sqrt(L1 bytes * 128 KiB)`` (not multiplied by the blocks per SM: the code
  notes that the resident blocks are in different phases). The curve was fitted on an A100, whose
  launches of 1024-thread blocks keep 184 KiB of its 192 KiB unified L1/shared array (an 8 KB
  carveout, :mod:`warpspeed.memory.capacity.carveout`); the reference definition is therefore a
  share :data:`L1_REUSE_SHARE` = sqrt(192 x 128) / 184 = 0.852 of the L1 the launch keeps, and
  warpspeed evaluates every part at that share of its own kept L1,
  ``o_L1 = V_alloc,block / (L1_kept * 0.852)``: the reference definition on the A100, the full
  128 KiB of a Volta SM (no carveout), 248 KiB on an H200 launch of 1024-thread blocks (on the
  H200 this puts the L2 -> L1 load of three profiled blocks of the 25-point star within +1 to
  +9 % of the measured, as the earlier linear scaling of the nominal capacity did; the
  square-root definition at the nominal 256 KiB gives +10, +7 and +13 %; ``fits/data/H200/``);
* z layer overlaps (``popt_WaveOverlapRover1``, ``waveOverlapOversubscription``): the volume
  of the previous-neighbour set plus the wave's load volume minus their overlap, i.e. the
  lines of ``A(P_z) ∪ L(W)`` at the DRAM transfer granularity, over the L2 capacity,
  ``o_z = |A(P_z) ∪ L(W)| * line / L2 bytes``;
* x and y layer overlaps: their curve is the separate y curve of the same code as of 2022
  (``rover0`` in DerivedMetrics, file predict_metrics.py, commit
  c21407491a5aee94fc51ed3bbf3161c9dbd38e59 of 2022-11-30; the same from commit b09c005 of
  2022-04-20 to b7134bd of 2024-11-09),
  evaluated there at the volume of its x and y sets alone (file volumes_isl3d.py, same commit:
  ``VLoadOldX + VStoreOldX + VLoadOldY + VStoreOldY``, 32 B sectors, load and store lines
  counted separately) over the L2 capacity, clamped to ``[0.01, 10]``, and 0.1 when both sets
  are empty: ``o_xy = min(10, max(0.01, V_band / L2 bytes))``
  (:func:`band_oversubscription`; the sets: :mod:`warpspeed.memory.wave.geometry`);
* L2 redundant loads and stores (``popt_L2Rover``, ``popt_L2StoreRover``,
  ``L2Oversubscription``): the wave's load plus store volume at the transfer granularity over
  the geometric mean of the L2 capacity and 4 MiB, ``o_L2 = V_wave / sqrt(L2 bytes * 4 MiB)``.

The capacities are the effective ones (the reference code's A100 L2 is 20 MiB, half the
nominal 40 MiB, as in Ernst et al. 2023, section 3).
"""

from __future__ import annotations

import math

from warpspeed.units import KIB, MIB

#: The second factor of the geometric mean in the reference implementation's L1
#: oversubscription, ``sqrt(sizeL1) * sqrt(128 * 1024)`` (bytes; te42kyfo/warpspeed,
#: warpspeed/predict_metrics.py, DerivedMetrics.L1coverage, commit 2ad0722c).
REFERENCE_L1_SCALE_BYTES = 128 * KIB
#: The L1 capacity of the A100 the L1 curve was fitted on (192 KiB combined L1/shared per SM;
#: NVIDIA A100 Tensor Core GPU Architecture whitepaper, 2020), as the reference definition takes it.
REFERENCE_L1_BYTES = 192 * KIB
#: The L1 an A100 launch of the paper's 1024-thread blocks keeps: 192 KiB less the 8 KB carveout
#: (two resident blocks x 1 KB reserved shared memory; :mod:`warpspeed.memory.capacity.carveout`).
REFERENCE_L1_KEPT_BYTES = 192 * KIB - 8 * KIB
#: The share of the L1 a launch keeps that a block's reuse sees, as the A100 curve has it:
#: ``sqrt(192 KiB x 128 KiB) / 184 KiB`` = 0.852 (module docstring).
L1_REUSE_SHARE = math.sqrt(REFERENCE_L1_BYTES * REFERENCE_L1_SCALE_BYTES) / REFERENCE_L1_KEPT_BYTES

#: The second factor of the geometric mean in the reference implementation's L2
#: oversubscription, ``sqrt(sizeL2) * 2 * 1024 = sqrt(sizeL2 * 4 MiB)`` (bytes; same file,
#: DerivedMetrics.L2Oversubscription).
REFERENCE_L2_SCALE_BYTES = 4 * MIB


def redundant_bytes_per_lup(requested: float, compulsory: float) -> float:
    """``max(0, requested - compulsory)``: the redundant volume (bytes per lup) a cache level
    serves, from the volume requested of it and the compulsory volume of the level below."""
    return max(0.0, requested - compulsory)


def l1_oversubscription(l1_alloc_bytes_per_block: float, l1_kept_bytes: float) -> float:
    """``o_L1 = V_alloc,block / (l1_kept_bytes * L1_REUSE_SHARE)``: one block's L1 allocation
    (bytes) over the share :data:`L1_REUSE_SHARE` of the L1 the launch keeps
    (:func:`warpspeed.memory.capacity.carveout.l1_reuse_capacity`; dimensionless; module docstring)."""
    return l1_alloc_bytes_per_block / (l1_kept_bytes * L1_REUSE_SHARE)


def layer_oversubscription(layer_bytes: float, l2_bytes: float) -> float:
    """``o_d = |A(P_d) ∪ L(W)| * line / L2 bytes``: the volume that must stay cached for the
    layer condition along ``d`` (bytes) over the L2 capacity (module docstring)."""
    return layer_bytes / l2_bytes


#: Bounds of the x and y layer oversubscription in the reference implementation as of 2022
#: (``min(10, max(0.01, Vold / sizeL2))`` in DerivedMetrics.rover0, te42kyfo/warpspeed,
#: predict_metrics.py, commit c214074).
BAND_OVERSUBSCRIPTION_BOUNDS = (0.01, 10.0)

#: The x and y layer oversubscription that code takes when its x and y sets are empty
#: (``if Vold == 0: oversubscription = 0.1``, same function).
EMPTY_BAND_OVERSUBSCRIPTION = 0.1


def band_oversubscription(band_bytes: float, l2_bytes: float) -> float:
    """``o_xy = min(10, max(0.01, V_band / l2_bytes))``, 0.1 when ``V_band = 0``: the volume of
    the wave's x and y bands (bytes, loads and stores of each band counted separately) over
    the L2 capacity, bounded as the y curve's source does (module docstring)."""
    if band_bytes == 0:
        return EMPTY_BAND_OVERSUBSCRIPTION
    lo, hi = BAND_OVERSUBSCRIPTION_BOUNDS
    return min(hi, max(lo, band_bytes / l2_bytes))


def curve_oversubscriptions(band_bytes: float, z_layer_bytes: float, l2_bytes: float) -> tuple[float, float, float]:
    """The oversubscription of the x, y and z layer curves, each at its source's definition:
    :func:`band_oversubscription` for x and y, :func:`layer_oversubscription` for z."""
    o_xy = band_oversubscription(band_bytes, l2_bytes)
    return (o_xy, o_xy, layer_oversubscription(z_layer_bytes, l2_bytes))


def l2_oversubscription(wave_bytes: float, l2_bytes: float) -> float:
    """``o_L2 = V_wave / sqrt(l2_bytes * 4 MiB)``: the wave's load plus store volume (bytes)
    over the geometric mean of the L2 capacity and :data:`REFERENCE_L2_SCALE_BYTES`
    (module docstring)."""
    return wave_bytes / math.sqrt(l2_bytes * REFERENCE_L2_SCALE_BYTES)


def l2_load_bytes_per_lup(compulsory_bytes_per_lup: float, l1_load_bytes_per_lup: float,
                          l1_miss_rate: float) -> float:
    """L2 -> L1 load volume (bytes per lup): the block's compulsory volume plus the L1 capacity
    misses, ``l1_miss_rate`` (``m_l1_load(o_L1)``) times the redundant L1 load volume."""
    return compulsory_bytes_per_lup + l1_miss_rate * redundant_bytes_per_lup(
        l1_load_bytes_per_lup, compulsory_bytes_per_lup)
