"""What the first level holds for one launch: the unified L1/shared array minus the driver's carveout.

Since Volta, an NVIDIA SM has one data array for the L1 cache and shared memory. The driver picks,
per kernel, how much of it becomes shared memory (the *carveout*), from a short list of sizes, and
the rest is L1 (CUDA C++ Programming Guide, "Compute Capabilities": 7.x "Shared Memory", 8.x
"Shared Memory", 9.0 "Shared Memory"; Volta, Ampere and Hopper Tuning Guides, "Unified Shared
Memory/L1/Texture Cache": "the driver automatically configures the shared memory capacity for each
kernel to avoid shared memory occupancy bottlenecks"):

============  =========  ==============================================  ================
part          unified    shared-memory sizes (KB)                        reserved / block
============  =========  ==============================================  ================
Volta 7.0     128 KB     0, 8, 16, 32, 64, 96                            0
Ampere 8.0    192 KB     0, 8, 16, 32, 64, 100, 132, 164                 1 KB
Ampere 8.6    128 KB     0, 8, 16, 32, 64, 100                           1 KB
Ada 8.9       128 KB     0, 8, 16, 32, 64, 100                           1 KB
Hopper 9.0    256 KB     0, 8, 16, 32, 64, 100, 132, 164, 196, 228       1 KB
============  =========  ==============================================  ================

From compute capability 8.0 the system reserves 1 KB of shared memory per resident block
(``cudaDevAttrReservedSharedMemoryPerBlock``; CUDA C++ Programming Guide, 8.x and 9.0 "Shared
Memory"), so even a kernel without shared memory gets a carveout of at least 8 KB on Ampere, Ada
and Hopper, but none on Volta. The driver takes the smallest size that holds the shared memory of
the blocks resident at the launch's occupancy (:func:`carveout_bytes`). The public L1 sweeps of
gpu-benches agree (one block of 256 threads per SM, no shared memory): the V100's bandwidth holds
to 123 KiB of its 128 KB (no carveout), the A40's and L40's to about 110-116 KiB of 128 KB (an
8 KB carveout, 120 KB of L1; ``fits/data/public/gpu-cache/``).

The capacity-miss curve of the L1 (``fits/nvidia-*.toml``, ``l1_load``) was fitted on an A100 with
the oversubscription ``V_alloc,block / sqrt(192 KiB x 128 KiB)`` (the reference implementation of
Ernst et al. 2023; :mod:`warpspeed.memory.capacity.terms`). On that A100 a launch of the paper's
1024-thread blocks keeps 192 - 8 = 184 KiB of L1; the curve therefore says that a block's reuse
sees ``sqrt(192 x 128) / 184 = 0.852`` of the L1 its launch keeps
(:data:`~warpspeed.memory.capacity.terms.L1_REUSE_SHARE`), and every part takes that share of its own
kept L1 (:func:`l1_reuse_capacity`): the V100 128 KiB, an H200 launch of 1024-thread blocks
248 KiB, one of 64-thread blocks (32 resident) 224 KiB.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from warpspeed.units import KIB

if TYPE_CHECKING:
    from warpspeed.hardware.caches import CacheLevel


def carveout_bytes(level: "CacheLevel", blocks_per_sm: int, shared_bytes_per_block: int = 0) -> int:
    """The shared memory the driver carves out of ``level``'s unified array [B]: the smallest of its
    ``shared_carveouts_kib`` that holds ``blocks_per_sm`` x (``shared_bytes_per_block`` + the reserved
    shared memory per block), the largest where none does; 0 for a level without a unified array."""
    if level.unified_bytes is None or level.shared_carveouts_kib is None:
        return 0
    need = blocks_per_sm * (shared_bytes_per_block + (level.reserved_shared_bytes or 0))
    sizes = [k * KIB for k in level.shared_carveouts_kib]
    return next((size for size in sizes if size >= need), sizes[-1])


def l1_reuse_capacity(level: "CacheLevel", blocks_per_sm: int, shared_bytes_per_block: int = 0) -> int:
    """The L1 a launch keeps [B]: ``unified_bytes`` minus the carveout (:func:`carveout_bytes`) where
    the level shares its array with shared memory, else the level's ``bytes``."""
    if level.unified_bytes is None:
        return level.bytes
    return level.unified_bytes - carveout_bytes(level, blocks_per_sm, shared_bytes_per_block)
