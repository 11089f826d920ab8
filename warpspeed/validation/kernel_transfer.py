"""The overlap model on kernels it was not fitted on: six kernels timed on one H200, fitted across
them and judged by leaving one kernel out, and two microbenchmarks that test its mechanisms.

Kernels (``fits/data/H200/``; its README gives the machine, the software and the commands): the
25-point star stencil in double (the paper's workload) and in float, the 7-point star on
640x512x512, the 5-point 2D star on 16384^2, the 27-point box on 256^3 and a 19-array shifted copy
on 256^3 (the memory pattern of a D3Q19 pull step, no arithmetic), all pystencils code in every
block of the paper's space (1024 threads; 512 for the copy) and the foldings none / 2 in y / 2 in z
(a random sample where the file says so). No lattice-Boltzmann kernel is among them.

For each kernel: the shipped model's MAPE, median prediction / measurement, Spearman's rank
correlation and the measured share of the configuration it ranks first; and the error of the two
fitted constants (:mod:`warpspeed.calibration.overlap_fit`) in-sample (fitted on all six) and left
out (fitted on the other five).

Mechanism checks, each against a microbenchmark that isolates it (``benchmarks/gpu/mechanisms.py``):

* the partial-sector cost (:mod:`warpspeed.memory.sectors`): the bandwidth of multi-array copies
  by the block's row width, relative to the widest row of the same series, against
  ``2 / (load cost + store cost)`` of the rows (``mech-segments.csv``);
* Little's law with overlapping blocks and the block dispatch rate: a one-cell-per-thread copy by
  block size and resident blocks per SM against the overlap model (``mech-stream.csv``).
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from typing import Sequence

from warpspeed.errors import WarpspeedError
from warpspeed.files.stored import stored_file
from warpspeed.files.text import read_text
from warpspeed.units import GIGA
from warpspeed.validation.real_gpu import ModelAccuracy

#: The device and the folder of the measurements.
DEVICE = "H200"
FOLDER = "H200"

Config = tuple[tuple[int, int, int], tuple[int, int, int]]


@dataclass(frozen=True)
class KernelSet:
    """One timed kernel: its name in the reports, the workload, the element type and the file
    (``timing``: the batched rates of the paper's workload; ``measure``: a ``warpspeed measure``
    table, whose header gives the domain)."""

    name: str
    kernel: str
    dtype: str | None
    file: str
    kind: str = "measure"


KERNEL_SETS: tuple[KernelSet, ...] = (
    KernelSet("star3d-r4", "star3d-r4", None, "star3d-r4.timing.csv", "timing"),
    KernelSet("star3d-r4 float", "star3d-r4", "float", "star3d-r4-float.measure.csv"),
    KernelSet("star3d-r1", "star3d-r1", None, "star3d-r1.measure.csv"),
    KernelSet("star2d-r1", "star2d-r1", None, "star2d-r1.measure.csv"),
    KernelSet("box3d-r1", "box3d-r1", None, "box3d-r1.measure.csv"),
    KernelSet("copy19-pull", "copy19-pull", None, "copy19-pull.measure.csv"),
)

SEGMENTS_FILE = "mech-segments.csv"
STREAM_FILE = "mech-stream.csv"


def _text(name: str) -> str:
    return read_text(stored_file(FOLDER, name), "stored measurement")


def _table(name: str) -> tuple[dict[str, str], list[dict[str, str]]]:
    """(``# key: value`` metadata, rows) of a stored CSV."""
    text = _text(name)
    meta = {}
    for line in text.splitlines():
        if line.startswith("#") and ":" in line:
            key, _, value = line[1:].partition(":")
            meta[key.strip()] = value.strip()
    return meta, list(csv.DictReader(line for line in io.StringIO(text) if not line.startswith("#")))


def _ints(text: str, sep: str) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in text.split(sep))
    except ValueError:
        raise WarpspeedError(f"{FOLDER}: {text!r} is not a list of integers") from None


