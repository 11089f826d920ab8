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
* L1 oversubscription (eq. (4)): ``o_L1 = blocks per SM * L1 allocation per block / L1 capacity``.
"""

from __future__ import annotations


def redundant_bytes_per_lup(requested: float, compulsory: float) -> float:
    """``max(0, requested - compulsory)``: the redundant volume (bytes per lup) a cache level
    serves, from the volume requested of it and the compulsory volume of the level below."""
    return max(0.0, requested - compulsory)


def l1_oversubscription(blocks_per_sm: int, l1_alloc_bytes_per_block: float, l1_bytes: float) -> float:
    """``o_L1``: the L1 allocation of the resident blocks of an SM over the L1 capacity
    (dimensionless; allocation and capacity in bytes)."""
    return blocks_per_sm * l1_alloc_bytes_per_block / l1_bytes


def l2_load_bytes_per_lup(compulsory_bytes_per_lup: float, l1_load_bytes_per_lup: float,
                          l1_miss_rate: float) -> float:
    """L2 -> L1 load volume (bytes per lup): the block's compulsory volume plus the L1 capacity
    misses, ``l1_miss_rate`` (``m_l1_load(o_L1)``) times the redundant L1 load volume."""
    return compulsory_bytes_per_lup + l1_miss_rate * redundant_bytes_per_lup(
        l1_load_bytes_per_lup, compulsory_bytes_per_lup)
