"""The kernel launch cost, fitted to back-to-back launches of small kernels.

gpu-benches' ``gpu-small-kernels`` (D. Ernst, https://github.com/te42kyfo/gpu-benches,
``gpu-small-kernels/main.cu``) times long series of back-to-back launches of a streaming scale
kernel ``A[i] = 0.25 B[i]`` (one 8 B load, one 8 B store per element) for growing element counts
N and 1-D blocks of B threads (``N / B + 1`` blocks), and reports ``16 N / t`` per launch. Two
costs show in those rows, and they add differently:

- a **per-launch overhead** ``k``: the smallest launches take the same time at every block size
  (2.6 us on the A100, 2.4 us on the H200, 1.6 us on the L40 at 64 KiB);
- a **per-block dispatch time** ``d`` per SM: blocks of 1 to 4 warps reach a plateau of exactly
  ``SMs / d`` blocks per second however large N grows and wherever the data lie (L2 or DRAM),
  doubling with the block size (A100: 86, 173, 344, 686, 1363 GB/s for 4 to 64 threads). The
  dispatch **overlaps** the blocks' memory traffic: the time is the larger of the two, not their
  sum (64-thread blocks on the A100 run at 1363 GB/s, the dispatch rate, not the 760 GB/s a sum
  with the 1700 GB/s of DRAM would give).

Per launch: ``t = k + T_rt + max(n_b d, n_b B 16 B / (b / P))`` with ``n_b = ceil(blocks / P)``
blocks on the busiest of the ``P`` SMs, ``b`` the device's sustained L2 bandwidth (the data
stay in the L2 from one launch to the next) and ``T_rt`` the round trip of one dependent load
and store from the L2, ``2 (L1 + L2 latency)``, which the interval model charges the kernel
itself. :func:`fit_launch` fits one ``d`` for all measured GPUs and one ``k`` per GPU by
``scipy.optimize.least_squares`` on the logarithm of predicted / measured time, over the rows
whose volume stays below :data:`MAX_FIT_BYTES`. The result is stored in ``fits/kernel-launch.toml``
(:func:`fit_file_text` writes it; a test checks the stored file is what the fit gives).
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from warpspeed.errors import FitError
from warpspeed.files.stored import stored_file
from warpspeed.measured.launch_cost import LAUNCH_FIT_FILE
from warpspeed.units import GIGA, MEGA, MIB, MICRO, NANO

#: Bytes each element of the benchmark moves (one 8 B load, one 8 B store).
BYTES_PER_ELEMENT = 16
#: Largest volume fitted, bytes: inside the L2 of every fitted GPU (40 MB A100, 50 MB H200, 96 MB
#: L40), where the benchmark's data stay between launches.
MAX_FIT_BYTES = 4 * MIB
#: Measured parts fitted and the device file of each (SMs, L2 bandwidth, latencies).
PART_DEVICES = {"a100-80": "A100-SXM4-80GB", "h200": "H200", "l40": "L40"}
#: The stored fit, relative to the installed ``warpspeed.fits`` data.
FIT_FILE = LAUNCH_FIT_FILE
#: Starting point of the fit: dispatch time (ns) and overhead (us).
_START_NS, _START_US = 80.0, 2.0
#: Digits the stored constants and errors keep.
_DIGITS = 4


@dataclass(frozen=True)
class Row:
    """One measured point: ``elements`` per launch, ``block_threads`` per block, ``seconds`` per launch."""

    elements: int
    block_threads: int
    seconds: float

    @property
    def volume(self) -> int:
        return self.elements * BYTES_PER_ELEMENT

    @property
    def blocks(self) -> int:
        return self.elements // self.block_threads + 1


@dataclass(frozen=True)
class PartDevice:
    """What the fit needs of the measured GPU: ``sms``, sustained L2 bandwidth (GB/s) and the round
    trip of a dependent load and store from the L2 (seconds)."""

    sms: int
    l2_bandwidth_gb_s: float
    round_trip_s: float


def _csv_path(part: str):
    return stored_file("public", "gpu-small-kernels", f"{part}.csv")


def source_line(part: str) -> str:
    """Where ``part``'s measurements come from: its file's ``# source:`` line (repository, file, commit)."""
    with _csv_path(part).open() as handle:
        line = next(line for line in handle if line.startswith("# source:"))
    return line.split(":", 1)[1].strip()


