"""The calibration benchmark as a warpspeed kernel: gpu-benches' ``gpu-roofline`` streaming kernel.

D. Ernst, GPU microbenchmarks, https://github.com/te42kyfo/gpu-benches, ``gpu-roofline/main.cu``
(commit e4e93a37819713515af27e0ffd8ae379df9a115b): each block of 256 threads owns a contiguous
chunk of ``256 x M`` elements of each array (``M`` = 4000); in every trip of its loop a thread loads
two element pairs, ``a[i]``, ``b[i]`` and ``a[i + 1]``, ``b[i + 1]`` of its column (rows ``i`` and
``i + 1`` of the chunk, ``256`` elements apart), computes ``v = a - b``, then ``its`` times
``v = v a - b`` (a fused multiply-add) for each pair, and adds both to a running sum: per element
pair 2 additions, ``its`` FMAs and 8 B loaded, nothing stored (one value per block). The grid is one full-occupancy wave (SMs x resident blocks per SM).

As a warpspeed kernel, one lattice update is one trip of a thread's loop: a 2-D array of
``BLOCK_THREADS`` columns (x, contiguous) and ``ROWS`` rows (y); cell ``(x, y)`` loads rows
``2y`` and ``2y + 1`` of column ``x`` of both arrays (16 B, :data:`BYTES_PER_UPDATE`) and does
:data:`PAIRS_PER_UPDATE` times the pair's arithmetic; blocks of 256 x 1 threads. A warp's load
covers 128 contiguous bytes, and each thread keeps the four loads of one trip in flight, as the
source's loop does (``#pragma unroll 1``: the next trip's loads issue after this trip's sum). Any
row count far beyond the L2 gives the same volumes. The measured GFLOP/s convert to updates/s
with :attr:`~warpspeed.kernel.description.FlopCounts.flops` of the description.
"""

from __future__ import annotations

from warpspeed.kernel.description import Field, FlopCounts, Kernel, X, Y, load

#: Threads per block of the benchmark's launch (``BLOCKSIZE`` of the source), the array's width.
BLOCK_THREADS = 256
#: Rows of the description's arrays (2^27 element pairs, far beyond any L2).
ROWS = 2**19
#: Element pairs per update: the two of one loop trip, 256 elements apart (rows 2y and 2y + 1).
PAIRS_PER_UPDATE = 2
#: Bytes loaded per update (two floats per pair).
BYTES_PER_UPDATE = 8 * PAIRS_PER_UPDATE


def roofline_benchmark(its: int) -> Kernel:
    """The benchmark with an inner loop of ``its`` FMAs per element pair (launch it with blocks of
    ``(BLOCK_THREADS, 1, 1)``): per update 2 subtractions and 2 additions and ``2 its`` FMAs."""
    shape = (BLOCK_THREADS, ROWS)
    y0, y1 = PAIRS_PER_UPDATE * Y, PAIRS_PER_UPDATE * Y + 1
    return Kernel(name=f"gpu-roofline-{its}", fields=(Field("a", 4, shape), Field("b", 4, shape)),
                  accesses=(load("a", X, y0), load("b", X, y0), load("a", X, y1), load("b", X, y1)),
                  domain=(BLOCK_THREADS, ROWS // PAIRS_PER_UPDATE, 1),
                  flops=FlopCounts(adds=2 * PAIRS_PER_UPDATE, fmas=PAIRS_PER_UPDATE * its), dtype="float32")
