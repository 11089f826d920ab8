"""The calibration benchmark as a warpspeed kernel: gpu-benches' ``gpu-roofline`` streaming kernel.

D. Ernst, GPU microbenchmarks, https://github.com/te42kyfo/gpu-benches, ``gpu-roofline/main.cu``
(commit e4e93a37819713515af27e0ffd8ae379df9a115b): each block of 256 threads owns a contiguous
chunk of ``256 x M`` elements of each array (``M`` = 4000); in every trip of its loop a thread loads
two element pairs, ``a[i]``, ``b[i]`` and ``a[i + 1]``, ``b[i + 1]`` of its column (rows ``i`` and
``i + 1`` of the chunk, ``256`` elements apart), computes ``v = a - b``, then ``its`` times
``v = v a - b`` (a fused multiply-add) for each pair, and adds both to a running sum: per element
pair (one lattice update here) 2 additions, ``its`` FMAs and 8 B loaded, nothing stored (one value
per block). The grid is one full-occupancy wave (SMs x resident blocks per SM).

As a warpspeed kernel: a 2-D array of ``BLOCK_THREADS`` columns (x, contiguous) and
``ROWS`` rows (y), blocks of 256 x 1 threads, each thread folded over 2 rows
(:data:`BENCHMARK_FOLD`): a warp's load covers 128 contiguous bytes, and each thread keeps the
four loads of one loop trip (16 B) in flight, as the source's loop does (``#pragma unroll 1``:
the next trip's loads issue after this trip's sum). Any row count far beyond the L2 gives the
same volumes.
"""

from __future__ import annotations

from warpspeed.kernel.description import Field, FlopCounts, Kernel, X, Y, load

#: Threads per block of the benchmark's launch (``BLOCKSIZE`` of the source), the array's width.
BLOCK_THREADS = 256
#: Rows of the description's arrays (2^27 element pairs, far beyond any L2).
ROWS = 2**19
#: Cells per thread: the two element pairs of one loop trip, 256 elements apart (rows i, i + 1).
BENCHMARK_FOLD = (1, 2, 1)
#: Bytes loaded per update (two floats).
BYTES_PER_UPDATE = 8


def roofline_benchmark(its: int) -> Kernel:
    """The benchmark with an inner loop of ``its`` FMAs (launch it with blocks of
    ``(BLOCK_THREADS, 1, 1)`` and fold :data:`BENCHMARK_FOLD`)."""
    shape = (BLOCK_THREADS, ROWS)
    return Kernel(name=f"gpu-roofline-{its}", fields=(Field("a", 4, shape), Field("b", 4, shape)),
                  accesses=(load("a", X, Y), load("b", X, Y)), domain=(BLOCK_THREADS, ROWS, 1),
                  flops=FlopCounts(adds=2, fmas=its), dtype="float32")
