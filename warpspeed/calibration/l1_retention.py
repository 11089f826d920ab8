"""How much of an overflowing data set an NVIDIA first level keeps, from a pointer chase.

The L1 capacity-miss curve (``l1_load`` of ``fits/nvidia-*.toml``) was fitted on an A100; its
shape says how fast the redundant loads of a block start to miss as the block's allocation grows
past the L1 it sees. That speed is a property of the L1's allocation and replacement, which differ
between generations. The pointer chase of D. Ernst's GPU microbenchmarks (gpu-benches
``gpu-latency``: one block of 64 threads follows a randomly permuted chain, one 8 B pointer per
64 B, through a buffer of growing size; https://github.com/te42kyfo/gpu-benches, GPL-3.0) measures
it directly: each load waits for the previous one, so the latency at a buffer size is the mix
``t = h t_L1 + (1 - h) t_L2`` and the share of the buffer the L1 still serves is

    h(D) = (t_L2 - t(D)) / (t_L2 - t_L1).

The *half-retention size* ``D_1/2`` is the buffer where ``h`` falls through 1/2 (linear between the
two rows around it), and the *retention ratio* ``D_1/2 / L1_kept`` relates it to the L1 the launch
keeps after the driver's shared-memory carveout (:mod:`warpspeed.memory.capacity.carveout`):

=========  ===========  ===========  =====================================================
part       L1 kept      ``D_1/2``    h at the rows around it (``fits/data/public/gpu-latency-l1/``)
=========  ===========  ===========  =====================================================
V100       128 KiB      138.0 KiB    0.68 at 130 kB, 0.37 at 144 kB: ratio 1.078
A100 40GB  184 KiB      170.4 KiB    0.76 at 160 kB, 0.34 at 177 kB: ratio 0.926
A100 80GB  184 KiB      170.6 KiB    0.75 at 160 kB, 0.35 at 177 kB: ratio 0.927
H100 PCIe  248 KiB      244.5 KiB    0.57 at 239 kB, 0.26 at 264 kB: ratio 0.986
L40        120 KiB       99.7 KiB    0.67 at 95 kB, 0.46 at 101 kB: ratio 0.831
=========  ===========  ===========  =====================================================

The V100's L1 keeps a chain 8 % longer than its capacity half-served, the A100's loses half of one
7 % shorter than the L1 it keeps: relative to its capacity, Volta's L1 holds data 1.164 times as
long (:func:`l1_curve_stretch`). The Volta curve is therefore the A100 curve stretched along the
oversubscription by that ratio, ``m_Volta(o) = m_A100(o / 1.164)``, which for the Gompertz form
``a exp(-b exp(-c o))`` divides ``c`` by the ratio and keeps ``a`` (the share of the redundant
volume whose reuse lies beyond any L1) and ``b`` (:func:`stretched_slope`): one measured constant,
no fit to kernel volumes. The two A100s give the same ratio within 0.2 %, so the chase repeats on
a second card of a family. The Hopper and Ada curves are stretched the same way, by the H100 PCIe
(1.065: Hopper's L1 holds an overflowing chain a little longer than the A100's) and the L40 (0.897:
Ada's falls off earlier), ``fits/nvidia-hopper.toml`` and ``fits/nvidia-ada.toml``. The bandwidth sweep of the same benchmarks (gpu-benches ``gpu-cache``,
``fits/data/public/gpu-cache/v100.csv``; the A100 80 GB's ``gpu-cache/a100_80.txt`` at the same
commit) points the same way, more strongly: the hit share read off the bandwidth (the time per byte
mixed between the L1 and L2 plateaus) falls through 1/2 at 1.64 times the L1 the V100 keeps and
1.18 times the A100's (a ratio of 1.39; the bandwidth mix lets misses overlap hits, so the pointer
chase, whose loads wait for each other, is the cleaner measure).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from warpspeed.errors import FitError
from warpspeed.files.stored import stored_file
from warpspeed.measured.public_data import DataFile, parse_public_csv
from warpspeed.units import KIB

#: The folder of ``fits/data/public/`` holding the pointer-chase rows around the L1 (the rows of
#: gpu-benches ``gpu-latency/<part>.txt`` up to 400 kB, with the L1 each launch keeps in the header).
RETENTION_FOLDER = "gpu-latency-l1"
#: The part the L1 curve of ``fits/nvidia-ampere.toml`` was fitted on (an A100 40 GB; Ernst,
#: Holzer, Hager, Knorr, Wellein: "Analytical Performance Estimation during Code Generation on
#: Modern GPUs", Journal of Parallel and Distributed Computing 173, 2023, section 4.5).
REFERENCE_PART = "a100-40gb"
#: The L1 latency is the median of the rows up to this share of the kept L1 (all of them hit).
L1_ROWS_UP_TO = 0.5
#: The L2 latency is the median of the rows from this multiple of the kept L1 (none of them hit;
#: the files end at 400 kB, well inside every L2).
L2_ROWS_FROM = 1.5
#: The hit share that defines the half-retention size.
HALF = 0.5


@dataclass(frozen=True)
class Retention:
    """One part's pointer chase around its L1: latencies [cycles], sizes [B]."""

    part: str
    source: str
    kept_l1_bytes: float
    l1_cycles: float
    l2_cycles: float
    half_bytes: float

    @property
    def ratio(self) -> float:
        """``D_1/2 / L1_kept`` (dimensionless)."""
        return self.half_bytes / self.kept_l1_bytes


