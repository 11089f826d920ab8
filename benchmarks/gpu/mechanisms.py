#!/usr/bin/env python3
"""Microbenchmarks that isolate the memory mechanisms of the overlap model, on an NVIDIA GPU.

Needs only cupy and numpy (no warpspeed install), so it runs first on a GPU machine. Each sweep
writes one CSV into ``--out`` as soon as it is done, with ``#`` lines naming the GPU, the driver,
the date and what the columns mean:

``segments.csv``  DRAM bandwidth of a multi-array copy ``dst_i[c] = src_i[c - s_i]`` over a 3D
                  domain of ``fzyx`` arrays by the block's width in x (the contiguous bytes a block
                  row reads from each array: 4-4096 B), the block's shape (tall in y, or cubic),
                  the number of arrays (1-38), element size, shifts (none, or the 19 directions of
                  a D3Q19 velocity set, i.e. the pull pattern) and resident blocks per SM (fewer
                  through registers held live across the copy).
``stream.csv``    DRAM bandwidth of a one-cell-per-thread copy, read and write kernel in many short
                  blocks, by block size and resident blocks per SM, and by launch size (the
                  kernels a code generator emits, not a grid-stride loop).
``latency.csv``   pointer-chase latency of one thread by the stride between consecutive targets
                  and the number of distinct pages touched (the address-translation reach), for
                  L2-resident and DRAM-resident chains.

    python3 benchmarks/gpu/mechanisms.py --out DIR [--only segments,stream,latency] [--quick]

Bandwidths count bytes the kernel asks for (loads + stores of the cells it updates), not bytes the
DRAM moved; write-allocate does not happen on NVIDIA's L2 for fully written sectors.
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import math
import os
import subprocess
import sys
import time

#: D3Q19 directions (x, y, z) in lbmpy's order of the velocity set: rest, 6 faces, 12 edges.
D3Q19 = ((0, 0, 0), (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1),
         (1, 1, 0), (-1, 1, 0), (1, -1, 0), (-1, -1, 0), (1, 0, 1), (-1, 0, 1), (1, 0, -1),
         (-1, 0, -1), (0, 1, 1), (0, -1, 1), (0, 1, -1), (0, -1, -1))

#: Domain of the multi-array copy in cells (x, y, z) plus one ghost layer each side: the z-plane
#: of an array is 256 x 256 cells, as the 256^3 domains of generated LBM and stencil kernels.
SEG_DOMAIN = (256, 256, 64)
#: Threads per block of the multi-array copy (the block size of generated LBM kernels).
SEG_THREADS = 512
#: Block shapes of 512 threads: tall in y (one z-plane per block) and near-cubic (several planes).
TALL_SHAPES = ((1, 256, 2), (2, 256, 1), (4, 128, 1), (8, 64, 1), (16, 32, 1), (32, 16, 1), (64, 8, 1),
               (128, 4, 1), (256, 2, 1), (512, 1, 1))
CUBE_SHAPES = ((1, 16, 32), (2, 16, 16), (4, 8, 16), (8, 8, 8), (16, 4, 8), (32, 4, 4), (64, 2, 4),
               (128, 2, 2), (256, 1, 2))

STREAM_BYTES = 1 << 30          # bytes per array of the stream sweep
LATENCY_HOPS = 4096             # pointer-chase hops per measured point


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _gpu_header(cp) -> list[str]:
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,"
                              "clocks.mem,power.limit,ecc.mode.current", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        smi = "nvidia-smi not available"
    return [f"gpu: {name}, {props['multiProcessorCount']} SMs, L2 {props['l2CacheSize']} B, "
            f"shared memory per SM {props['sharedMemPerMultiprocessor']} B",
            f"nvidia-smi: {smi}",
            f"cupy {cp.__version__}, CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}, "
            f"driver {cp.cuda.runtime.driverGetVersion()}",
            f"measured: {_now()} by benchmarks/gpu/mechanisms.py (warpspeed)"]


class Writer:
    """A CSV written under a temporary name and renamed when complete."""

    def __init__(self, path: str, header: list[str], columns: list[str]):
        self.path, self.tmp = path, path + ".tmp"
        self.f = open(self.tmp, "w", newline="")
        for line in header:
            self.f.write(f"# {line}\n")
        self.w = csv.writer(self.f)
        self.w.writerow(columns)

    def row(self, *values) -> None:
        self.w.writerow([f"{v:.6g}" if isinstance(v, float) else v for v in values])
        self.f.flush()

    def close(self) -> None:
        self.f.close()
        os.replace(self.tmp, self.path)


def _time(cp, launch, warmup: int, repeats: int, batch: int = 1) -> tuple[float, float]:
    """(median, minimum) seconds of one launch; ``batch`` launches between two events."""
    for _ in range(warmup):
        launch()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(repeats):
        start.record()
        for _ in range(batch):
            launch()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) * 1e-3 / batch)
    times.sort()
    return times[len(times) // 2], times[0]


def _cap_smem(cp, kernel, blocks_per_sm: int, threads: int) -> int:
    """Dynamic shared memory per block that lets at most ``blocks_per_sm`` blocks reside (0: no cap)."""
    if blocks_per_sm <= 0:
        return 0
    dev = cp.cuda.Device()
    per_sm = dev.attributes["MaxSharedMemoryPerMultiprocessor"]
    per_block_max = dev.attributes["MaxSharedMemoryPerBlockOptin"]
    reserved = 1024                     # per-block system reservation on sm_80 and later
    smem = min(per_block_max, per_sm // blocks_per_sm - reserved)
    smem = (smem // 1024) * 1024
    if (per_sm // (smem + reserved)) != blocks_per_sm:
        return -1
    kernel.max_dynamic_shared_size_bytes = max(smem, kernel.max_dynamic_shared_size_bytes)
    return smem


# ------------------------------------------------------------------ multi-array copy

def _copy_source(name: str, ctype: str, n: int, shifted: bool, live: int = 0) -> str:
    """``n`` loads, then ``n`` stores that depend on all loads (as in a generated kernel that loads
    every field before it stores); ``live`` extra doubles read with volatile loads before
    the copy and used after it, so that the kernel needs about ``2 * live`` more registers and
    fewer blocks fit on an SM."""
    loads, stores = [], []
    for i in range(n):
        ex, ey, ez = D3Q19[i % 19] if shifted else (0, 0, 0)
        off = f"({-ex}LL + ({-ey}LL) * px + ({-ez}LL) * pxy)"
        loads.append(f"    {ctype} v{i} = src[{i}LL * stride + c + {off}];")
        stores.append(f"    dst[{i}LL * stride + c] = v{i} + t;")
    pins = "".join(f"    double r{k} = ((volatile const double*)live)[{k}];\n" for k in range(live))
    keep = " + ".join(f"r{k}" for k in range(live)) or "0.0"
    # every store depends on every load (t = s - s is 0 for finite data but not foldable under
    # IEEE rules), so all loads are issued before the first store, as in a generated kernel
    total = " + ".join(f"v{i}" for i in range(n))
    body = "\n".join(loads + [f"    {ctype} t = {total};", "    t = t - t;"] + stores)
    return f"""
