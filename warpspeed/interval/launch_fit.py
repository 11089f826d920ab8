"""The constant part of the kernel launch latency, fitted to back-to-back launches of small kernels.

gpu-benches' ``gpu-small-kernels`` launches a streaming kernel 10000 times back to back for
growing data volumes V and reports V / t. Its readme fits ``V / t = V / (a + V / b)``: a time
``t = a + V / b`` per launch with a startup overhead ``a`` and a bandwidth ``b``. This module
fits the same line by least squares (``scipy.stats.linregress`` of t on V) to the rows whose
volume stays well inside the L2 cache (:data:`MAX_FIT_BYTES`), taking each row's best block
size. The overhead in SM cycles, ``a x clock``, is the constant ``k`` of AMALI's launch latency
``KLL = s GS + k`` (the per-block part ``s GS`` is a few cycles for these grids).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from scipy.stats import linregress

#: Bytes each element of the benchmark moves (one 8 B load, one 8 B store).
BYTES_PER_ELEMENT = 16
#: Largest volume fitted, bytes: far below every fitted GPU's L2 (40 MB A100, 50 MB H200, 96 MB
#: L40), so the bandwidth b is the L2's and the line is straight.
MAX_FIT_BYTES = 4 * 2**20
#: Stored measurements by part (files under fits/data/public/gpu-small-kernels/).
PARTS = ("a100-80", "h200", "l40")


@dataclass(frozen=True)
class LaunchFit:
    """``t = overhead_s + V / bandwidth_gb_s`` per launch; ``rows`` fitted; ``max_rel_error`` of the
    fitted time against the measured time over those rows."""

    part: str
    overhead_s: float
    bandwidth_gb_s: float
    rows: int
    max_rel_error: float

    def overhead_cycles(self, clock_ghz: float) -> float:
        return self.overhead_s * clock_ghz * 1e9


def measured_times(part: str) -> list[tuple[float, float]]:
    """``(bytes, seconds per launch)`` of every stored row, at the row's best block size."""
    path = resources.files("warpspeed.fits") / "data" / "public" / "gpu-small-kernels" / f"{part}.csv"
    with path.open() as handle:
        rows = csv.DictReader(line for line in handle if not line.startswith("#"))
        out = []
        for row in rows:
            volume = int(row["elements"]) * BYTES_PER_ELEMENT
            best = max(float(v) for k, v in row.items() if k.startswith("gb_s") and v)
            out.append((float(volume), volume / (best * 1e9)))
    return out


@lru_cache(maxsize=len(PARTS))
def fit_launch(part: str) -> LaunchFit:
    """The least-squares line through the rows of ``part`` below :data:`MAX_FIT_BYTES`."""
    points = [(v, t) for v, t in measured_times(part) if v <= MAX_FIT_BYTES]
    volumes, times = zip(*points)
    line = linregress(volumes, times)
    errors = [abs(line.intercept + line.slope * v - t) / t for v, t in points]
    return LaunchFit(part, float(line.intercept), float(1e-9 / line.slope), len(points), max(errors))