def hit_share(latency_cycles: np.ndarray, l1_cycles: float, l2_cycles: float) -> np.ndarray:
    """``h = (t_L2 - t) / (t_L2 - t_L1)``, clipped to [0, 1]: the share of a pointer chase the L1 serves."""
    return np.clip((l2_cycles - latency_cycles) / (l2_cycles - l1_cycles), 0.0, 1.0)


def read_retention_file(part: str) -> DataFile:
    """The stored rows ``fits/data/public/gpu-latency-l1/<part>.csv``; :class:`FitError` if absent."""
    path = stored_file("public", RETENTION_FOLDER, f"{part}.csv")
    if not path.is_file():
        raise FitError(f"no {RETENTION_FOLDER} data for part {part!r}")
    return parse_public_csv(path.read_text(encoding="utf-8"), RETENTION_FOLDER, part)


def retention(part: str) -> Retention:
    """The half-retention size of ``part``'s L1 (module docstring)."""
    f = read_retention_file(part)
    try:
        kept = float(f.value("kept_l1_kib")) * KIB
    except ValueError:
        raise FitError(f"{RETENTION_FOLDER}/{part}.csv: kept_l1_kib is not a number") from None
    size, cycles = f.column("data_set_kb") * KIB, f.column("latency_cycles")
    l1_rows, l2_rows = cycles[size <= L1_ROWS_UP_TO * kept], cycles[size >= L2_ROWS_FROM * kept]
    if not len(l1_rows) or not len(l2_rows):
        raise FitError(f"{RETENTION_FOLDER}/{part}.csv: needs rows up to {L1_ROWS_UP_TO} and from "
                       f"{L2_ROWS_FROM} x the kept L1 ({kept / KIB:g} KiB)")
    l1, l2 = float(np.median(l1_rows)), float(np.median(l2_rows))
    h = hit_share(cycles, l1, l2)
    below = np.nonzero((h[:-1] >= HALF) & (h[1:] < HALF))[0]
    if not len(below):
        raise FitError(f"{RETENTION_FOLDER}/{part}.csv: the L1 hit share never falls through {HALF}")
    i = int(below[-1])
    half = size[i] + (h[i] - HALF) / (h[i] - h[i + 1]) * (size[i + 1] - size[i])
    return Retention(part, f.source, kept, l1, l2, float(half))


def l1_curve_stretch(part: str, reference: str = REFERENCE_PART) -> float:
    """How much longer ``part``'s L1 holds data than the reference part's, relative to the L1
    each launch keeps: the ratio of their retention ratios (dimensionless)."""
    return retention(part).ratio / retention(reference).ratio


def stretched_slope(reference_c: float, stretch: float) -> float:
    """The Gompertz ``c`` of the curve ``m(o / stretch)`` from the reference curve's ``c``."""
    return reference_c / stretch
