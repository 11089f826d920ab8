"""Achievable memory bandwidth from the bytes in flight (Little's law).

A memory level with latency ``L`` [ns] delivers at most ``bytes in flight / L`` [B/ns = GB/s]
(Little's law: concurrency = throughput x latency), and never more than its sustained peak
``B`` [GB/s]. With ``W`` resident warps, each keeping ``n`` loads of ``s`` bytes in flight::

    bytes_in_flight  Q = W * n * s                                  [B]
    hard form        BW(Q) = min(B, Q / L)                           [GB/s]
    smooth form      BW(Q) = B * x / (1 + x**p) ** (1 / p),  x = Q / (L * B)

The smooth form is a p-norm smooth minimum of the two limits: it tends to ``Q / L`` for few bytes
in flight (``x -> 0``), to ``B`` for many (``x -> inf``), and to the hard form as ``p -> inf``;
it rises strictly with ``Q``. The implied latency ``Q / BW = L * (1 + x**p) ** (1/p)`` grows
with the load, the queueing that the hard form ignores. ``p = 1`` is the additive form
``1/BW = 1/B + L/Q`` (a latency plus a transfer time per byte).

Calibration (:func:`warpspeed.measured.stream_curve.fit_stream_kernel`): ``B``, ``L`` and ``p``
are fitted per device and streaming kernel to the ``gpu-stream`` measurements of D. Ernst's GPU microbenchmarks
(https://github.com/te42kyfo/gpu-benches; data in ``fits/data/public/gpu-stream``), where
``Q`` = resident threads x bytes the kernel moves per thread. ``L`` is therefore an *effective*
latency (a thread's whole lifetime: load latency, store issue, block turnover), longer than the
idle pointer-chase latency. The fit minimises squared log errors with scipy's ``least_squares``
under bounds: ``p`` in [1, 64]; ``B`` at least the kernel's own highest point less 2 %
(measurement noise) and at most the highest bandwidth any stream kernel reached on that device
(no kernel is assumed to sustain more than the best one measured there); this keeps ``B``
physical where a kernel is still latency-bound at full occupancy (H200).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from warpspeed.errors import FitError

@dataclass(frozen=True)
class BandwidthParams:
    """Parameters of the smooth Little's-law bandwidth curve.

    peak_gb_s:   sustained bandwidth ``B`` with unlimited bytes in flight [GB/s];
    latency_ns:  effective latency ``L`` [ns];
    sharpness:   smooth-minimum exponent ``p`` (>= 1; ``math.inf`` gives the hard minimum).
    """

    peak_gb_s: float
    latency_ns: float
    sharpness: float = math.inf

    def __post_init__(self) -> None:
        if not (self.peak_gb_s > 0 and math.isfinite(self.peak_gb_s)):
            raise FitError(f"peak_gb_s must be a positive finite bandwidth in GB/s, got {self.peak_gb_s}")
        if not (self.latency_ns > 0 and math.isfinite(self.latency_ns)):
            raise FitError(f"latency_ns must be a positive finite latency in ns, got {self.latency_ns}")
        if not self.sharpness >= 1:
            raise FitError(f"sharpness must be >= 1 (or math.inf for the hard minimum), got {self.sharpness}")


def bytes_in_flight(resident_warps: float, loads_per_warp: float, bytes_per_load: float) -> float:
    """Device-wide bytes in flight [B] = resident warps x loads in flight per warp x bytes per load."""
    for name, v in (("resident_warps", resident_warps), ("loads_per_warp", loads_per_warp),
                    ("bytes_per_load", bytes_per_load)):
        if not (v >= 0 and math.isfinite(v)):
            raise FitError(f"{name} must be a finite number >= 0, got {v}")
    return resident_warps * loads_per_warp * bytes_per_load


def littles_law_bandwidth(in_flight_bytes: float, latency_ns: float, peak_gb_s: float) -> float:
    """Hard form: ``min(peak, bytes in flight / latency)`` [GB/s] (1 B/ns = 1 GB/s)."""
    return achievable_bandwidth(in_flight_bytes, BandwidthParams(peak_gb_s, latency_ns))


def achievable_bandwidth(in_flight_bytes: float | np.ndarray, params: BandwidthParams
                         ) -> float | np.ndarray:
    """Bandwidth [GB/s] the level sustains with ``in_flight_bytes`` [B] in flight (smooth form).

    Accepts a scalar or an array; 0 bytes in flight give 0 GB/s.
    """
    q = np.asarray(in_flight_bytes, dtype=float)
    if np.any(q < 0) or not np.all(np.isfinite(q)):
        raise FitError("bytes in flight must be finite and >= 0")
    little = q / params.latency_ns
    if math.isinf(params.sharpness):
        bw = np.minimum(params.peak_gb_s, little)
    else:
        x = little / params.peak_gb_s
        p = params.sharpness
        # B * x / (1 + x^p)^(1/p), written as B / (x^-p + 1)^(1/p) for large x to avoid overflow
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            bw = np.where(x > 1, params.peak_gb_s / (1 + x ** -p) ** (1 / p),
                          params.peak_gb_s * x / (1 + x ** p) ** (1 / p))
    return float(bw) if np.ndim(bw) == 0 else bw


#: Resident blocks per SM of the gpu-stream runs the device's curve was fitted on (the benchmark
#: forces two with shared-memory padding; gpu-benches gpu-stream, the files' ``blocks_per_sm``).
CURVE_BLOCKS_PER_SM = 2


def resident_blocks_bandwidth(in_flight_bytes: float, params: BandwidthParams, blocks_per_sm: int,
                              curve_bandwidth_gb_s: float, cells_per_thread: int = 1) -> float:
    """The bandwidth [GB/s] of a launch with ``blocks_per_sm`` resident blocks per SM whose threads
    update ``cells_per_thread`` cells each: the curve ``params`` (fitted with
    :data:`CURVE_BLOCKS_PER_SM` blocks of one cell per thread) with its knee sharpened by the
    resident blocks and the cells; ``curve_bandwidth_gb_s`` is the launch's bandwidth on the fitted
    curve, which one or two blocks of one cell per thread keep.

    The curve's soft knee is the SM's ramp into and out of each block, when fewer bytes are in
    flight than in the steady state. With ``k`` resident blocks the other ``k - 1`` blocks cover
    one block's ramp; a block whose threads update ``F`` cells moves ``F`` times the bytes per ramp
    (near the knee DRAM is busy, so its life grows with its bytes and its ramps keep their length).
    The knee sharpens with both: exponent ``p x max(1, k F / 2)``, and the peak ``B`` is reached where
    the curve fitted on two blocks stays below it. Measured on an H200
    (``fits/data/H200/mech-stream.csv``: a one-cell-per-thread copy): 3.6-3.8 TB/s at 4 and 8
    blocks of 512 and 256 threads, where the two-block curve gives 3.0 TB/s; this rule gives 3.65
    and 3.87 TB/s. The 5-point star of ``fits/data/H200/star2d-r1.measure.csv`` in two blocks of
    1024 threads reaches 3.76 TB/s with two cells per thread (the rule: 3.86; the two-block
    curve: 3.51), 2.88 TB/s with one (both: 3.01)."""
    ramps = blocks_per_sm * max(1, int(cells_per_thread))
    if ramps <= CURVE_BLOCKS_PER_SM or in_flight_bytes <= 0:
        return curve_bandwidth_gb_s
    sharper = BandwidthParams(params.peak_gb_s, params.latency_ns,
                              params.sharpness * ramps / CURVE_BLOCKS_PER_SM)
    return float(achievable_bandwidth(in_flight_bytes, sharper))
