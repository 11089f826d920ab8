"""The calibration benchmark as a warpspeed kernel: gpu-benches' ``gpu-roofline`` streaming kernel.

Per element pair (one lattice update here) it loads ``a`` and ``b`` (4 B floats), computes
``v = a - b``, then ``its`` times ``v = v a - b`` (a fused multiply-add) and adds ``v`` to a running
sum: 2 additions and ``its`` FMAs per update, 8 B loaded, nothing stored (one value per block).
Every thread of a full-occupancy launch streams through its own part of the arrays, so the kernel
is described as a 1-D stream over ``DOMAIN_CELLS`` pairs with blocks of 256 threads.
"""

from __future__ import annotations

from warpspeed.kernel.description import Field, FlopCounts, Kernel, X, load

#: Pairs the description streams over (any size far beyond the L2 gives the same volumes).
DOMAIN_CELLS = 2**27
#: Threads per block of the benchmark's launch.
BLOCK_THREADS = 256
#: Bytes loaded per update (two floats).
BYTES_PER_UPDATE = 8


def roofline_benchmark(its: int) -> Kernel:
    """The benchmark with an inner loop of ``its`` FMAs."""
    shape = (DOMAIN_CELLS,)
    return Kernel(name=f"gpu-roofline-{its}", fields=(Field("a", 4, shape), Field("b", 4, shape)),
                  accesses=(load("a", X), load("b", X)), domain=(DOMAIN_CELLS, 1, 1),
                  flops=FlopCounts(adds=2, fmas=its), dtype="float32")