def measured_rows(part: str) -> list[Row]:
    """Every stored measurement of ``part`` (the block sizes of the columns are the file's
    ``# block_threads:`` line)."""
    with _csv_path(part).open() as handle:
        return parse_rows(handle.read(), part)


def parse_rows(text: str, where: str) -> list[Row]:
    """The rows of a gpu-small-kernels table (stored, or measured by ``warpspeed calibrate``): one
    line per element count, one ``gb_s_<i>`` column per block size of the ``# block_threads:``
    line; :class:`~warpspeed.errors.FitError` naming ``where`` on a malformed table."""
    lines = text.splitlines()
    header = next((line for line in lines if line.startswith("# block_threads:")), None)
    if header is None:
        raise FitError(f"{where}: no '# block_threads:' line (the block sizes of the gb_s columns)")
    try:
        threads = [int(v) for v in header.split(":", 1)[1].split(",")]
        reader = csv.DictReader(line for line in lines if line.strip() and not line.startswith("#"))
        rows = []
        for record in reader:
            n = int(record["elements"])
            for column, b in zip((k for k in record if k.startswith("gb_s")), threads):
                if record[column]:
                    gb_s = float(record[column])
                    if not (math.isfinite(gb_s) and gb_s > 0 and n > 0 and b > 0):
                        raise ValueError(f"elements {n}, block {b}: {gb_s} GB/s")
                    rows.append(Row(n, b, n * BYTES_PER_ELEMENT / (gb_s * GIGA)))
    except (KeyError, TypeError, ValueError) as exc:
        raise FitError(f"{where}: malformed gpu-small-kernels table ({exc})") from None
    if not rows:
        raise FitError(f"{where}: no gpu-small-kernels rows")
    return rows


def part_device(part: str) -> PartDevice:
    """The figures of ``part``'s device file (:data:`PART_DEVICES`)."""
    from warpspeed.hardware.device import load_device

    device = load_device(PART_DEVICES[part])
    l1, l2 = device.latencies.l1, device.latencies.l2
    return PartDevice(device.sms, device.l2.bandwidth_gb_s, 2 * (l1 + l2) / (device.clock_ghz * GIGA))


def launch_seconds(row: Row, dev: PartDevice, block_s: float, overhead_s: float) -> float:
    """The fitted model's time of one launch (see the module docstring)."""
    per_sm = math.ceil(row.blocks / dev.sms)
    data = per_sm * row.block_threads * BYTES_PER_ELEMENT / (dev.l2_bandwidth_gb_s * GIGA / dev.sms)
    return overhead_s + dev.round_trip_s + max(per_sm * block_s, data)


@dataclass(frozen=True)
class PartFit:
    """A measured part's overhead (s) and how well the fitted model reproduces its rows."""

    part: str
    device: str
    overhead_s: float
    rows: int
    rms_rel_error: float
    max_rel_error: float


@dataclass(frozen=True)
class LaunchFit:
    """The shared block dispatch time per SM (s) and each part's fit."""

    block_dispatch_s: float
    parts: dict[str, PartFit]


def _fit_rows(part: str) -> list[Row]:
    return [r for r in measured_rows(part) if r.volume <= MAX_FIT_BYTES]


def _errors(rows: list[Row], dev: PartDevice, block_s: float, overhead_s: float) -> np.ndarray:
    return np.array([launch_seconds(r, dev, block_s, overhead_s) / r.seconds - 1 for r in rows])


