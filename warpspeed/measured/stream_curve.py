"""The fit of the achievable-bandwidth curve (:mod:`warpspeed.hardware.dram_curve`) to stream measurements.

``B``, ``L`` and ``p`` of :func:`~warpspeed.hardware.dram_curve.achievable_bandwidth` are fitted per
device and streaming kernel to the ``gpu-stream`` measurements of D. Ernst's GPU
microbenchmarks (https://github.com/te42kyfo/gpu-benches; data in ``fits/data/public/gpu-stream``,
read by :mod:`warpspeed.measured.public_data`), where ``Q`` = resident threads x bytes the
kernel moves per thread. The fit minimises squared log errors with scipy's ``least_squares``
under bounds (see :mod:`warpspeed.hardware.dram_curve` for why they are what they are).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from warpspeed.measured.public_data import StreamSweep
from warpspeed.errors import FitError
from warpspeed.hardware.dram_curve import BandwidthParams, achievable_bandwidth

#: Bounds of the smoothness exponent p: 1 is the additive form; at 64 the curve is within 1.1 %
#: of the hard minimum everywhere (2**(1/64) = 1.011), so larger values change nothing measurable.
SHARPNESS_BOUNDS = (1.0, 64.0)
#: The fitted peak may lie this fraction below the kernel's highest measured point (noise).
PEAK_NOISE_FRACTION = 0.02
#: Bounds of the effective latency [ns]: wider than any GPU memory latency by an order of magnitude.
LATENCY_BOUNDS_NS = (1.0, 1.0e4)
#: Starting values of the fit: the 600 ns and p = 3 are mid-range for the measured GPUs.
_START_LATENCY_NS = 600.0
_START_SHARPNESS = 3.0



@dataclass(frozen=True)
class StreamFit:
    """A calibrated curve for one device and kernel, with its error on the fitted points.

    mape_pct:      mean absolute percentage error over the measured rows [%];
    max_error_pct: largest absolute percentage error of a single row [%].
    """

    part: str
    kernel: str
    params: BandwidthParams
    points: int
    mape_pct: float
    max_error_pct: float


def fit_stream_kernel(sweep: StreamSweep, kernel: str) -> StreamFit:
    """Fit ``B``, ``L``, ``p`` of :func:`achievable_bandwidth` to one kernel's stream rows."""
    if kernel not in sweep.bandwidth_gb_s:
        raise FitError(f"{sweep.part}: no stream kernel {kernel!r}; measured: "
                       f"{', '.join(sweep.bandwidth_gb_s)}")
    q = sweep.bytes_in_flight(kernel)
    measured = sweep.bandwidth_gb_s[kernel]
    if np.any(measured <= 0) or np.any(q <= 0):
        raise FitError(f"{sweep.part}/{kernel}: bandwidths and bytes in flight must be positive")
    device_cap = max(float(v.max()) for v in sweep.bandwidth_gb_s.values())
    low_peak = float(measured.max()) * (1 - PEAK_NOISE_FRACTION)
    high_peak = max(device_cap, low_peak * (1 + 1e-9))

    def residuals(theta: np.ndarray) -> np.ndarray:
        model = achievable_bandwidth(q, BandwidthParams(*theta))
        return np.log(model) - np.log(measured)

    start = np.array([np.clip(measured.max(), low_peak, high_peak), _START_LATENCY_NS, _START_SHARPNESS])
    lower = [low_peak, LATENCY_BOUNDS_NS[0], SHARPNESS_BOUNDS[0]]
    upper = [high_peak, LATENCY_BOUNDS_NS[1], SHARPNESS_BOUNDS[1]]
    from scipy.optimize import least_squares  # imported by the fit only: predictions do not need scipy

    result = least_squares(residuals, start, bounds=(lower, upper))
    params = BandwidthParams(*(float(v) for v in result.x))
    rel = np.abs(achievable_bandwidth(q, params) / measured - 1) * 100
    return StreamFit(sweep.part, kernel, params, len(measured), float(rel.mean()), float(rel.max()))
