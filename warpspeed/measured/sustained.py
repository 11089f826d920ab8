"""Sustained hardware figures derived from the stored public microbenchmark measurements.

Vendor peaks overstate what a GPU sustains. This module derives, per measured part, what D. Ernst's
GPU microbenchmarks (https://github.com/te42kyfo/gpu-benches; the measurements behind Ernst,
Holzer, Hager, Knorr, Wellein: "Analytical Performance Estimation during Code Generation on
Modern GPUs", Journal of Parallel and Distributed Computing, 2023) measured, with every rule
stated here:

DRAM at full occupancy (``gpu-stream``)
    the highest bandwidth of the mixed read/write kernels (scale, triad, stencil1d3pt; stencils
    read and write too) in the row with the most resident threads. The maximum, not the mean,
    because the kernels differ only in bytes in flight per thread (16 or 24 B): on all parts but
    the H200 the three agree within 3 %; on the H200 they are still latency-bound at full
    occupancy and triad, with the most bytes in flight, is the closest to what the memory sustains.
    The write-only (init) and read-only (read) kernels are reported separately.

Cache level from a data-set sweep (``gpu-l2-cache`` for L2, ``gpu-cache`` for L1): :func:`cache_step`
    * level bandwidth = median over rows with data set in [C/8, C/2], C the vendor capacity
      stated in the data file's header (safely inside the level, clear of the level above);
    * next-level bandwidth = median over rows in [4 C, 8 C] (safely past the fall);
    * onset capacity = data set at which the bandwidth last falls through 90 % of the level
      bandwidth (log-linear interpolation between the two rows around the fall);
    * midpoint capacity = the same for the mean of level and next-level bandwidth.
    The onset is the recommended effective capacity: below it the level serves at >= 90 % of
    its rate; the midpoint is larger where the replacement policy keeps serving part of an
    overflowing data set (a smeared fall).

Latency per level (``gpu-latency``): :func:`latency_levels`
    median over rows in [C/8, C/2] of each level's capacity C, and for DRAM the median over the
    rows at or beyond 8 x the last-level capacity; cycles convert at the clock the file states.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from warpspeed.errors import FitError
from warpspeed.measured.public_data import (LatencySweep, SizeSweep, StreamSweep, load_latency, load_size_sweep,
                                        load_stream, public_parts)

#: Window inside a cache level, as fractions of its capacity C: [C/8, C/2].
LEVEL_WINDOW = (1 / 8, 1 / 2)
#: Window past a cache level's fall, as multiples of its capacity C: [4 C, 8 C].
NEXT_WINDOW = (4.0, 8.0)
#: DRAM rows of a latency sweep start at this multiple of the last-level capacity.
DRAM_LATENCY_FROM = 8.0
#: Onset threshold: the fraction of the level bandwidth below which the level counts as overflowing.
ONSET_FRACTION = 0.9
#: Mixed read/write stream kernels, the ones whose traffic resembles a stencil's.
MIXED_KERNELS = ("scale", "triad", "stencil1d3pt")


@dataclass(frozen=True)
class CacheStep:
    """A cache level's bandwidth and effective capacity from one data-set sweep.

    level_gb_s / next_gb_s: bandwidth inside the level / past its fall [GB/s];
    onset_bytes:    data set where the bandwidth last falls through 90 % of ``level_gb_s`` [B];
    midpoint_bytes: data set where it last falls through the mean of both bandwidths [B];
    nominal_bytes:  the vendor capacity the windows are placed by [B].
    """

    level_gb_s: float
    next_gb_s: float
    onset_bytes: float
    midpoint_bytes: float
    nominal_bytes: float
    source: str


@dataclass(frozen=True)
class LatencyLevels:
    """Pointer-chase latencies [ns] per level (None where the part has no such level)."""

    l1_ns: float
    l2_ns: float
    llc_ns: float | None  # a last-level cache behind L2 (RDNA 2 Infinity Cache), else None
    dram_ns: float
    clock_ghz: float
    source: str


@dataclass(frozen=True)
class StreamSummary:
    """DRAM bandwidth at the highest measured occupancy [GB/s] from ``gpu-stream``."""

    mixed_gb_s: float  # highest of MIXED_KERNELS in the last row
    mixed_kernel: str
    write_only_gb_s: float  # init
    read_only_gb_s: float  # read
    resident_threads: int
    source: str


@dataclass(frozen=True)
class MeasuredPart:
    """Everything the stored benchmarks say about one part (None where it was not measured)."""

    part: str
    stream: StreamSummary | None
    l2: CacheStep | None
    llc: CacheStep | None
    l1: CacheStep | None
    latency: LatencyLevels | None


def _window_median(x: np.ndarray, y: np.ndarray, lo: float, hi: float, what: str) -> float:
    sel = (x >= lo) & (x <= hi)
    if not np.any(sel):
        raise FitError(f"{what}: no measured row between {lo:.0f} and {hi:.0f} B")
    return float(np.median(y[sel]))


def _last_fall(x: np.ndarray, y: np.ndarray, threshold: float, end: float, what: str) -> float:
    """Data set where ``y`` last falls through ``threshold`` before ``end`` (log-linear)."""
    order = np.argsort(x)
    x, y = x[order], y[order]
    inside = np.nonzero(x < end)[0]
    above = [i for i in inside if y[i] >= threshold]
    if not above or above[-1] + 1 >= len(x):
        raise FitError(f"{what}: the bandwidth never falls through {threshold:.0f} GB/s")
    i = above[-1]
    t = (y[i] - threshold) / (y[i] - y[i + 1])
    return float(math.exp(math.log(x[i]) + t * (math.log(x[i + 1]) - math.log(x[i]))))


def cache_step(sweep: SizeSweep, level: str) -> CacheStep:
    """Bandwidth and effective capacity of ``level`` ("l1", "l2" or "llc") from a data-set sweep."""
    if level not in sweep.nominal_bytes:
        raise FitError(f"{sweep.part}: the data file states no nominal {level} capacity "
                       f"(it states: {', '.join(sweep.nominal_bytes) or 'none'})")
    c = sweep.nominal_bytes[level]
    x, y = sweep.data_set_bytes, sweep.bandwidth_gb_s
    what = f"{sweep.part} {level}"
    level_bw = _window_median(x, y, c * LEVEL_WINDOW[0], c * LEVEL_WINDOW[1], what)
    next_bw = _window_median(x, y, c * NEXT_WINDOW[0], c * NEXT_WINDOW[1], what)
    end = c * NEXT_WINDOW[0]
    onset = _last_fall(x, y, ONSET_FRACTION * level_bw, end, what)
    midpoint = _last_fall(x, y, (level_bw + next_bw) / 2, end, what)
    return CacheStep(level_bw, next_bw, onset, midpoint, c, sweep.source)


def latency_levels(sweep: LatencySweep) -> LatencyLevels:
    """L1, L2, last-level-cache and DRAM latency [ns] of a pointer-chase sweep."""
    x, ns = sweep.data_set_bytes, sweep.latency_ns
    for level in ("l1", "l2"):
        if level not in sweep.nominal_bytes:
            raise FitError(f"{sweep.part}: latency file states no nominal {level} capacity")

    def level_ns(level: str) -> float:
        c = sweep.nominal_bytes[level]
        return _window_median(x, ns, c * LEVEL_WINDOW[0], c * LEVEL_WINDOW[1], f"{sweep.part} {level}")

    llc = level_ns("llc") if "llc" in sweep.nominal_bytes else None
    last = sweep.nominal_bytes.get("llc", sweep.nominal_bytes["l2"])
    dram = _window_median(x, ns, last * DRAM_LATENCY_FROM, math.inf, f"{sweep.part} dram")
    return LatencyLevels(level_ns("l1"), level_ns("l2"), llc, dram, sweep.clock_ghz, sweep.source)


def stream_summary(part: str) -> StreamSummary:
    """DRAM bandwidth at the highest measured occupancy (see the module docstring for the rule)."""
    return summarize_stream(load_stream(part))


def summarize_stream(sweep: StreamSweep) -> StreamSummary:
    """:func:`stream_summary` of a sweep read from any table (stored or measured)."""
    part = sweep.part
    missing = [k for k in ("init", "read") if k not in sweep.bandwidth_gb_s]
    if missing:
        raise FitError(f"{part}: the stream table lacks the kernel(s) {', '.join(missing)}")
    last = int(np.argmax(sweep.resident_threads))
    mixed = {k: float(sweep.bandwidth_gb_s[k][last]) for k in MIXED_KERNELS if k in sweep.bandwidth_gb_s}
    if not mixed:
        raise FitError(f"{part}: none of the mixed read/write kernels {MIXED_KERNELS} was measured")
    kernel = max(mixed, key=lambda k: mixed[k])
    return StreamSummary(mixed[kernel], kernel, float(sweep.bandwidth_gb_s["init"][last]),
                         float(sweep.bandwidth_gb_s["read"][last]),
                         int(sweep.resident_threads[last]), sweep.source)


def measured_parts() -> tuple[str, ...]:
    """Every part with at least one stored benchmark file, sorted."""
    parts: set[str] = set()
    for bench in ("gpu-stream", "gpu-l2-cache", "gpu-cache", "gpu-latency"):
        parts.update(public_parts(bench))
    return tuple(sorted(parts))


def measured_part(part: str) -> MeasuredPart:
    """All derived figures of ``part``; :class:`FitError` if nothing is stored for it."""
    if part not in measured_parts():
        raise FitError(f"no measurements stored for {part!r}; measured parts: {', '.join(measured_parts())}")
    l2_sweep = load_size_sweep("gpu-l2-cache", part) if part in public_parts("gpu-l2-cache") else None
    return MeasuredPart(
        part=part,
        stream=stream_summary(part) if part in public_parts("gpu-stream") else None,
        l2=cache_step(l2_sweep, "l2") if l2_sweep else None,
        llc=cache_step(l2_sweep, "llc") if l2_sweep and "llc" in l2_sweep.nominal_bytes else None,
        l1=(cache_step(load_size_sweep("gpu-cache", part), "l1")
            if part in public_parts("gpu-cache") else None),
        latency=latency_levels(load_latency(part)) if part in public_parts("gpu-latency") else None,
    )