extern "C" __global__ void __launch_bounds__({SEG_THREADS}) {name}(const {ctype}* __restrict__ src,
        {ctype}* __restrict__ dst, int nx, int ny, int nz, long long px, long long pxy, long long stride,
        const double* __restrict__ live) {{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= nx || y >= ny || z >= nz) return;
    long long c = (long long)(z + 1) * pxy + (long long)(y + 1) * px + (x + 1);
{pins}{body}
    if ((double)v0 == -12345.0) dst[0] = {keep};
}}
"""


def segments(cp, out: str, quick: bool) -> None:
    nx, ny, nz = SEG_DOMAIN
    px, py, pz = nx + 2, ny + 2, nz + 2
    pxy = px * py
    stride = pxy * pz
    w = Writer(os.path.join(out, "segments.csv"), _gpu_header(cp) + [
        f"multi-array copy dst_i[c] = src_i[c - s_i], domain {nx}x{ny}x{nz} cells + 1 ghost layer, fzyx "
        f"(array i at i * {stride} elements), {SEG_THREADS} threads per block; bytes = 2 * arrays * cells * "
        "element bytes; seconds = median of the timed launches"],
        ["family", "block_x", "block_y", "block_z", "arrays", "element_bytes", "shift", "live_doubles",
         "registers", "row_bytes", "seconds", "seconds_min", "bytes", "gb_s"])
    arrays_sweep = (1, 2, 4, 8, 19, 38) if not quick else (1, 4, 19)
    plans = []
    for family, shapes in (("tall", TALL_SHAPES), ("cube", CUBE_SHAPES)):
        for shape in shapes:
            for n in arrays_sweep:
                plans.append((family, shape, n, "double", False, 0))
            plans.append((family, shape, 19, "double", True, 0))
            plans.append((family, shape, 19, "float", False, 0))
    # fewer resident blocks through registers, not shared memory (which would shrink the L1)
    for shape in ((2, 256, 1), (4, 8, 16), (4, 128, 1), (8, 8, 8), (32, 16, 1), (32, 4, 4), (256, 2, 1)):
        for live in (16, 32):
            plans.append(("regs", shape, 19, "double", False, live))
            plans.append(("regs", shape, 19, "double", True, live))
        plans.append(("regs", shape, 4, "double", False, 32))
    modules: dict[tuple, object] = {}
    buffers: dict[str, tuple] = {}
    cells = nx * ny * nz
    live_values = cp.arange(64, dtype=cp.float64)
    for family, shape, n, ctype, shifted, live in plans:
        key = (n, ctype, shifted, live)
        if key not in modules:
            name = f"copy{n}_{ctype}_{'pull' if shifted else 'same'}_r{live}"
            modules[key] = cp.RawKernel(_copy_source(name, ctype, n, shifted, live), name,
                                        options=("-std=c++17",))
        kernel = modules[key]
        dt = cp.float64 if ctype == "double" else cp.float32
        need = max(arrays_sweep) * stride
        if ctype not in buffers:
            src = cp.ones(need, dtype=dt)
            dst = cp.zeros(need, dtype=dt)
            buffers[ctype] = (src, dst)
        src, dst = buffers[ctype]
        bx, by, bz = shape
        grid = (math.ceil(nx / bx), math.ceil(ny / by), math.ceil(nz / bz))
        args = (src, dst, cp.int32(nx), cp.int32(ny), cp.int32(nz), cp.int64(px), cp.int64(pxy), cp.int64(stride),
                live_values)
        try:
            med, best = _time(cp, lambda: kernel(grid, shape, args), 1, 5 if not quick else 3)
        except Exception as exc:  # noqa: BLE001 - a failed point is reported, the sweep goes on
            print(f"segments {family} {shape} {n} {ctype} {shifted} {live}: {type(exc).__name__}: {exc}",
                  file=sys.stderr, flush=True)
            continue
        esize = 8 if ctype == "double" else 4
        nbytes = 2 * n * cells * esize
        w.row(family, bx, by, bz, n, esize, "d3q19" if shifted else "none", live, kernel.num_regs,
              bx * esize, med, best, nbytes, nbytes / med / 1e9)
    w.close()
    buffers.clear()
    cp.get_default_memory_pool().free_all_blocks()


# ------------------------------------------------------------------ stream by blocks and launch size

_STREAM_SRC = r"""
extern "C" __global__ void st_copy(const double* __restrict__ a, double* __restrict__ b, long long n) {
    extern __shared__ char pad[];
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = a[i];
}
extern "C" __global__ void st_read(const double* __restrict__ a, double* __restrict__ b, long long n) {
    extern __shared__ char pad[];
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { double v = a[i]; if (v == 12345.0) b[i] = v; }
}
extern "C" __global__ void st_write(const double* __restrict__ a, double* __restrict__ b, long long n) {
    extern __shared__ char pad[];
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = 1.0;
}
"""


def stream(cp, out: str, quick: bool) -> None:
    w = Writer(os.path.join(out, "stream.csv"), _gpu_header(cp) + [
        "one cell per thread, 1D grid of short blocks; kind copy (b[i] = a[i], 16 B per cell), read (8 B), "
        "write (8 B); sweep 'occupancy': 2^27 cells by block size and blocks-per-SM cap (dynamic shared "
        "memory; 0 = no cap); sweep 'size': 256-thread blocks by cells, 20 launches between two events"],
        ["sweep", "kind", "threads", "blocks_per_sm_cap", "cells", "seconds", "seconds_min", "bytes", "gb_s"])
    n_max = STREAM_BYTES // 8
    a = cp.ones(n_max, dtype=cp.float64)
    b = cp.zeros(n_max, dtype=cp.float64)
    per_cell = {"copy": 16, "read": 8, "write": 8}
    threads_sweep = (32, 64, 128, 256, 512, 1024) if not quick else (64, 256, 1024)
    caps = (1, 2, 4, 8, 16, 32, 0) if not quick else (1, 4, 0)
    for kind in ("copy", "read", "write"):
        kernel = cp.RawKernel(_STREAM_SRC, f"st_{kind}")
        for threads in threads_sweep:
            for cap in caps:
                if cap and cap * threads > 2048:
                    continue
                smem = _cap_smem(cp, kernel, cap, threads)
                if smem < 0:
                    continue
                grid = (math.ceil(n_max / threads),)
                try:
                    med, best = _time(cp, lambda: kernel(grid, (threads,), (a, b, cp.int64(n_max)),
                                                         shared_mem=smem), 1, 5)
                except Exception as exc:  # noqa: BLE001 - a failed point is reported, the sweep goes on
                    print(f"stream {kind} {threads} {cap}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
                    continue
                nbytes = per_cell[kind] * n_max
                w.row("occupancy", kind, threads, cap, n_max, med, best, nbytes, nbytes / med / 1e9)
    kernel = cp.RawKernel(_STREAM_SRC, "st_copy")
    for exp in range(12, 28):
        n = 1 << exp
        grid = (math.ceil(n / 256),)
        med, best = _time(cp, lambda: kernel(grid, (256,), (a, b, cp.int64(n)), shared_mem=0), 2, 5, batch=20)
        nbytes = 16 * n
        w.row("size", "copy", 256, 0, n, med, best, nbytes, nbytes / med / 1e9)
    w.close()
    del a, b
    cp.get_default_memory_pool().free_all_blocks()


# ------------------------------------------------------------------ pointer chase by page reach

_CHASE_SRC = r"""
extern "C" __global__ void chase(const long long* __restrict__ next, long long start, int hops,
                                 long long* __restrict__ sink) {
    long long p = start;
    for (int h = 0; h < hops; ++h) p = next[p];
    sink[0] = p;
}
"""


def latency(cp, out: str, quick: bool) -> None:
    import numpy as np

    w = Writer(os.path.join(out, "latency.csv"), _gpu_header(cp) + [
        "one thread follows a random cycle over 'targets' 8-byte words spaced 'stride_bytes' apart (each at a "
        "different offset inside its 4 KiB to spread L2 sets); 'warm': the cycle is walked once before timing "
        "(L2-resident when targets * 32 B fit in L2), 'cold': timed hops touch targets for the first time "
        f"after an L2 flush; ns per hop = seconds / {LATENCY_HOPS}; footprint = targets * stride"],
        ["mode", "stride_bytes", "targets", "footprint_bytes", "hops", "ns_per_hop"])
    kernel = cp.RawKernel(_CHASE_SRC, "chase")
    sink = cp.zeros(1, dtype=cp.int64)
    rng = np.random.default_rng(2026)
    flush = cp.zeros(64 << 20, dtype=cp.float64)          # 512 MiB, larger than any L2
    free = cp.cuda.runtime.memGetInfo()[0]
    plans = []
    for stride in (4096, 65536, 1 << 21, 1 << 23):
        for targets in (16, 64, 256, 512, 1024, 2048, 4096, 8192, 16384):
            if quick and targets not in (64, 1024, 8192):
                continue
            plans.append(("warm", stride, targets))
    for stride, targets in ((128, 1 << 21), (4096, 1 << 16), (1 << 21, 1 << 13), (1 << 16, 1 << 16)):
        plans.append(("cold", stride, targets))
    for mode, stride, targets in plans:
        footprint = stride * targets
        if footprint > 0.6 * free:
            continue
        words = footprint // 8
        mem = cp.empty(words, dtype=cp.int64)
        order = rng.permutation(targets)
        jitter = (np.arange(targets, dtype=np.int64) * 37 % 32) * 128 if stride >= 4096 else 0
        pos = (np.arange(targets, dtype=np.int64) * stride + jitter) // 8
        nxt = np.empty(targets, dtype=np.int64)
        nxt[order[:-1]] = pos[order[1:]]
        nxt[order[-1]] = pos[order[0]]
        mem[cp.asarray(pos)] = cp.asarray(nxt)
        start = int(pos[order[0]])
        hops = LATENCY_HOPS if mode == "warm" else min(LATENCY_HOPS, targets)
        if mode == "warm":
            kernel((1,), (1,), (mem, cp.int64(start), cp.int32(targets), sink))
        else:
            flush.fill(1.0)
        cp.cuda.Device().synchronize()
        start_ev, end_ev = cp.cuda.Event(), cp.cuda.Event()
        start_ev.record()
        kernel((1,), (1,), (mem, cp.int64(start), cp.int32(hops), sink))
        end_ev.record()
        end_ev.synchronize()
        seconds = cp.cuda.get_elapsed_time(start_ev, end_ev) * 1e-3
        w.row(mode, stride, targets, footprint, hops, seconds / hops * 1e9)
        del mem
        cp.get_default_memory_pool().free_all_blocks()
    w.close()


SWEEPS = {"segments": segments, "stream": stream, "latency": latency}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="folder for the CSVs (created)")
    parser.add_argument("--only", default=",".join(SWEEPS), help="comma-separated sweeps: " + ", ".join(SWEEPS))
    parser.add_argument("--quick", action="store_true", help="a few points per sweep (a smoke test)")
    parser.add_argument("--gpu", type=int, default=0, help="CUDA device index")
    args = parser.parse_args(argv)
    names = [s for s in args.only.split(",") if s]
    unknown = [s for s in names if s not in SWEEPS]
    if unknown:
        print(f"error: unknown sweep {unknown[0]!r}; allowed: {', '.join(SWEEPS)}", file=sys.stderr)
        return 2
    try:
        import cupy as cp
    except ImportError:
        print("error: mechanisms.py needs cupy and an NVIDIA GPU", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    status = 0
    with cp.cuda.Device(args.gpu):
        for name in names:
            t0 = time.time()
            try:
                SWEEPS[name](cp, args.out, args.quick)
                print(f"{name}: done in {time.time() - t0:.1f} s", flush=True)
            except Exception as exc:  # noqa: BLE001 - one failed sweep must not lose the others
                print(f"{name}: failed after {time.time() - t0:.1f} s: {type(exc).__name__}: {exc}", flush=True)
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