def measured_rates(ks: KernelSet) -> tuple[tuple[int, ...] | None, dict[Config, float]]:
    """The domain (``None``: the workload's default) and the measured lups/s per configuration."""
    meta, rows = _table(ks.file)
    if ks.kind == "timing":
        return None, {(_ints(r["block"], ","), _ints(r["fold"], ",")): float(r["lups_per_s"])  # type: ignore[misc]
                      for r in rows}
    domain = _ints(meta["domain"], "x") if "domain" in meta else None
    rates = {}
    for r in rows:
        if r.get("error") or not r.get("meas_lups_per_s"):
            continue
        block = tuple(int(r[f"block_{d}"]) for d in "xyz")
        fold = tuple(int(r[f"fold_{d}"]) for d in "xyz")
        rates[(block, fold)] = float(r["meas_lups_per_s"])  # type: ignore[index]
    return domain, rates


@dataclass(frozen=True)
class KernelAccuracy(ModelAccuracy):
    """One kernel with the shipped constants (``model``: the kernel's name; the statistics of
    :class:`~warpspeed.validation.real_gpu.ModelAccuracy`), and the fitted constants' error in and
    out of sample."""

    in_sample_percent: float = math.nan
    left_out_percent: float = math.nan
    left_out_exponent: float = math.nan
    left_out_requests_per_cycle: float = math.nan

    @property
    def name(self) -> str:
        return self.model


@dataclass(frozen=True)
class MechanismCheck:
    """A microbenchmark against one mechanism: MAPE over its points and what it tests."""

    name: str
    file: str
    points: int
    mape_percent: float
    median_ratio: float
    what: str


@dataclass(frozen=True)
class KernelTransfer:
    """The kernels, the fit across them and the mechanism checks."""

    device: str
    exponent: float
    requests_per_cycle: float
    fitted_exponent: float
    fitted_requests_per_cycle: float
    kernels: tuple[KernelAccuracy, ...]
    checks: tuple[MechanismCheck, ...]


def _samples(ks: KernelSet, device, params) -> list[tuple[Config, object, float]]:
    from warpspeed.kernel.catalog import resolve
    from warpspeed.overlap.combine import overlap_model
    from warpspeed.predict import Predictor

    domain, rates = measured_rates(ks)
    predictors = {}
    out = []
    for config in sorted(rates):
        block, fold = config
        if fold not in predictors:
            predictors[fold] = Predictor(resolve(ks.kernel, domain, fold=fold, device=device, dtype=ks.dtype).kernel,
                                         device)
        out.append((config, overlap_model(predictors[fold].predict(block, fold), params), rates[config]))
    return out


