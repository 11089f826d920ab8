#!/usr/bin/env python3
"""Microbenchmarks of the in-core (SM-side) mechanisms, on an NVIDIA GPU.

Needs only cupy and numpy (no warpspeed install). Each part writes one CSV ``sm-<part>.csv`` into
``--out`` as its rows are measured, with ``#`` lines naming the GPU, its SM count and clocks
(nvidia-smi when present), the date, this script and what the columns mean; one row per
measurement: the median and the minimum of the timed launches (each between its own pair of CUDA
events, after warm-up launches), the kernel's registers, its resident blocks per SM (the occupancy
API) and the SM clock measured with a ``clock64()`` spin just before the part.

Parts (``--parts a,b,...``; all by default):

``a``  misaligned: a warp's contiguous row of 32 elements starting 0-31 elements past a 128 B
       line, float and double, re-read from a 16/32 KiB window (L1-resident) and streamed once
       from DRAM (misalignment cost per load, in wavefronts and in sectors).
``b``  loads-fma: a loop body of L coalesced L1-resident loads and F fused multiply-adds in one
       dependent chain or in up to 8 independent chains, at full occupancy (LSU instruction rate
       against the FP pipe).
``c``  chains: 64 FMAs per loop trip in 1, 2, 4 or 8 dependent chains per thread, FP32 and FP64,
       by resident warps per SM (1-64; dependency latency exposed at an occupancy).
``d``  ifetch: an unrolled loop body of N FFMAs (16 B of SASS each: 1-128 KiB) repeated, at 8 and
       64 warps per SM (instruction fetch).
``e``  intmix: 64 operations per loop trip of which a share 0-1 is integer (IMAD, or IADD3 and
       LOP3 alternating, 8 chains) interleaved with FFMA (FP32/INT32 sharing of issue and pipes).
``f``  stencils: 2-D and 3-D box stencils of radius 1-7 and high-order stars (2-D radius 4 and 8,
       3-D radius 2, 4 and 8), float and double, weights in constant memory, plain global loads,
       1, 2 or 4 outputs per thread consecutive in y, three block shapes each (SM-bound kernels
       of our own: L1 and LSU load, FP work, folding).
``g``  d3q19: a D3Q19-like pull kernel (not lbmpy's): 19 arrays in and 19 out, 0, 1 or 3 dense
       19x19 passes of floating-point work per cell, one block of 512 threads per SM (the
       shared-memory cap) or as many as fit, one cell per thread against two cells consecutive in
       y or in z (what folding costs at equal occupancy).

    python3 benchmarks/gpu/sm_mechanisms.py --out DIR [--parts a,b,...] [--budget 120] [--dry-run]
        [--only REGEX] [--points-per-kernel N] [--warmup 2] [--repeats 7] [--gpu 0]

``--dry-run`` needs neither cupy nor a GPU: it prints each part's kernels, launches and the
estimated time on an H200 (compilation included) against ``--budget``. Every kernel's CUDA source
is made by a function of this module that needs no cupy (``*_source``), so the sources can be
compiled and their SASS counted without a GPU. With nvcc on PATH all kernels are compiled first,
on every core, to cubins of the GPU's architecture (else cupy's NVRTC compiles each when first
launched), and ``sm-sass.csv`` lists every kernel's SASS opcodes where cuobjdump is found.
``--only`` and ``--points-per-kernel`` pick a few kernels, e.g. for Nsight Compute.
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

SCRIPT = "benchmarks/gpu/sm_mechanisms.py"

# ------------------------------------------------------------------ planning figures (dry run)
# Used only to estimate the run time before it starts and to size the launches; the measurements
# do not depend on them.

#: SMs of an H200 SXM (fits/data/H200/mech-stream.csv header: "NVIDIA H200, 132 SMs").
PLAN_SMS = 132
#: SM clock under load, Hz (fits/data/H200/README.md: 1980 MHz under load).
PLAN_CLOCK_HZ = 1.98e9
#: DRAM bandwidth of a copy, B/s (fits/data/H200/mech-stream.csv: 2^27-double copy, 256 threads,
#: 3787 GB/s).
PLAN_DRAM_BPS = 3.787e12
#: Seconds per launch of a tiny kernel from Python (fits/data/H200/mech-stream.csv, 'size' sweep:
#: 7.6 us at 4096 cells).
PLAN_LAUNCH_S = 7.6e-6
#: Host seconds per timed launch beyond the kernel (event record and synchronize), a guess.
PLAN_SYNC_S = 30e-6
#: FP32 and FP64 fused multiply-adds per clock per SM on compute capability 9.0 (NVIDIA, CUDA C++
#: Programming Guide, "Arithmetic Instructions" throughput table: 128 and 64 results per clock).
PLAN_FP32_PER_CLK = 128
PLAN_FP64_PER_CLK = 64
#: 32-bit integer add and multiply-add results per clock per SM, compute capability 9.0 (same table: 64).
PLAN_INT_PER_CLK = 64
#: Warp-wide load instructions and 128 B L1 wavefronts per clock per SM (one each, the usual
#: planning figure for the L1 data path since Volta: Jia, Maggioni, Staiger, Scarpazza, "Dissecting
#: the NVIDIA Volta GPU Architecture via Microbenchmarking", arXiv:1804.06826, 2018).
PLAN_LSU_PER_CLK = 1.0
#: Dependent FFMA/DFMA latency in cycles used for the plan (Jia et al. 2018: 4 cycles FP32; 8 FP64
#: taken as a bound).
PLAN_FP32_LATENCY = 4
PLAN_FP64_LATENCY = 8
#: Compile time of one kernel: a fixed part, seconds per SASS instruction and per instruction
#: squared (nvcc 13.0 -cubin for sm_90 on a shared 2-core x86 machine: a 64-FFMA loop 0.3 s, the
#: 2048-FFMA body 0.8 s, the 3-D box of radius 5 with four outputs per thread, 8700 instructions,
#: 7 s; radius 7 with one output per thread, 10 200 instructions, 14 s).
PLAN_COMPILE_BASE_S = 0.25
PLAN_COMPILE_PER_INSTR_S = 2.0e-4
PLAN_COMPILE_PER_INSTR2_S = 1.2e-7
#: nvcc processes run at once when nvcc is on PATH (the H200 machines lent have 16 cores).
PLAN_COMPILE_WORKERS = 16

#: Warm-up launches and timed launches per measurement.
WARMUP = 2
REPEATS = 7
#: Target seconds of one launch of the loop kernels (long enough that the launch cost is < 2 %).
TARGET_LAUNCH_S = 4e-4


# ------------------------------------------------------------------ kernel sources (no cupy)

CTYPES = ("float", "double")
ESIZE = {"float": 4, "double": 8}
#: Elements of the window that every warp of the L1-resident kernels re-reads: 16 KiB of floats,
#: 32 KiB of doubles (fits in the L1 of every NVIDIA GPU since Volta).
WINDOW = 4096
#: Loads per loop trip in the misaligned kernels.
MIS_UNROLL = 16
#: FMAs per loop trip of the chains kernels.
CHAIN_FMAS = 64
#: Operations per loop trip of the integer-mix kernels, and chains of each kind.
MIX_BODY = 64
MIX_CHAINS = 8
#: Independent FFMA chains of the instruction-fetch bodies.
IFETCH_CHAINS = 8
#: D3Q19 directions (x, y, z): rest, 6 faces, 12 edges (the order of lbmpy's velocity set).
D3Q19 = ((0, 0, 0), (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1),
         (1, 1, 0), (-1, 1, 0), (1, -1, 0), (-1, -1, 0), (1, 0, 1), (-1, 0, 1), (1, 0, -1),
         (-1, 0, -1), (0, 1, 1), (0, -1, 1), (0, 1, -1), (0, -1, -1))


def _suffix(ctype: str) -> str:
    return "f32" if ctype == "float" else "f64"


def _fma(ctype: str) -> str:
    return "fmaf" if ctype == "float" else "fma"


def _lit(ctype: str, value: float) -> str:
    text = repr(float(value))
    return text + "f" if ctype == "float" else text


def _check_ctype(ctype: str) -> None:
    if ctype not in CTYPES:
        raise ValueError(f"element type {ctype!r}: allowed float, double")


def misaligned_name(ctype: str, where: str) -> str:
    return f"mis_{where}_{_suffix(ctype)}"


def misaligned_source(ctype: str, where: str) -> str:
    """Each warp loads rows of 32 consecutive elements starting ``off`` elements (a kernel
    argument, 0-31) past a row boundary: MIS_UNROLL loads per thread, summed in 4 accumulators.

    ``where="l1"``: a loop of ``iters`` trips over a WINDOW-element window that every warp
    re-reads (L1-resident); ``where="dram"``: straight-line, each warp reads MIS_UNROLL
    consecutive rows of a large array once."""
    _check_ctype(ctype)
    if where not in ("l1", "dram"):
        raise ValueError(f"where {where!r}: allowed l1, dram")
    t, name = ctype, misaligned_name(ctype, where)
    sums = [f"a{k % 4} += q[{32 * k}];" for k in range(MIS_UNROLL)]
    body = "\n        ".join(sums)
    head = (f'extern "C" __global__ void __launch_bounds__(256) {name}(const {t}* __restrict__ src, '
            f'{t}* __restrict__ dst, int off, int iters) {{\n'
            f"    {t} a0 = 0, a1 = 0, a2 = 0, a3 = 0;\n")
    tail = (f"    {t} s = (a0 + a1) + (a2 + a3);\n"
            f"    if (s == ({t})-1) dst[blockIdx.x * blockDim.x + threadIdx.x] = s;\n}}\n")
    if where == "l1":
        return head + (f"    const {t}* p = src + off + (threadIdx.x & 31);\n"
                       "    unsigned base = 0;\n"
                       "    #pragma unroll 1\n"
                       "    for (int it = 0; it < iters; ++it) {\n"
                       f"        const {t}* q = p + base;\n"
                       f"        {body}\n"
                       f"        base = (base + {32 * MIS_UNROLL}u) & {WINDOW - 1}u;\n"
                       "    }\n") + tail
    return head + ("    long long row = ((long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * "
                   f"{32 * MIS_UNROLL}LL;\n"
                   f"    const {t}* q = src + row + off + (threadIdx.x & 31);\n"
                   f"    {body}\n") + tail


def loads_fma_name(ctype: str, loads: int, fmas: int, chains: int) -> str:
    return f"lf_{_suffix(ctype)}_l{loads}_f{fmas}_c{chains}"


def loads_fma_source(ctype: str, loads: int, fmas: int, chains: int) -> str:
    """A loop trip: ``loads`` coalesced aligned loads (rows 32 elements apart inside a WINDOW-element
    L1-resident window) and ``fmas`` FMAs ``a_j = fma(a_j, v_l, c)``, the k-th on chain k mod
    ``chains`` with load k mod ``loads``; loads that no FMA uses are added to a chain (one FADD or
    DADD each). ``chains`` = 1: all FMAs dependent."""
    _check_ctype(ctype)
    if loads < 1 or fmas < 0 or chains < 1 or chains > max(fmas, 1):
        raise ValueError(f"loads {loads}, fmas {fmas}, chains {chains}: need loads >= 1, fmas >= 0, "
                         "1 <= chains <= max(fmas, 1)")
    t, f = ctype, _fma(ctype)
    lines = [f"{t} v{l} = q[{32 * l}];" for l in range(loads)]
    lines += [f"a{k % chains} = {f}(a{k % chains}, v{k % loads}, c);" for k in range(fmas)]
    lines += [f"a{l % chains} += v{l};" for l in range(fmas, loads)]
    body = "\n        ".join(lines)
    init = ", ".join(f"a{j} = ({t})threadIdx.x" for j in range(chains))
    total = " + ".join(f"a{j}" for j in range(chains))
    name = loads_fma_name(ctype, loads, fmas, chains)
    return (f'extern "C" __global__ void __launch_bounds__(256) {name}(const {t}* __restrict__ src, '
            f"{t}* __restrict__ dst, int iters, {t} c) {{\n"
            f"    {t} {init};\n"
            f"    const {t}* p = src + (threadIdx.x & 31);\n"
            "    unsigned base = 0;\n"
            "    #pragma unroll 1\n"
            "    for (int it = 0; it < iters; ++it) {\n"
            f"        const {t}* q = p + base;\n"
            f"        {body}\n"
            f"        base = (base + {32 * loads}u) & {WINDOW - 1}u;\n"
            "    }\n"
            f"    {t} s = {total};\n"
            f"    if (s == ({t})-1) dst[blockIdx.x * blockDim.x + threadIdx.x] = s;\n}}\n")


def chains_name(ctype: str, chains: int, fmas: int = CHAIN_FMAS) -> str:
    return f"ch_{_suffix(ctype)}_c{chains}_n{fmas}"


def chains_source(ctype: str, chains: int, fmas: int = CHAIN_FMAS) -> str:
    """A loop trip of ``fmas`` FMAs ``a_j = fma(a_j, b, c)`` round-robin over ``chains`` independent
    chains (b and c kernel arguments); dynamic shared memory only caps the resident blocks."""
    _check_ctype(ctype)
    if chains < 1 or fmas < chains:
        raise ValueError(f"chains {chains}, fmas {fmas}: need 1 <= chains <= fmas")
    t, f = ctype, _fma(ctype)
    body = "\n        ".join(f"a{k % chains} = {f}(a{k % chains}, b, c);" for k in range(fmas))
    init = ", ".join(f"a{j} = ({t})(threadIdx.x + {j})" for j in range(chains))
    total = " + ".join(f"a{j}" for j in range(chains))
    name = chains_name(ctype, chains, fmas)
    return (f'extern "C" __global__ void {name}({t}* __restrict__ dst, int iters, {t} b, {t} c) {{\n'
            "    extern __shared__ char cap[];\n"
            f"    {t} {init};\n"
            "    #pragma unroll 1\n"
            "    for (int it = 0; it < iters; ++it) {\n"
            f"        {body}\n"
            "    }\n"
            f"    {t} s = {total};\n"
            f"    if (s == ({t})-1) dst[blockIdx.x * blockDim.x + threadIdx.x] = s;\n}}\n")


def ifetch_name(fmas: int) -> str:
    return f"if_n{fmas}"


def ifetch_source(fmas: int) -> str:
    """A loop body of ``fmas`` FFMAs (16 B of SASS each) over IFETCH_CHAINS chains, repeated."""
    if fmas < IFETCH_CHAINS:
        raise ValueError(f"fmas {fmas}: at least {IFETCH_CHAINS}")
    return chains_source("float", IFETCH_CHAINS, fmas).replace(chains_name("float", IFETCH_CHAINS, fmas),
                                                                ifetch_name(fmas))


def intmix_name(ints: int, op: str) -> str:
    return f"mix_{op}_i{ints}"


def intmix_positions(ints: int, body: int = MIX_BODY) -> list[bool]:
    """Which of the ``body`` operations are integer: ``ints`` of them, spread evenly."""
    return [(k + 1) * ints // body > k * ints // body for k in range(body)]


def intmix_source(ints: int, op: str) -> str:
    """A loop trip of MIX_BODY operations, ``ints`` of them integer, interleaved evenly with FFMAs
    on MIX_CHAINS float chains. ``op="imad"``: ``i_j = i_j * m + i_(j+1)`` (IMAD, which runs on the
    FMA pipe since Volta); ``op="alu"``: ``i_j = i_j + i_(j+1)`` and ``i_j = i_j ^ i_(j+1)`` in
    alternate rounds over the chains (IADD3 and LOP3 of the integer pipe: an add feeds only xors
    and a xor only adds, so ptxas cannot merge two into one three-input instruction); every chain
    value is read by two operations, so nothing folds. The integer chains exist, are initialised
    and combined whatever ``ints`` is, so only the loop differs between two shares."""
    if op not in ("imad", "alu") or not 0 <= ints <= MIX_BODY:
        raise ValueError(f"op {op!r}, ints {ints}: op imad or alu, 0 <= ints <= {MIX_BODY}")
    lines, fi, ii = [], 0, 0
    for is_int in intmix_positions(ints):
        if is_int:
            j, n = ii % MIX_CHAINS, (ii + 1) % MIX_CHAINS
            if op == "imad":
                lines.append(f"i{j} = i{j} * m + i{n};")
            else:
                lines.append(f"i{j} = i{j} {'+' if (ii // MIX_CHAINS) % 2 == 0 else '^'} i{n};")
            ii += 1
        else:
            j = fi % MIX_CHAINS
            lines.append(f"a{j} = fmaf(a{j}, b, c);")
            fi += 1
    body = "\n        ".join(lines)
    finit = ", ".join(f"a{j} = (float)(threadIdx.x + {j})" for j in range(MIX_CHAINS))
    iinit = ", ".join(f"i{j} = (int)threadIdx.x ^ {j + 1}" for j in range(MIX_CHAINS))
    fsum = " + ".join(f"a{j}" for j in range(MIX_CHAINS))
    isum = " ^ ".join(f"i{j}" for j in range(MIX_CHAINS))
    name = intmix_name(ints, op)
    return (f'extern "C" __global__ void {name}(float* __restrict__ dst, int iters, float b, float c, int m) {{\n'
            f"    float {finit};\n"
            f"    int {iinit};\n"
            "    #pragma unroll 1\n"
            "    for (int it = 0; it < iters; ++it) {\n"
            f"        {body}\n"
            "    }\n"
            f"    float s = {fsum};\n"
            f"    int k = {isum};\n"
            "    if (s == -1.0f || k == 123456789) dst[blockIdx.x * blockDim.x + threadIdx.x] = s + (float)k;\n}\n")


def stencil_points(shape: str, dims: int, radius: int) -> list[tuple[int, int, int]]:
    """Offsets (dz, dy, dx) of a box or star stencil, z slowest."""
    if shape not in ("box", "star") or dims not in (2, 3) or radius < 1:
        raise ValueError(f"stencil {shape} {dims}-D radius {radius}: shape box or star, 2 or 3 dimensions, radius >= 1")
    r = range(-radius, radius + 1)
    zs = r if dims == 3 else (0,)
    pts = [(z, y, x) for z in zs for y in r for x in r]
    if shape == "star":
        pts = [p for p in pts if sum(1 for c in p if c) <= 1]
    return pts


def stencil_name(shape: str, dims: int, radius: int, fold: int, ctype: str, restrict: bool = False) -> str:
    return f"{shape}{dims}d_r{radius}_f{fold}_{_suffix(ctype)}{'_nc' if restrict else ''}"


def stencil_source(shape: str, dims: int, radius: int, fold: int, ctype: str, domain: tuple[int, ...],
                   restrict: bool = False) -> str:
    """``out[z][y][x] = sum_p w_p in[(z, y, x) + p]`` over the points p of the stencil, ``fold``
    outputs per thread consecutive in y; ``domain`` the outputs (x, y[, z]) with a halo of
    ``radius`` around them in the input. Weights in ``__constant__`` memory; every distinct input
    value of a thread loaded once (plain global loads); each output a sequential chain: one
    multiplication, then one FMA per further point. ``restrict``: the input pointer is
    ``const __restrict__`` (loads through the non-coherent path, ``LDG.E.CONSTANT``), else plain
    ``LDG.E``."""
    _check_ctype(ctype)
    pts = stencil_points(shape, dims, radius)
    if fold not in (1, 2, 4) or len(domain) != dims or domain[1] % fold:
        raise ValueError(f"fold {fold}, domain {domain}: fold 1, 2 or 4 dividing the y extent of a {dims}-D domain")
    t, f, r = ctype, _fma(ctype), radius
    px, py = domain[0] + 2 * r, domain[1] + 2 * r
    weights = ", ".join(_lit(t, 1.0 / (len(pts) + 1) * (1 + 0.01 * (k % 7))) for k in range(len(pts)))
    uses: dict[tuple[int, int, int], list[tuple[int, int]]] = {}   # input offset -> (output, point)
    for k in range(fold):
        for n, (dz, dy, dx) in enumerate(pts):
            uses.setdefault((dz, dy + k, dx), []).append((k, n))
    last: dict[int, str] = {}
    lines = []
    for v, (o, users) in enumerate(sorted(uses.items())):   # load, then use in every output that needs it
        dz, dy, dx = o
        lines.append(f"const {t} v{v} = p[{((dz + r) * py + dy + r) * px + dx + r}];")
        for k, n in users:
            new = f"o{k}_{n}"
            term = f"w[{n}] * v{v}" if k not in last else f"{f}(w[{n}], v{v}, {last[k]})"
            lines.append(f"const {t} {new} = {term};")
            last[k] = new
    stores = [f"out[o_idx + {k * domain[0]}LL] = {last[k]};" for k in range(fold)]
    body = "\n    ".join(lines + stores)
    name = stencil_name(shape, dims, radius, fold, ctype, restrict)
    qual = " __restrict__" if restrict else ""
    if dims == 2:
        nx, ny = domain
        coords = ("    int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
                  f"    int y = (blockIdx.y * blockDim.y + threadIdx.y) * {fold};\n"
                  f"    if (x >= {nx} || y >= {ny}) return;\n"
                  f"    const {t}* p = in + (long long)y * {px} + x;\n"
                  f"    long long o_idx = (long long)y * {nx} + x;\n")
    else:
        nx, ny, nz = domain
        coords = ("    int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
                  f"    int y = (blockIdx.y * blockDim.y + threadIdx.y) * {fold};\n"
                  "    int z = blockIdx.z * blockDim.z + threadIdx.z;\n"
                  f"    if (x >= {nx} || y >= {ny} || z >= {nz}) return;\n"
                  f"    const {t}* p = in + ((long long)z * {py} + y) * {px} + x;\n"
                  f"    long long o_idx = ((long long)z * {ny} + y) * {nx} + x;\n")
    return (f"__constant__ {t} w[{len(pts)}] = {{{weights}}};\n"
            f'extern "C" __global__ void {name}(const {t}*{qual} in, {t}*{qual} out) {{\n'
            f"{coords}    {body}\n}}\n")


def d3q19_name(ctype: str, passes: int, fold: str) -> str:
    return f"d3q19_{_suffix(ctype)}_p{passes}_{fold}"


#: Folds of the D3Q19-like kernel: cells per thread along (y, z).
D3Q19_FOLDS = {"none": (1, 1), "y2": (2, 1), "z2": (1, 2)}


def d3q19_source(ctype: str, passes: int, fold: str, domain: tuple[int, int, int]) -> str:
    """Pull streaming of 19 arrays (array i of cell c loaded from c - e_i, one ghost layer, fzyx),
    ``passes`` dense passes ``g = M f`` with a 19x19 matrix in constant memory (per cell and pass
    19 multiplications and 342 FMAs), 19 stores; ``fold`` one cell per thread or two consecutive in
    y or z. ``__launch_bounds__(512, 1)``; dynamic shared memory caps the resident blocks."""
    _check_ctype(ctype)
    if fold not in D3Q19_FOLDS or passes < 0:
        raise ValueError(f"fold {fold!r}, passes {passes}: fold one of {', '.join(D3Q19_FOLDS)}, passes >= 0")
    fy, fz = D3Q19_FOLDS[fold]
    nx, ny, nz = domain
    if ny % fy or nz % fz:
        raise ValueError(f"domain {domain}: y and z extents must be multiples of the fold {fold}")
    t, f = ctype, _fma(ctype)
    px, py, pz = nx + 2, ny + 2, nz + 2
    pxy, stride = px * py, px * py * pz
    coef = ", ".join(_lit(t, (1.0 + 0.02 * ((7 * i + 3 * j) % 11 - 5)) / 19.0) for i in range(19) for j in range(19))
    lines = []
    cells = [(ky * px + kz * pxy) for ky in range(fy) for kz in range(fz)]
    for n, dc in enumerate(cells):
        for i, (ex, ey, ez) in enumerate(D3Q19):
            lines.append(f"{t} f{n}_{i}_0 = src[{i * stride + dc - (ex + ey * px + ez * pxy)}LL + c];")
    for n in range(len(cells)):
        for ps in range(passes):
            for i in range(19):
                acc = f"M[{19 * i}] * f{n}_0_{ps}"
                for j in range(1, 19):
                    acc = f"{f}(M[{19 * i + j}], f{n}_{j}_{ps}, {acc})"
                lines.append(f"{t} f{n}_{i}_{ps + 1} = {acc};")
    for n, dc in enumerate(cells):
        for i in range(19):
            lines.append(f"dst[{i * stride + dc}LL + c] = f{n}_{i}_{passes};")
    body = "\n    ".join(lines)
    name = d3q19_name(ctype, passes, fold)
    return (f"__constant__ {t} M[361] = {{{coef}}};\n"
            f'extern "C" __global__ void __launch_bounds__(512, 1) {name}(const {t}* __restrict__ src, '
            f"{t}* __restrict__ dst) {{\n"
            "    extern __shared__ char cap[];\n"
            "    int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    int y = (blockIdx.y * blockDim.y + threadIdx.y) * {fy};\n"
            f"    int z = (blockIdx.z * blockDim.z + threadIdx.z) * {fz};\n"
            f"    if (x >= {nx} || y >= {ny} || z >= {nz}) return;\n"
            f"    long long c = ((long long)(z + 1) * {py} + (y + 1)) * {px} + (x + 1);\n"
            f"    {body}\n}}\n")


SPIN_SOURCE = r"""
extern "C" __global__ void spin(long long cycles, long long* __restrict__ out) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) { }
    if (threadIdx.x == 0) out[blockIdx.x] = clock64() - t0;
}
"""
#: Cycles of the clock spin (about 10 ms at 2 GHz).
SPIN_CYCLES = 20_000_000


# ------------------------------------------------------------------ plans


@dataclass(frozen=True)
class Point:
    """One measurement: a kernel, its launch and the part-specific values of its row.

    ``grid`` counts blocks; with ``per_sm`` its x extent is multiplied by the SM count. ``args``:
    ``("buf", name)`` or ``(ctype, value)`` with ctype i32, i64, f32, f64. ``cap``: resident
    blocks per SM enforced with dynamic shared memory (0: none). ``estimate_s``: one launch on the
    planning GPU (H200 figures above)."""

    kernel: str
    source: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: tuple
    row: tuple
    estimate_s: float
    per_sm: bool = False
    cap: int = 0
    sass_estimate: int = 0


@dataclass(frozen=True)
class Part:
    """A sweep: its CSV, the description line of its header, its columns and its points."""

    key: str
    name: str
    description: str
    columns: tuple[str, ...]
    buffers: dict = field(default_factory=dict)     # name -> (ctype, elements, fill)
    points: tuple[Point, ...] = ()


def _cycles_s(cycles_per_sm: float) -> float:
    return cycles_per_sm / PLAN_CLOCK_HZ


def _iters_for(seconds_per_iter: float, minimum: int = 16) -> int:
    """Loop trips (a power of two) that make one launch about TARGET_LAUNCH_S."""
    want = max(minimum, TARGET_LAUNCH_S / max(seconds_per_iter, 1e-12))
    return 1 << max(0, round(math.log2(want)))


def plan_misaligned(sms: int) -> Part:
    cols = ("where", "dtype", "offset_elements", "offset_bytes", "loads_per_thread", "warps",
            "bytes_requested")
    pts = []
    threads, bps = 256, 8
    dram_elems = {"float": 1 << 27, "double": 1 << 26}
    for ctype in CTYPES:
        e = ESIZE[ctype]
        lines_per_row = 32 * e // 128
        # L1: every warp MIS_UNROLL loads per trip; a misaligned row touches one more line
        per_trip = MIS_UNROLL * (lines_per_row + 1)
        iters = _iters_for(_cycles_s(bps * threads / 32 * per_trip / PLAN_LSU_PER_CLK))
        for off in range(32):
            warps = sms * bps * threads // 32
            nbytes = warps * iters * MIS_UNROLL * 32 * e
            est = _cycles_s(bps * threads / 32 * iters * per_trip / PLAN_LSU_PER_CLK)
            pts.append(Point(misaligned_name(ctype, "l1"), misaligned_source(ctype, "l1"), (bps, 1, 1),
                             (threads, 1, 1), (("buf", f"win_{ctype}"), ("buf", f"sink_{ctype}"), ("i32", off),
                                               ("i32", iters)),
                             ("l1", ctype, off, off * e, iters * MIS_UNROLL, warps, nbytes), est, per_sm=True,
                             sass_estimate=60))
        blocks = dram_elems[ctype] // (threads * MIS_UNROLL)
        for off in range(32):
            nbytes = dram_elems[ctype] * e
            pts.append(Point(misaligned_name(ctype, "dram"), misaligned_source(ctype, "dram"), (blocks, 1, 1),
                             (threads, 1, 1), (("buf", f"big_{ctype}"), ("buf", f"sink_{ctype}"), ("i32", off),
                                               ("i32", 1)),
                             ("dram", ctype, off, off * e, MIS_UNROLL, blocks * threads // 32, nbytes),
                             nbytes / PLAN_DRAM_BPS, sass_estimate=60))
    bufs = {}
    for ctype in CTYPES:
        bufs[f"win_{ctype}"] = (ctype, WINDOW + 32 * MIS_UNROLL + 64, 1.0)
        bufs[f"big_{ctype}"] = (ctype, dram_elems[ctype] + 64, 1.0)
        # one element per thread of the DRAM grid (written only if a sum came out -1, never)
        bufs[f"sink_{ctype}"] = (ctype, dram_elems["float"] // MIS_UNROLL, 0.0)
    return Part("a", "misaligned",
                "each warp loads rows of 32 consecutive elements starting offset_elements past a row boundary "
                f"(rows of 128 B for float, 256 B for double); l1: {MIS_UNROLL} loads per loop trip from a "
                f"{WINDOW}-element window every warp re-reads, 8 blocks of 256 threads per SM; dram: each warp reads "
                f"{MIS_UNROLL} consecutive rows of a 512 MiB array once; bytes_requested = warps * loads_per_thread "
                "* 32 * element bytes; seconds = median of the timed launches",
                cols, bufs, tuple(pts))


#: (loads, fmas) pairs of part b.
LOADS_FMA_PAIRS = tuple((l, l * k) for l in (1, 2, 4, 8) for k in (0, 1, 2, 4, 8))


def plan_loads_fma(sms: int) -> Part:
    cols = ("dtype", "loads", "fmas", "chains", "loop_trips", "warps_per_sm", "warp_loads_per_sm",
            "warp_fmas_per_sm")
    pts = []
    threads, bps = 256, 8
    warps = bps * threads // 32
    for ctype in CTYPES:
        rate = PLAN_FP32_PER_CLK if ctype == "float" else PLAN_FP64_PER_CLK
        lat = PLAN_FP32_LATENCY if ctype == "float" else PLAN_FP64_LATENCY
        for loads, fmas in LOADS_FMA_PAIRS:
            for chains in sorted({1, min(8, max(fmas, 1))}):
                lines = 32 * ESIZE[ctype] // 128
                per_trip = max(warps * loads * lines / PLAN_LSU_PER_CLK, warps * fmas * 32 / rate,
                               fmas / chains * lat)
                iters = _iters_for(_cycles_s(per_trip))
                pts.append(Point(loads_fma_name(ctype, loads, fmas, chains),
                                 loads_fma_source(ctype, loads, fmas, chains), (bps, 1, 1), (threads, 1, 1),
                                 (("buf", f"win_{ctype}"), ("buf", f"sink_{ctype}"), ("i32", iters),
                                  (_suffix(ctype), 1e-7)),
                                 (ctype, loads, fmas, chains, iters, warps, warps * iters * loads,
                                  warps * iters * fmas),
                                 _cycles_s(per_trip * iters), per_sm=True, sass_estimate=40 + loads + fmas))
    bufs = {f"win_{c}": (c, WINDOW + 8 * 32 + 64, 1.0) for c in CTYPES}
    bufs |= {f"sink_{c}": (c, 1 << 22, 0.0) for c in CTYPES}
    return Part("b", "loads-fma",
                "a loop trip of 'loads' coalesced aligned loads (32 consecutive elements per warp, rows 32 "
                f"elements apart in a {WINDOW}-element L1-resident window) and 'fmas' FMAs a_j = fma(a_j, v, c) "
                "round-robin over 'chains' chains (1: all dependent); 8 blocks of 256 threads per SM (64 warps); "
                "warp_*_per_sm = warp instructions per SM in one launch",
                cols, bufs, tuple(pts))


#: Resident warps per SM of part c.
CHAIN_WARPS = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64)


def _warps_layout(warps: int) -> tuple[int, int]:
    """(threads per block, blocks per SM) giving ``warps`` resident warps with at most 16 blocks."""
    per_block = max(1, math.ceil(warps / 16))
    while warps % per_block:
        per_block += 1
    return 32 * per_block, warps // per_block


def plan_chains(sms: int) -> Part:
    cols = ("dtype", "chains", "fmas_per_trip", "warps_per_sm", "threads_per_block", "blocks_per_sm_cap",
            "loop_trips", "warp_fmas_per_sm")
    pts = []
    for ctype in CTYPES:
        rate = PLAN_FP32_PER_CLK if ctype == "float" else PLAN_FP64_PER_CLK
        lat = PLAN_FP32_LATENCY if ctype == "float" else PLAN_FP64_LATENCY
        for chains in (1, 2, 4, 8):
            for warps in CHAIN_WARPS:
                threads, bps = _warps_layout(warps)
                per_warp_sched = math.ceil(warps / 4)          # 4 schedulers per SM
                per_trip = max(warps * CHAIN_FMAS * 32 / rate, CHAIN_FMAS / chains * lat * max(1, 1 / per_warp_sched),
                               per_warp_sched * CHAIN_FMAS)
                iters = _iters_for(_cycles_s(per_trip))
                pts.append(Point(chains_name(ctype, chains), chains_source(ctype, chains), (bps, 1, 1),
                                 (threads, 1, 1),
                                 (("buf", f"sink_{ctype}"), ("i32", iters), (_suffix(ctype), 0.999999),
                                  (_suffix(ctype), 1e-6)),
                                 (ctype, chains, CHAIN_FMAS, warps, threads, bps, iters, warps * iters * CHAIN_FMAS),
                                 _cycles_s(per_trip * iters), per_sm=True, cap=bps, sass_estimate=100))
    return Part("c", "chains",
                f"a loop trip of {CHAIN_FMAS} FMAs a_j = fma(a_j, b, c) round-robin over 'chains' independent chains "
                "per thread; warps_per_sm resident warps on every SM (grid = blocks_per_sm_cap * SMs, the cap "
                "enforced with dynamic shared memory); warp_fmas_per_sm = warp FMA instructions per SM per launch",
                cols, {f"sink_{c}": (c, 1 << 22, 0.0) for c in CTYPES}, tuple(pts))


#: Bytes of SASS of the unrolled bodies of part d (16 B per instruction).
IFETCH_BYTES = tuple(1024 << k for k in range(8))        # 1 KiB - 128 KiB


def plan_ifetch(sms: int) -> Part:
    cols = ("body_fmas", "body_bytes", "warps_per_sm", "threads_per_block", "blocks_per_sm_cap", "loop_trips",
            "warp_fmas_per_sm")
    pts = []
    for nbytes in IFETCH_BYTES:
        n = nbytes // 16
        for warps in (8, 64):
            threads, bps = _warps_layout(warps)
            per_trip = max(warps * n * 32 / PLAN_FP32_PER_CLK, n / IFETCH_CHAINS * PLAN_FP32_LATENCY)
            iters = _iters_for(_cycles_s(per_trip), minimum=4)
            pts.append(Point(ifetch_name(n), ifetch_source(n), (bps, 1, 1), (threads, 1, 1),
                             (("buf", "sink"), ("i32", iters), ("f32", 0.999999), ("f32", 1e-6)),
                             (n, nbytes, warps, threads, bps, iters, warps * iters * n),
                             _cycles_s(per_trip * iters), per_sm=True, cap=bps, sass_estimate=n + 40))
    return Part("d", "ifetch",
                f"a loop body of body_fmas FFMAs (body_bytes of SASS) over {IFETCH_CHAINS} independent chains, "
                "repeated "
                "loop_trips times; warps_per_sm resident warps (grid = blocks_per_sm_cap * SMs, capped with dynamic "
                "shared memory)",
                cols, {"sink": ("float", 1 << 22, 0.0)}, tuple(pts))


#: Integer operations per MIX_BODY of part e: shares 0, 1/8, ..., 1.
MIX_INTS = tuple(MIX_BODY * k // 8 for k in range(9))


def plan_intmix(sms: int) -> Part:
    cols = ("op", "int_ops", "fp32_ops", "int_share", "warps_per_sm", "loop_trips", "warp_int_per_sm",
            "warp_fp32_per_sm")
    pts = []
    threads, bps = 256, 8
    warps = 64
    for op in ("imad", "alu"):
        for ints in MIX_INTS:
            if op == "alu" and ints == 0:
                continue                                   # the same loop as imad with no integer work
            fp = MIX_BODY - ints
            per_trip = warps * 32 * (fp / PLAN_FP32_PER_CLK + ints / PLAN_INT_PER_CLK)
            iters = _iters_for(_cycles_s(per_trip))
            pts.append(Point(intmix_name(ints, op), intmix_source(ints, op), (bps, 1, 1), (threads, 1, 1),
                             (("buf", "sink"), ("i32", iters), ("f32", 0.999999), ("f32", 1e-6), ("i32", 3)),
                             (op, ints, fp, ints / MIX_BODY, warps, iters, warps * iters * ints, warps * iters * fp),
                             _cycles_s(per_trip * iters), per_sm=True, sass_estimate=120))
    return Part("e", "intmix",
                f"a loop trip of {MIX_BODY} operations, int_ops of them integer (imad: i_j = i_j * m + i_(j+1); alu: "
                f"i_j = i_j + i_(j+1) and i_j = i_j ^ i_(j+1) in alternate rounds; {MIX_CHAINS} chains each) spread "
                f"evenly among FFMAs a_j = fmaf(a_j, b, c) ({MIX_CHAINS} chains); 8 blocks of 256 threads per SM; "
                "ptxas turns part of the adds into IMAD.IADD (FMA pipe): sm-sass.csv gives the split",
                cols, {"sink": ("float", 1 << 22, 0.0)}, tuple(pts))


#: Stencils of part f: (shape, dims, radii) and their block shapes.
STENCILS = (("box", 2, (1, 2, 3, 4, 5, 6, 7)), ("box", 3, (1, 2, 3, 4, 5, 6, 7)),
            ("star", 2, (4, 8)), ("star", 3, (2, 4, 8)))
STENCIL_BLOCKS = {2: ((32, 8, 1), (128, 2, 1), (16, 16, 1)), 3: ((32, 4, 2), (64, 4, 1), (16, 8, 4))}
STENCIL_FOLDS = (1, 2, 4)
#: 3-D box radii (beyond this only one output per thread: the folded kernels of radius 6 and 7
#: hold over 10 000 instructions and take longer to compile than to measure).
BOX3D_FOLDED_MAX_RADIUS = 5


def stencil_domain(dims: int, radius: int, shape: str) -> tuple[int, ...]:
    """Outputs (x, y[, z]): 4096^2 in 2-D; 256^3 for 3-D kernels of at most 125 points, else 128^3."""
    if dims == 2:
        return (4096, 4096)
    return (256, 256, 256) if len(stencil_points(shape, dims, radius)) <= 125 else (128, 128, 128)


#: The stencils also measured with a ``const __restrict__`` input (non-coherent loads): 2-D boxes,
#: folds 1 and 4, the first block shape.
RESTRICT_FOLDS = (1, 4)


def plan_stencils(sms: int) -> Part:
    cols = ("stencil", "dims", "radius", "points", "dtype", "loads", "fold", "block_x", "block_y", "block_z",
            "domain", "outputs", "loads_per_thread", "fmas_per_output", "bytes_min")
    pts = []
    bufs: dict = {}
    for shape, dims, radii in STENCILS:
        for radius in radii:
            p = stencil_points(shape, dims, radius)
            dom = stencil_domain(dims, radius, shape)
            halo = tuple(d + 2 * radius for d in dom)
            outputs = math.prod(dom)
            for ctype in CTYPES:
                e = ESIZE[ctype]
                in_name, out_name = f"in_{ctype}", f"out_{ctype}"
                bufs[in_name] = (ctype, max(bufs.get(in_name, (0, 0))[1], math.prod(halo)), 1.0)
                bufs[out_name] = (ctype, max(bufs.get(out_name, (0, 0))[1], outputs), 0.0)
                variants = [(fold, False) for fold in STENCIL_FOLDS
                            if not (shape == "box" and dims == 3 and fold > 1 and radius > BOX3D_FOLDED_MAX_RADIUS)]
                if shape == "box" and dims == 2:
                    variants += [(fold, True) for fold in RESTRICT_FOLDS]
                for fold, restrict in variants:
                    src = stencil_source(shape, dims, radius, fold, ctype, dom, restrict)
                    distinct = len({(dz, dy + k, dx) for dz, dy, dx in p for k in range(fold)})
                    lsu = outputs / fold / 32 * distinct * 2 * max(1, e // 4) / sms / PLAN_LSU_PER_CLK
                    rate = PLAN_FP32_PER_CLK if ctype == "float" else PLAN_FP64_PER_CLK
                    fp = outputs * len(p) / sms / rate
                    nbytes = (math.prod(halo) + outputs) * e
                    est = max(_cycles_s(max(lsu, fp)), nbytes / PLAN_DRAM_BPS)
                    for block in STENCIL_BLOCKS[dims][:1] if restrict else STENCIL_BLOCKS[dims]:
                        bx, by, bz = block
                        grid = (math.ceil(dom[0] / bx), math.ceil(dom[1] // fold / by),
                                math.ceil(dom[2] / bz) if dims == 3 else 1)
                        pts.append(Point(stencil_name(shape, dims, radius, fold, ctype, restrict), src, grid, block,
                                         (("buf", in_name), ("buf", out_name)),
                                         (shape, dims, radius, len(p), ctype, "restrict" if restrict else "plain",
                                          fold, bx, by, bz, "x".join(map(str, dom)), outputs, distinct, len(p),
                                          nbytes),
                                         est, sass_estimate=fold * len(p) * (e // 4) + distinct + 30))
    return Part("f", "stencils",
                "out = sum_p w_p in[x + p] over a box ((2r+1)^dims points) or star (2*dims*r+1 points) stencil, "
                "weights in __constant__ memory, every distinct input value of a thread loaded once "
                "(loads_per_thread), each output one multiplication then FMAs in sequence; loads: plain (LDG) "
                "or restrict (const __restrict__ input, non-coherent LDG); fold = outputs per thread consecutive "
                "in y; input with a halo of r; "
                "bytes_min = (input + output) * element bytes",
                cols, bufs, tuple(pts))


D3Q19_DOMAIN = (256, 256, 256)
D3Q19_PASSES = (0, 1, 3)
D3Q19_BLOCKS = ((256, 2, 1), (64, 8, 1), (32, 4, 4))


def plan_d3q19(sms: int) -> Part:
    cols = ("dtype", "passes", "fold", "cells_per_thread", "block_x", "block_y", "block_z", "blocks_per_sm_cap",
            "cells", "fmas_per_cell", "bytes")
    pts = []
    nx, ny, nz = D3Q19_DOMAIN
    cells = nx * ny * nz
    stride = (nx + 2) * (ny + 2) * (nz + 2)
    for ctype in CTYPES:
        e = ESIZE[ctype]
        rate = PLAN_FP32_PER_CLK if ctype == "float" else PLAN_FP64_PER_CLK
        for passes in D3Q19_PASSES:
            for fold, (fy, fz) in D3Q19_FOLDS.items():
                src = d3q19_source(ctype, passes, fold, D3Q19_DOMAIN)
                nbytes = 2 * 19 * cells * e
                est = max(nbytes / PLAN_DRAM_BPS, _cycles_s(cells * passes * 361 / sms / rate)) * 1.3
                for block in D3Q19_BLOCKS:
                    bx, by, bz = block
                    grid = (nx // bx, ny // fy // by, nz // fz // bz)
                    for cap in (1, 0):
                        pts.append(Point(d3q19_name(ctype, passes, fold), src, grid, block,
                                         (("buf", f"src_{ctype}"), ("buf", f"dst_{ctype}")),
                                         (ctype, passes, fold, fy * fz, bx, by, bz, cap, cells, passes * 361, nbytes),
                                         est, cap=cap, sass_estimate=fy * fz * (38 + 361 * passes * (e // 4)) + 60))
    bufs = {f"src_{c}": (c, 19 * stride, 1.0) for c in CTYPES} | {f"dst_{c}": (c, 19 * stride, 0.0) for c in CTYPES}
    return Part("g", "d3q19",
                f"D3Q19-like pull kernel (not lbmpy): 19 arrays of {nx}x{ny}x{nz} cells + 1 ghost layer (fzyx), "
                "array i loaded from c - e_i, 'passes' dense 19x19 passes g = M f per cell (M in __constant__ "
                "memory: 19 multiplications + 342 FMAs per pass), 19 stores; fold: cells per thread consecutive "
                "in y or z; "
                "blocks_per_sm_cap 1: one block per SM through dynamic shared memory, 0: as many as fit; "
                "bytes = 2 * 19 * cells * element bytes",
                cols, bufs, tuple(pts))


PLANS = {"a": plan_misaligned, "b": plan_loads_fma, "c": plan_chains, "d": plan_ifetch, "e": plan_intmix,
         "f": plan_stencils, "g": plan_d3q19}


def select(part: Part, only: str | None = None, per_kernel: int = 0) -> Part:
    """``part`` with only the points whose kernel name matches the regular expression ``only``
    (re.search), and at most ``per_kernel`` points of each kernel (0: all)."""
    pattern = re.compile(only) if only else None
    kept, seen = [], Counter()
    for p in part.points:
        if pattern and not pattern.search(p.kernel):
            continue
        if per_kernel and seen[p.kernel] >= per_kernel:
            continue
        seen[p.kernel] += 1
        kept.append(p)
    return Part(part.key, part.name, part.description, part.columns, part.buffers, tuple(kept))


def compile_estimate_s(instructions: int) -> float:
    """Seconds to compile one kernel of about ``instructions`` SASS instructions (planning)."""
    n = instructions
    return PLAN_COMPILE_BASE_S + PLAN_COMPILE_PER_INSTR_S * n + PLAN_COMPILE_PER_INSTR2_S * n * n


@dataclass(frozen=True)
class Estimate:
    """Planned cost of a part on an H200: seconds of launches (and buffer fills), seconds of
    compiling its kernels one after another, the longest single compile, launches, kernels."""

    run_s: float
    compile_s: float
    longest_compile_s: float
    launches: int
    kernels: int


def part_estimate(part: Part, launches_per_point: int = WARMUP + REPEATS) -> Estimate:
    """The planned cost of ``part`` (figures PLAN_* above)."""
    launches = len(part.points) * launches_per_point
    run = sum(launches_per_point * (max(p.estimate_s, PLAN_LAUNCH_S) + PLAN_SYNC_S) for p in part.points)
    kernels = {p.kernel: p.sass_estimate for p in part.points}
    compiles = [compile_estimate_s(n) for n in kernels.values()]
    buffers = sum(n * ESIZE[c] for c, n, _ in part.buffers.values())
    run += buffers / PLAN_DRAM_BPS * 2 + (WARMUP + 3) * SPIN_CYCLES / PLAN_CLOCK_HZ
    return Estimate(run, sum(compiles), max(compiles, default=0.0), launches, len(kernels))


def total_estimate_s(estimates: list[Estimate], workers: int) -> float:
    """Seconds of all parts: the launches plus compiling on ``workers`` processes at once (1: NVRTC
    in the measuring process)."""
    compile_s = sum(e.compile_s for e in estimates)
    if workers > 1:
        compile_s = max(compile_s / workers, max((e.longest_compile_s for e in estimates), default=0.0))
    return sum(e.run_s for e in estimates) + compile_s


# ------------------------------------------------------------------ CSV


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def header_lines(gpu: str, sms: int, smi: str, versions: str, compiler: str, description: str,
                 when: str | None = None) -> list[str]:
    """The ``#`` lines of a CSV: the GPU, nvidia-smi's clocks, versions, compiler, date and script,
    what the part measures."""
    return [f"gpu: {gpu}, {sms} SMs",
            f"nvidia-smi (name, driver, clocks.sm, clocks.max.sm, clocks.mem, clocks.applications.graphics, "
            f"power.limit, ecc): {smi}",
            versions,
            f"compiled: {compiler}",
            f"measured: {when or _now()} by {SCRIPT} (warpspeed)",
            description]


#: Columns every part's rows end with.
COMMON_COLUMNS = ("kernel", "registers", "blocks_per_sm", "sm_clock_mhz", "launches", "seconds", "seconds_min")


class Writer:
    """A CSV written under a temporary name, flushed after every row and renamed when closed."""

    def __init__(self, path: str, header: list[str], columns: tuple[str, ...]):
        self.path, self.tmp = path, path + ".tmp"
        self.f = open(self.tmp, "w", newline="", encoding="utf-8")
        for line in header:
            self.f.write(f"# {line}\n")
        self.w = csv.writer(self.f)
        self.w.writerow(list(columns) + list(COMMON_COLUMNS))
        self.rows = 0

    def row(self, values: tuple, kernel: str, registers: int, blocks_per_sm: int, clock_mhz: float,
            launches: int, seconds: float, seconds_min: float) -> None:
        out = list(values) + [kernel, registers, blocks_per_sm, clock_mhz, launches, seconds, seconds_min]
        self.w.writerow([f"{v:.6g}" if isinstance(v, float) else v for v in out])
        self.f.flush()
        self.rows += 1

    def close(self) -> None:
        self.f.close()
        os.replace(self.tmp, self.path)


# ------------------------------------------------------------------ compiling (nvcc, no cupy)

_SASS_OP = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)")


def sass_opcodes(sass: str) -> Counter:
    """Opcodes with their modifiers (``LDG.E.64``, ``IMAD.IADD``) in ``cuobjdump -sass`` text."""
    return Counter(_SASS_OP.findall(sass))


def find_cuobjdump(nvcc: str) -> str | None:
    """cuobjdump on PATH, beside nvcc, or in NVIDIA's pip wheels (``nvidia/cu13/bin``); else None."""
    found = shutil.which("cuobjdump")
    if found:
        return found
    places = [os.path.dirname(nvcc)]
    try:
        import nvidia  # the namespace package of NVIDIA's toolkit wheels, where installed
        places += [os.path.join(root, sub) for root in getattr(nvidia, "__path__", [])
                   for sub in ("cu13/bin", "cuda_cuobjdump/bin")]
    except ImportError:
        pass
    for place in places:
        candidate = os.path.join(place, "cuobjdump")
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def precompile(kernels: dict[str, str], arch: str, folder: str, workers: int, timeout_s: float
               ) -> tuple[dict[str, str], dict[str, Counter], list[str]]:
    """Compile ``kernels`` (name -> CUDA source) with nvcc into cubins for ``arch`` (``sm_90``),
    ``workers`` at once, the longest sources first; count each cubin's SASS opcodes where cuobjdump
    is found. Returns (name -> cubin path, name -> opcode counts, error lines); without nvcc
    nothing is compiled (the kernels are then compiled by cupy's NVRTC when first launched)."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return {}, {}, []
    cuobjdump = find_cuobjdump(nvcc)
    start = time.monotonic()

    def job(item):
        name, source = item
        cu, cubin = os.path.join(folder, name + ".cu"), os.path.join(folder, name + ".cubin")
        with open(cu, "w", encoding="utf-8") as fh:
            fh.write(source)
        left = timeout_s - (time.monotonic() - start)
        if left <= 1:
            return name, None, None, f"{name}: not compiled (budget)"
        try:
            done = subprocess.run([nvcc, f"-arch={arch}", "-cubin", "-std=c++17", "-o", cubin, cu],
                                  capture_output=True, text=True, timeout=left)
        except subprocess.TimeoutExpired:
            return name, None, None, f"{name}: nvcc timed out"
        if done.returncode != 0:
            return name, None, None, f"{name}: nvcc failed: {done.stderr.strip()[-300:]}"
        counts = None
        if cuobjdump:
            try:
                sass = subprocess.run([cuobjdump, "-sass", cubin], capture_output=True, text=True, timeout=120).stdout
                counts = sass_opcodes(sass)
            except (OSError, subprocess.SubprocessError):
                counts = None
        return name, cubin, counts, None

    cubins, counts, errors = {}, {}, []
    order = sorted(kernels.items(), key=lambda kv: -len(kv[1]))
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for name, cubin, opcodes, error in pool.map(job, order):
            if error:
                errors.append(error)
            if cubin:
                cubins[name] = cubin
            if opcodes is not None:
                counts[name] = opcodes
    return cubins, counts, errors


def write_sass_counts(path: str, header: list[str], counts: dict[str, Counter]) -> None:
    """``sm-sass.csv``: per kernel the count of every SASS opcode (with modifiers) and the total."""
    with open(path + ".tmp", "w", newline="", encoding="utf-8") as fh:
        for line in header:
            fh.write(f"# {line}\n")
        w = csv.writer(fh)
        w.writerow(["kernel", "opcode", "count"])
        for name in sorted(counts):
            w.writerow([name, "(all)", sum(counts[name].values())])
            for op, n in sorted(counts[name].items()):
                w.writerow([name, op, n])
    os.replace(path + ".tmp", path)


# ------------------------------------------------------------------ measuring (cupy)


def _smi() -> str:
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,"
                               "clocks.applications.graphics,power.limit,ecc.mode.current", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=20).stdout.strip() or "no output"
    except (OSError, subprocess.SubprocessError):
        return "nvidia-smi not available"


def _time(cp, launch, warmup: int, repeats: int) -> tuple[float, float]:
    """(median, minimum) seconds of one launch, each timed launch between its own pair of events."""
    for _ in range(warmup):
        launch()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(repeats):
        start.record()
        launch()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) * 1e-3)
    times.sort()
    return times[len(times) // 2], times[0]


def _cap_smem(cp, kernel, blocks_per_sm: int) -> int:
    """Dynamic shared memory per block that lets at most ``blocks_per_sm`` blocks reside (0: no cap,
    -1: impossible); the smallest multiple of 1 KiB that does, so the L1 keeps the rest."""
    if blocks_per_sm <= 0:
        return 0
    dev = cp.cuda.Device()
    per_sm = dev.attributes["MaxSharedMemoryPerMultiprocessor"]
    per_block_max = dev.attributes["MaxSharedMemoryPerBlockOptin"]
    reserved = 1024                      # per-block system reservation on sm_80 and later
    for smem in range(1024, per_block_max + 1, 1024):
        if per_sm // (smem + reserved) <= blocks_per_sm:
            if per_sm // (smem + reserved) < blocks_per_sm:
                return -1
            kernel.max_dynamic_shared_size_bytes = max(smem, kernel.max_dynamic_shared_size_bytes)
            return smem
    return -1


def _blocks_per_sm(cp, kernel, threads: int, smem: int) -> int:
    try:
        return int(cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, threads, smem))
    except Exception:  # noqa: BLE001 - an older cupy without the occupancy API: recorded as unknown
        return -1


def _clock_mhz(cp, sms: int) -> float:
    """SM clock from a clock64() spin of SPIN_CYCLES on every SM, timed with CUDA events."""
    kernel = cp.RawKernel(SPIN_SOURCE, "spin")
    out = cp.zeros(sms, dtype=cp.int64)
    med, _ = _time(cp, lambda: kernel((sms,), (32,), (cp.int64(SPIN_CYCLES), out)), 1, 3)
    return SPIN_CYCLES / med / 1e6


def _arg(cp, spec, buffers):
    kind, value = spec
    if kind == "buf":
        return buffers[value]
    return {"i32": cp.int32, "i64": cp.int64, "f32": cp.float32, "f64": cp.float64}[kind](value)


def run_part(cp, part: Part, out: str, deadline: float, sms: int, header: list[str], cubins: dict[str, str],
             warmup: int = WARMUP, repeats: int = REPEATS) -> str:
    """Measure the points of ``part`` until ``deadline`` (time.monotonic()); returns a summary line.
    Kernels come from ``cubins`` (name -> path) where present, else from NVRTC."""
    w = Writer(os.path.join(out, f"sm-{part.name}.csv"), header + [part.description], part.columns)
    buffers = {}
    kernels: dict[str, object] = {}
    skipped = failed = 0
    try:
        clock = _clock_mhz(cp, sms)
        for name, (ctype, n, fill) in part.buffers.items():
            buffers[name] = cp.full(n, fill, dtype=cp.float32 if ctype == "float" else cp.float64)
        for point in part.points:
            compile_s = 0.0 if point.kernel in kernels or point.kernel in cubins else compile_estimate_s(
                point.sass_estimate)
            if time.monotonic() + compile_s + (warmup + repeats) * (point.estimate_s + PLAN_SYNC_S) > deadline:
                skipped += 1
                continue
            try:
                if point.kernel not in kernels:
                    if point.kernel in cubins:
                        kernels[point.kernel] = cp.RawModule(path=cubins[point.kernel]).get_function(point.kernel)
                    else:
                        kernels[point.kernel] = cp.RawKernel(point.source, point.kernel, options=("-std=c++17",))
                kernel = kernels[point.kernel]
                smem = _cap_smem(cp, kernel, point.cap)
                if smem < 0:
                    raise ValueError(f"no shared-memory size gives {point.cap} blocks per SM")
                grid = (point.grid[0] * sms, point.grid[1], point.grid[2]) if point.per_sm else point.grid
                args = tuple(_arg(cp, a, buffers) for a in point.args)
                threads = point.block[0] * point.block[1] * point.block[2]
                med, best = _time(cp, lambda: kernel(grid, point.block, args, shared_mem=smem), warmup, repeats)
                w.row(point.row, point.kernel, int(kernel.num_regs), _blocks_per_sm(cp, kernel, threads, smem),
                      round(clock, 1), repeats, med, best)
            except Exception as exc:  # noqa: BLE001 - a failed point is reported, the sweep goes on
                failed += 1
                print(f"{part.name} {point.kernel} {point.row}: {type(exc).__name__}: {exc}", file=sys.stderr,
                      flush=True)
    finally:
        w.close()
        buffers.clear()
        kernels.clear()
        cp.get_default_memory_pool().free_all_blocks()
    return f"{w.rows} rows, {skipped} skipped (budget), {failed} failed"


# ------------------------------------------------------------------ main


def dry_run(parts: list[Part], budget: float, launches_per_point: int) -> int:
    """Print the plan of ``parts`` and its estimated time on an H200; 0 if within ``budget``."""
    estimates = []
    for part in parts:
        key = part.key
        est = part_estimate(part, launches_per_point)
        estimates.append(est)
        print(f"part {key} {part.name}: {len(part.points)} measurements, {est.kernels} kernels, {est.launches} "
              f"launches; estimated on an H200 {est.run_s:.1f} s of launches, {est.compile_s:.1f} s of compiling "
              f"(longest kernel {est.longest_compile_s:.1f} s) -> sm-{part.name}.csv")
    total = total_estimate_s(estimates, PLAN_COMPILE_WORKERS)
    serial = total_estimate_s(estimates, 1)
    verdict = "within" if total <= budget else "OVER"
    print(f"total: estimated {total:.1f} s with nvcc on {PLAN_COMPILE_WORKERS} cores ({serial:.1f} s compiling "
          f"with NVRTC one kernel at a time), {verdict} the budget of {budget:g} s")
    return 0 if total <= budget else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="folder for the CSVs (created); required unless --dry-run")
    parser.add_argument("--parts", default=",".join(PLANS), help="comma-separated parts: " + ", ".join(PLANS))
    parser.add_argument("--budget", type=float, default=120.0, help="seconds for all parts (default 120)")
    parser.add_argument("--dry-run", action="store_true", help="print the plan and its estimated time; no cupy needed")
    parser.add_argument("--gpu", type=int, default=0, help="CUDA device index")
    parser.add_argument("--only", help="measure only kernels whose name matches this regular expression")
    parser.add_argument("--points-per-kernel", type=int, default=0, help="at most this many points per kernel (0: all)")
    parser.add_argument("--warmup", type=int, default=WARMUP, help=f"warm-up launches per point (default {WARMUP})")
    parser.add_argument("--repeats", type=int, default=REPEATS, help=f"timed launches per point (default {REPEATS})")
    args = parser.parse_args(argv)
    keys = [s.strip() for s in args.parts.split(",") if s.strip()]
    unknown = [k for k in keys if k not in PLANS]
    if unknown or not keys:
        print(f"error: unknown part {unknown[0] if unknown else '(none)'!r}; allowed: {', '.join(PLANS)}",
              file=sys.stderr)
        return 2
    if args.budget <= 0:
        print(f"error: --budget must be positive seconds, got {args.budget:g}", file=sys.stderr)
        return 2
    if args.warmup < 0 or args.repeats < 1 or args.points_per_kernel < 0:
        print("error: --warmup >= 0, --repeats >= 1 and --points-per-kernel >= 0 are allowed", file=sys.stderr)
        return 2
    try:
        re.compile(args.only or "")
    except re.error as exc:
        print(f"error: --only is not a regular expression: {exc}", file=sys.stderr)
        return 2
    launches_per_point = args.warmup + args.repeats
    if args.dry_run:
        return dry_run([select(PLANS[k](PLAN_SMS), args.only, args.points_per_kernel) for k in keys], args.budget,
                       launches_per_point)
    if not args.out:
        print("error: --out DIR is required (or --dry-run)", file=sys.stderr)
        return 2
    try:
        import cupy as cp
        cp.cuda.runtime.getDeviceCount()
    except Exception as exc:  # no cupy, no driver or no GPU: one line, no traceback
        print(f"error: sm_mechanisms.py needs cupy and an NVIDIA GPU: {exc}", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    t_start = time.monotonic()
    deadline = t_start + args.budget
    status = 0
    with cp.cuda.Device(args.gpu), tempfile.TemporaryDirectory(prefix="sm-mechanisms-") as folder:
        props = cp.cuda.runtime.getDeviceProperties(args.gpu)
        raw = props["name"]
        gpu = (raw.decode() if isinstance(raw, bytes) else str(raw))
        sms = int(props["multiProcessorCount"])
        arch = f"sm_{props['major']}{props['minor']}"
        versions = (f"cupy {cp.__version__}, CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}, "
                    f"driver {cp.cuda.runtime.driverGetVersion()}")
        parts = [select(PLANS[key](sms), args.only, args.points_per_kernel) for key in keys]
        sources = {p.kernel: p.source for part in parts for p in part.points}
        workers = os.cpu_count() or 4
        cubins, counts, errors = precompile(sources, arch, folder, workers, 0.5 * args.budget)
        for line in errors:
            print(line, file=sys.stderr, flush=True)
        nvcc = shutil.which("nvcc")
        if cubins:
            version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
            compiler = (f"nvcc -arch={arch} -cubin -std=c++17 ({version[-1] if version else 'version unknown'}), "
                        f"{len(cubins)} of {len(sources)} kernels; the rest by cupy's NVRTC (-std=c++17)")
        else:
            compiler = "cupy's NVRTC (-std=c++17); no nvcc on PATH"
        print(f"compiled {len(cubins)} of {len(sources)} kernels with nvcc in {time.monotonic() - t_start:.1f} s",
              flush=True)
        header = header_lines(gpu, sms, _smi(), versions, compiler, "")[:-1]
        if counts:
            write_sass_counts(os.path.join(args.out, "sm-sass.csv"), header + [
                "SASS opcodes (cuobjdump -sass, with modifiers) of every kernel of this run; '(all)' = instructions"],
                counts)
        estimates = [part_estimate(part, launches_per_point) for part in parts]
        for n, (key, part) in enumerate(zip(keys, parts)):
            t0 = time.monotonic()
            # the time left, shared among the parts still to run in proportion to their estimates
            weights = [e.run_s + (0 if cubins else e.compile_s) for e in estimates[n:]]
            share = (deadline - t0) * weights[0] / max(sum(weights), 1e-9)
            try:
                summary = run_part(cp, part, args.out, min(deadline, t0 + share), sms, header, cubins, args.warmup,
                                   args.repeats)
                print(f"part {key} {part.name}: {summary}, {time.monotonic() - t0:.1f} s", flush=True)
            except KeyboardInterrupt:
                print(f"part {key} {part.name}: interrupted after {time.monotonic() - t0:.1f} s (rows so far kept)",
                      flush=True)
                return 1
            except Exception as exc:  # noqa: BLE001 - one failed part must not lose the others
                print(f"part {key} {part.name}: failed after {time.monotonic() - t0:.1f} s: "
                      f"{type(exc).__name__}: {exc}",
                      flush=True)
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