@lru_cache(maxsize=1)
def fit_launch() -> LaunchFit:
    """Least-squares fit of ``d`` (shared) and ``k`` (per part) to every part of :data:`PART_DEVICES`."""
    parts = list(PART_DEVICES)
    rows = {p: _fit_rows(p) for p in parts}
    devs = {p: part_device(p) for p in parts}

    def residuals(v: np.ndarray) -> np.ndarray:
        return np.concatenate([np.log1p(_errors(rows[p], devs[p], v[0] * NANO, v[1 + i] * MICRO))
                               for i, p in enumerate(parts)])

    from scipy.optimize import least_squares  # imported by the fit only: predictions do not need scipy

    fit = least_squares(residuals, [_START_NS] + [_START_US] * len(parts), bounds=(0.0, np.inf))
    block_s = float(fit.x[0]) * NANO
    out = {}
    for i, p in enumerate(parts):
        e = _errors(rows[p], devs[p], block_s, float(fit.x[1 + i]) * MICRO)
        out[p] = PartFit(p, PART_DEVICES[p], float(fit.x[1 + i]) * MICRO, len(e), float(np.sqrt(np.mean(e * e))),
                         float(np.max(np.abs(e))))
    return LaunchFit(block_s, out)


def fit_overhead(rows: list[Row], dev: PartDevice, block_s: float, part: str = "", device: str = "") -> PartFit:
    """One GPU's per-launch overhead ``k`` (s) fitted to its ``rows`` up to :data:`MAX_FIT_BYTES`
    with the block dispatch time ``block_s`` held (the shared value of :func:`fit_launch`, stored in
    ``fits/kernel-launch.toml``): the same least squares of log(predicted / measured time) as
    :func:`fit_launch`, in ``k`` alone."""
    fitted = [r for r in rows if r.volume <= MAX_FIT_BYTES]
    if not fitted:
        raise FitError(f"{part or 'launch table'}: no row up to {MAX_FIT_BYTES // MIB} MiB to fit the launch overhead")

    def residuals(v: np.ndarray) -> np.ndarray:
        return np.log1p(_errors(fitted, dev, block_s, float(v[0]) * MICRO))

    from scipy.optimize import least_squares  # imported by the fit only: predictions do not need scipy

    fit = least_squares(residuals, [_START_US], bounds=(0.0, np.inf))
    overhead = float(fit.x[0]) * MICRO
    e = _errors(fitted, dev, block_s, overhead)
    return PartFit(part, device, overhead, len(e), float(np.sqrt(np.mean(e * e))), float(np.max(np.abs(e))))


def fit_file_text(fit: LaunchFit | None = None) -> str:
    """The text of ``fits/kernel-launch.toml`` for ``fit`` (default: :func:`fit_launch`)."""
    fit = fit or fit_launch()
    r = lambda v: round(v, _DIGITS)  # noqa: E731
    lines = [
        "# Kernel launch cost of NVIDIA GPUs, fitted to gpu-benches gpu-small-kernels (D. Ernst, GPU",
        "# microbenchmarks, https://github.com/te42kyfo/gpu-benches, GPL-3.0; the measured rows are stored in",
        "# fits/data/public/gpu-small-kernels/<part>.csv with the file and commit they come from).",
        "# Model of one launch of the benchmark's scale kernel (warpspeed.calibration.launch):",
        "#   t = k + T_rt + max(ceil(blocks / SMs) d, ceil(blocks / SMs) x block bytes / (L2 bandwidth / SMs))",
        "# d: block dispatch time per block and SM (one value for every part); k: per-launch overhead;",
        "# T_rt = 2 (L1 + L2 latency): one dependent load and store from the L2. Fitted by",
        "# scipy.optimize.least_squares on log(predicted / measured time) over the rows up to",
        f"# {MAX_FIT_BYTES // MIB} MiB. Errors: relative, predicted vs measured time per launch, over the fitted",
        "# rows.",
        "# Written by warpspeed.calibration.launch.fit_file_text(); a test checks this file equals it.",
        "",
        f"block_dispatch_ns = {r(fit.block_dispatch_s * GIGA)}",
        "",
    ]
    for p in fit.parts.values():
        lines += [f'[parts."{p.part}"]', f'device = "{p.device}"', f'source = "{source_line(p.part)}"',
                  f"overhead_us = {r(p.overhead_s * MEGA)}",
                  f"rows = {p.rows}", f"rms_rel_error = {r(p.rms_rel_error)}", f"max_rel_error = {r(p.max_rel_error)}",
                  ""]
    return "\n".join(lines)