def _ratio_stats(ratios: Sequence[float]) -> tuple[float, float]:
    r = sorted(ratios)
    return 100.0 * sum(abs(x - 1.0) for x in r) / len(r), r[len(r) // 2]


def segments_check() -> MechanismCheck:
    """The partial-sector cost against the multi-array copies (module docstring): rows of 4 or
    more arrays without shifts, per series (block family, arrays, element size) the bandwidth
    relative to its widest row against the cost's prediction relative to the same row."""
    from warpspeed.kernel.description import Field, Kernel, X, load, store
    from warpspeed.memory.sectors import sector_cost
    from warpspeed.overlap.params import PARTIAL_SECTOR_LOAD_COST, PARTIAL_SECTOR_STORE_COST

    meta, rows = _table(SEGMENTS_FILE)
    series: dict[tuple[str, int, int], list[tuple[int, float]]] = {}
    for r in rows:
        if r["shift"] != "none" or r["family"] not in ("tall", "cube") or int(r["arrays"]) < 4:
            continue
        key = (r["family"], int(r["arrays"]), int(r["element_bytes"]))
        series.setdefault(key, []).append((int(r["block_x"]), float(r["gb_s"])))
    ratios = []
    for (_, _, element), points in series.items():
        n = 1 << 16
        # the benchmark's rows: one ghost cell in front, src and dst at the same offset
        k = Kernel("rows", (Field("src", element, (n + 2,)), Field("dst", element, (n + 2,))),
                   (load("src", X + 1), store("dst", X + 1)), (n, 1, 1))

        def relative_time(cells: int) -> float:
            return (sector_cost(k, "src", "load", cells, PARTIAL_SECTOR_LOAD_COST)
                    + sector_cost(k, "dst", "store", cells, PARTIAL_SECTOR_STORE_COST)) / 2

        widest, top = max(points)
        for cells, gb_s in points:
            predicted = top * relative_time(widest) / relative_time(cells)
            ratios.append(predicted / gb_s)
    mape, median = _ratio_stats(ratios)
    return MechanismCheck("partial-sector cost", SEGMENTS_FILE, len(ratios), mape, median,
                          "multi-array copies (4-38 arrays, 4 and 8 B, tall and cubic blocks of 512 threads) by "
                          "the block's row width, relative to the widest row")


def stream_check(device, params) -> MechanismCheck:
    """The overlap model on the one-cell-per-thread copy by block size and resident blocks per SM."""
    from warpspeed.kernel.description import Field, FlopCounts, Kernel, X, load, store
    from warpspeed.overlap.combine import overlap_model
    from warpspeed.predict import Predictor
    from warpspeed.validation.public_models import padding_bytes

    _, rows = _table(STREAM_FILE)
    ratios = []
    for r in rows:
        if r["sweep"] != "occupancy" or r["kind"] != "copy":
            continue
        n, threads, cap = int(r["cells"]), int(r["threads"]), int(r["blocks_per_sm_cap"])
        shared = padding_bytes(device, cap) if cap else 0
        k = Kernel("copy", (Field("a", 8, (n,)), Field("b", 8, (n,))), (load("b", X), store("a", X)), (n, 1, 1),
                   flops=FlopCounts(), dtype="float64", shared_bytes_per_block=shared)
        result = overlap_model(Predictor(k, device).predict((threads, 1, 1)), params)
        ratios.append(result.lups_per_s * 16 / (float(r["gb_s"]) * GIGA))
    mape, median = _ratio_stats(ratios)
    return MechanismCheck("overlapping blocks, block dispatch", STREAM_FILE, len(ratios), mape, median,
                          "a copy of 2^27 doubles, one cell per thread, blocks of 32-1024 threads at 1-32 "
                          "resident blocks per SM")


def kernel_transfer() -> KernelTransfer:
    """Every kernel set and check (module docstring). Needs the pystencils workloads."""
    from warpspeed.calibration.overlap_fit import leave_one_kernel_out
    from warpspeed.hardware.device import load_device
    from warpspeed.overlap.combine import combine
    from warpspeed.overlap.params import overlap_params

    device = load_device(DEVICE)
    params = overlap_params(device)
    samples = {ks.name: _samples(ks, device, params) for ks in KERNEL_SETS}
    fit, left = leave_one_kernel_out({name: [(c, m) for _, c, m in s] for name, s in samples.items()})
    by_name = {lo.kernel: lo for lo in left}
    kernels = []
    for name, s in samples.items():
        points = tuple((config, 1.0 / combine(c, params.overlap_exponent, params.miss_requests_per_cycle,
                                              params.core_exponent)[0], m) for config, c, m in s)
        lo = by_name[name]
        kernels.append(KernelAccuracy(name, points, lo.in_sample_percent, lo.left_out_percent, lo.left_out_exponent,
                                      lo.left_out_requests_per_cycle))
    checks = (segments_check(), stream_check(device, params))
    return KernelTransfer(DEVICE, params.overlap_exponent, params.miss_requests_per_cycle, fit.exponent,
                          fit.requests_per_cycle, tuple(kernels), checks)


def _config_text(config: Config) -> str:
    (bx, by, bz), (fx, fy, fz) = config
    fold = "" if (fx, fy, fz) == (1, 1, 1) else f" fold {fx}x{fy}x{fz}"
    return f"{bx}x{by}x{bz}{fold}"


def transfer_rows(t: KernelTransfer) -> list[list[str]]:
    """Terminal rows: kernel, points, MAPE, median ratio, Spearman, best share, in-sample, left out."""
    return [[k.name, str(len(k.points)), f"{k.mape_percent:.1f}", f"{k.median_ratio:.2f}", f"{k.spearman:.3f}",
             f"{100 * k.best_share:.1f} %", f"{k.in_sample_percent:.1f}", f"{k.left_out_percent:.1f}"]
            for k in t.kernels]


def transfer_caption(t: KernelTransfer) -> str:
    checks = "; ".join(f"{c.name}: {c.mape_percent:.1f} % over {c.points} points ({c.file})" for c in t.checks)
    return (f"Shipped constants: exponent {t.exponent:g}, {t.requests_per_cycle:g} requests per cycle and SM "
            f"(the fit on all six kernels: {t.fitted_exponent:g}, {t.fitted_requests_per_cycle:g}). In-sample: "
            "fitted on all six; left out: fitted on the other five. Mechanism checks: " + checks + ".")


def transfer_markdown(t: KernelTransfer) -> str:
    """The section of ``docs/accuracy.md``."""
    lines = [
        "## Kernels the model was not fitted on (H200)",
        "",
        "Six pystencils kernels timed on the same H200 (`fits/data/H200/`; the 25-point stencil in double "
        "and float, the 7-point star, the 2D 5-point star, the 27-point box, a 19-array shifted copy), each "
        "in the paper's block space and foldings. The overlap model's two fitted constants (the smooth "
        "maximum's exponent and the miss stage's request rate) are fitted on all six (in-sample) and, for "
        "each kernel, on the other five (left out): the left-out error is what to expect on a kernel "
        f"nobody fitted. Shipped: exponent {t.exponent:g}, {t.requests_per_cycle:g} requests per cycle and SM.",
        "",
        "| kernel | points | MAPE | median pred/meas | Spearman | best predicted runs at | in-sample MAPE | left-out MAPE (constants) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for k in t.kernels:
        lines.append(f"| {k.name} | {len(k.points)} | {k.mape_percent:.1f} % | {k.median_ratio:.2f} | {k.spearman:.3f} | "
                     f"{100 * k.best_share:.1f} % | {k.in_sample_percent:.1f} % | {k.left_out_percent:.1f} % "
                     f"({k.left_out_exponent:g}, {k.left_out_requests_per_cycle:g}) |")
    lines += ["", "Mechanism checks against microbenchmarks that isolate them (`benchmarks/gpu/mechanisms.py`):", "",
              "| mechanism | microbenchmark | points | MAPE | median pred/meas |", "|---|---|---:|---:|---:|"]
    for c in t.checks:
        lines.append(f"| {c.name} | {c.what} (`{c.file}`) | {c.points} | {c.mape_percent:.1f} % | {c.median_ratio:.2f} |")
    return "\n".join(lines) + "\n"


def transfer_document(t: KernelTransfer) -> dict:
    """The comparison as JSON (``warpspeed validate --json``'s ``kernel_transfer``)."""
    return {
        "device": t.device, "exponent": t.exponent, "requests_per_cycle": t.requests_per_cycle,
        "fitted_exponent": t.fitted_exponent, "fitted_requests_per_cycle": t.fitted_requests_per_cycle,
        "kernels": [{"kernel": k.name, "points": len(k.points), "mape_percent": k.mape_percent,
                     "median_ratio": k.median_ratio, "spearman": k.spearman if math.isfinite(k.spearman) else None,
                     "best_share": k.best_share, "in_sample_mape_percent": k.in_sample_percent,
                     "left_out_mape_percent": k.left_out_percent,
                     "left_out_constants": [k.left_out_exponent, k.left_out_requests_per_cycle]}
                    for k in t.kernels],
        "mechanism_checks": [{"mechanism": c.name, "file": c.file, "points": c.points, "mape_percent": c.mape_percent,
                              "median_ratio": c.median_ratio} for c in t.checks],
    }
