"""``docs/accuracy.md``: the accuracy against the stored public measurements as Markdown.

:func:`accuracy_markdown` turns the datasets of :func:`warpspeed.validation.public.public_accuracy`
into the page that ``warpspeed validate --write-docs`` writes. The text depends only on the stored
data and the model (numbers rounded to two decimals), so a test can compare the committed page
with a fresh one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from collections.abc import Sequence

from warpspeed.validation.datasets import DatasetAccuracy
from warpspeed.validation.real_gpu import RealGpuAccuracy, real_gpu_markdown

if TYPE_CHECKING:
    from warpspeed.validation.kernel_transfer import KernelTransfer
from warpspeed.validation.transfer_report import transfer_markdown

#: Path of the page, relative to the repository root.
DOCS_PATH = "docs/accuracy.md"
#: Datasets with at most this many points list every point.
LIST_POINTS_UP_TO = 12

_GROUPS = {
    "L1": ("L1: strided loads and 2-D blocks (gpu-strides)",
           "Measured on an NVIDIA A100: one thread block of 1024 threads runs a loop of 8 loads per "
           "iteration from one array, thread `t` reading `base(t) + 4 k` elements (`k = 0..7`); per warp-level "
           "load instruction the file gives the SM cycles and two L1TEX counters. The model runs each row's "
           "loop body as a kernel (`warpspeed/validation/strides.py`) through its L1 stage "
           "(`warpspeed/memory/l1.py`): per instruction the larger of the data-pipe wavefronts (32 banks of "
           "4 B) and the tag-stage wavefronts (`max(1, 0.46 + 0.28 L)` for `L` distinct 128 B lines, at least "
           "two on GA102 and AD102, whose load/store units take 16 threads per cycle). The loop's 4 fused "
           "multiply-adds per 8 loads bound the cycles from below by the device's FP rate: 0.5 cycles "
           "per double warp load on the A100 and 4 on the RX 6900 XT (4 FP64 lanes per CU), which "
           "no row's L1 cost undercuts, 8 on the A40 and L40 (2 FP64 lanes per SM). The benchmark counts "
           "cycles per load of 32 threads on every GPU, so the model's cost of a wave64 load counts as two. "
           "The RX 6900 XT and MI210 (float rows only) were measured the same way; their first levels "
           "(RDNA's L0, CDNA's banked vector L1) are described in `docs/amd.md`."),
    "L1 bandwidth": ("L1 bandwidth per SM and cycle (gpu-cache)",
                     "Each file gives the bandwidth of one block of 256 threads per SM re-reading, with "
                     "contiguous loads, a buffer that fits the L1. The measured L1 bytes per cycle and SM "
                     "are the plateau (`warpspeed/measured/sustained.py`) divided by SMs x clock of the device "
                     "file; the model is the element size divided by the L1 cycles per thread of a "
                     "contiguous load (`warpspeed/validation/public_l1.py`). It checks each NVIDIA "
                     "family's data-pipe width and load/store threads per cycle, and on CDNA (16 B "
                     "loads) the vector L1's documented 64 B per clock for a coalesced run of lanes "
                     "(no fitted constant)."),
    "DRAM": ("DRAM: stream bandwidth against occupancy (gpu-stream)",
             "Each file gives, for increasing numbers of resident threads, the bandwidth of streaming "
             "kernels (init, read, scale, triad and, where measured, 1-D stencils). The model is each "
             "built-in device's achievable DRAM bandwidth (`warpspeed/memory/dram_bandwidth.py`): the "
             "device file's Little's-law curve at `Q` = resident threads x bytes the kernel moves per thread "
             "(scale and stencil1d3pt 16 B, triad 24 B), at most the file's sustained DRAM bandwidth."),
    "L2": ("L2: capacity and bandwidth (gpu-l2-cache)",
           "Each file gives the bandwidth of a read-only sum over a data set that all SMs re-read at full "
           "occupancy, against the size of the data set. `warpspeed/measured/sustained.py` reads off the L2 "
           "plateau and the onset of its fall; the comparison is with the L2 bandwidth and effective L2 "
           "capacity that the device files (`warpspeed/hardware/devices/*.toml`) hold for the devices "
           "measured as that part."),
    "Latency": ("Latency: pointer chase per level (gpu-latency)",
                "Each file gives the load-to-use latency of one block of 64 threads chasing pointers through a "
                "randomly permuted buffer, against the buffer's size. `warpspeed/measured/sustained.py` reads the "
                "L1, L2 and DRAM levels off it (the median inside each level); the comparison is with the latency "
                "record every model reads (`warpspeed/hardware/memory_latency.py`) of the devices measured as that "
                "part, in nanoseconds at the device's clock. Most device files hold the pointer chase itself; the "
                "A100 parts keep the Ampere latency file's cycles (AMALI, ISCA 2025, Table 2), with which the "
                "launch cost was fitted (`warpspeed/validation/public_latency.py`)."),
    "Power": ("Power: board power of a streaming kernel with growing arithmetic intensity (gpu-roofline)",
              "Each file gives, for every GPU of a node, the board power, SM clock and achieved GFLOP/s of a float "
              "streaming kernel whose inner loop of fused multiply-adds grows from 0 to several hundred. The "
              "model is the power model (`warpspeed/power/`) with the built-in family of the part's device, at "
              "each run's clock and measured rate; the families were fitted to these runs "
              "(`warpspeed power-fit`, `docs/power.md`), so the errors are in-sample. The transfer row is out of "
              "sample: the L40 against the family that the rules building the Hopper family from published "
              "facts (`warpspeed/power/transfer.py`) give from the A100's; it estimates the error on a chip "
              "without measurements."),
    "Time models": ("Time models: overlap, roofline, interval and pipeline on whole kernels",
                    "Each point is a whole kernel predicted by the time models of `warpspeed rank --model` "
                    "(`warpspeed/validation/public_models.py`), one dataset per model and device: "
                    "**gpu-stream** the scale kernel (8 B load, 8 B store per thread, 128 Mi doubles) at every "
                    "measured block size with two blocks per SM; **gpu-roofline** the float streaming kernel "
                    "(`warpspeed/power/benchmark.py`) with 0 to 256 FMAs per element pair, on the representative "
                    "loop lengths 0, 24, 56, 96, 128, 160 and 256 (the pipeline model simulates every FMA), "
                    "measured GFLOP/s the median over the node's GPUs; **gpu-small-kernels** the scale kernel "
                    "launched back to back on 4 Ki to 256 Mi elements, every fourth element count, blocks of "
                    "32 to 1024 threads; **FluidX3D** the published D3Q19 FP32/FP32 throughput (M. Lehmann, "
                    "FluidX3D, README benchmark table) against the pull-streaming pattern of the 19 D3Q19 "
                    "velocities in float on 256^3 cells, blocks of 64 threads. The pattern has FluidX3D's "
                    "152 B of populations per cell but two arrays instead of its in-place Esoteric-Pull "
                    "streaming, no flag byte and no collision flops; FluidX3D is DRAM-bound (2.37 flops per "
                    "byte), so the rate is set by the traffic. The interval model has parameters for the "
                    "A100, H100, H200, L40 and L40S only: it has no A40 or V100 datasets, and the FluidX3D "
                    "comparison keeps the devices every model predicts. The interval model's launch cost "
                    "was fitted to the A100, H200 and L40 gpu-small-kernels rows below 4 MiB, so those are "
                    "partly in-sample; the roofline's DRAM curve was fitted to the gpu-stream sweeps."),
}

_INTRO = """\
# Accuracy against measurements

<!-- Generated by `warpspeed validate --write-docs`. Do not edit: the test suite checks that this
file is exactly what the command writes. -->

This page is generated by `warpspeed validate`. It predicts the paper's own workload, measured on
a real GPU (an NVIDIA H200, `fits/data/H200/`), with every time model, and runs every stored public
microbenchmark measurement through the model and compares. The measurements were taken with Dominik Ernst's
open-source GPU microbenchmarks (repository [te42kyfo/gpu-benches](https://github.com/te42kyfo/gpu-benches),
GPL-3.0), the benchmarks behind Ernst, Holzer, Hager, Knorr, Wellein: "Analytical Performance
Estimation during Code Generation on Modern GPUs", Journal of Parallel and Distributed Computing,
2023. The whole-kernel comparison of the time models also uses the D3Q19 throughput that Moritz
Lehmann publishes for FluidX3D (repository [ProjectPhysX/FluidX3D](https://github.com/ProjectPhysX/FluidX3D),
README, "Single-GPU/CPU Benchmarks"). Only the measured numbers are stored, under
`fits/data/public/`; each dataset below names the file and commit it was transcribed from.

Errors are `100 (model - measured) / measured`; MAPE is the mean of their absolute values; the
worst point is the one with the largest absolute error. Each dataset has a stated bound on the
MAPE and on the worst point (constants in `warpspeed/validation/public.py` and, for the time
models, `warpspeed/validation/public_models.py`, with the reason for each); the test suite fails
when a dataset exceeds one.
"""

_NOT_VALIDATED = """\
## What is not validated

* **Whole kernels on one real GPU only.** The one stored measurement of a complete stencil kernel
  is the 25-point stencil on an H200 (section "Real GPU"); the overlap model's exponent and
  request rate, the H200's L2 capacity of the layer conditions and the Hopper power family's
  process factor were fitted on it, so its figures there are in-sample. No other GPU has a
  whole-stencil measurement; the other whole kernels above are streaming kernels, the
  gpu-roofline kernel and FluidX3D's published D3Q19 rate (its throughput only, no volumes).
  `warpspeed measure` and `warpspeed accuracy` compare more on a machine with a GPU (see
  `docs/validation.md`).
* **In-sample numbers.** The L1 tag-stage constants were fitted to the A100 gpu-strides cycles,
  and each device's DRAM curve to its "fitted" stream kernel; those errors say how well the
  model's form fits, not how it predicts. The data-pipe rule has no fitted constant, and the
  "not fitted" stream kernels were left out of the fit. The 16 threads per cycle of the GA102
  and AD102 load/store units are documented, but the A40 and L40 gpu-cache plateaus were the
  evidence for applying them, so the L1 bandwidth dataset is a consistency check.
* **Power mostly in-sample.** The calibrated power families were fitted to the gpu-roofline runs
  they are compared with here, and the Hopper family's process factor to the two H200 soaks; the
  transfer row (the L40 from the A100's family by the same rules and factor) is out of sample,
  and only at clocks where the unmeasured voltage floor cannot matter.
* **Held-out measurements.** The gpu-benches repository also holds gpu-strides measurements of
  the H200 and A40, the double rows of the MI210's (whose float rows are used above), and a
  gpu-roofline measurement of the H200, and LBM kernels were measured on the H200. They are kept
  for an independent validation and were not opened, neither to build nor to tune the model.
"""


def _num(value: float) -> str:
    return f"{value:.2f}"


def _pct(value: float) -> str:
    """Signed percentage to two decimals; values that round to zero print as +0.00."""
    return f"{0.0 if round(value, 2) == 0 else value:+.2f} %"


def _source_line(ds: DatasetAccuracy) -> str:
    files = "; ".join(f"path `{path}`, commit `{commit}`" for path, commit in ds.sources)
    return f"Source: repository {ds.repository}, {files}."


def summary_rows(datasets: Sequence[DatasetAccuracy]) -> list[list[str]]:
    """Rows (group, dataset, points, MAPE %, worst %, worst point, bounds, within) of the summary."""
    return [[ds.group, ds.name, str(len(ds.points)), f"{ds.mape_percent:.2f}", _pct(ds.worst.error_percent),
             ds.worst.label, f"{ds.mape_bound_percent:g} / {ds.worst_bound_percent:g}",
             "yes" if ds.within_bounds else "NO"] for ds in datasets]


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    right = [all(c == "—" or c.replace(".", "").replace(" %", "").lstrip("+-").isdigit() for c in col)
             for col in zip(*rows)]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if r else "---" for r in right) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _dataset_section(ds: DatasetAccuracy) -> list[str]:
    w = ds.worst
    out = [f"### {ds.name}", "",
           f"{len(ds.points)} points ({ds.note}). MAPE {ds.mape_percent:.2f} % (bound {ds.mape_bound_percent:g} %); "
           f"worst {_pct(w.error_percent)} at {w.label}: model {_num(w.predicted)}, measured {_num(w.measured)} "
           f"{ds.unit} (bound {ds.worst_bound_percent:g} %).", "", _source_line(ds), ""]
    if len(ds.points) <= LIST_POINTS_UP_TO:
        out += _table(("point", f"model [{ds.unit}]", f"measured [{ds.unit}]", "error"),
                      [[p.label, _num(p.predicted), _num(p.measured), _pct(p.error_percent)] for p in ds.points])
        out.append("")
    return out


def time_model_rows(datasets: Sequence[DatasetAccuracy]) -> list[list[str]]:
    """MAPE % per model (columns: :data:`warpspeed.models.TIME_MODELS`) per measured dataset (rows) of the
    "Time models" group; a dash where the model has no parameters for the device."""
    from warpspeed.models import TIME_MODELS

    table: dict[str, dict[str, float]] = {}
    for ds in datasets:
        if ds.group == "Time models":
            model, what = ds.name.split(": ", 1)
            table.setdefault(what, {})[model] = ds.mape_percent
    return [[what, *(f"{by_model[m]:.1f}" if m in by_model else "—" for m in TIME_MODELS)]
            for what, by_model in table.items()]


def accuracy_markdown(datasets: Sequence[DatasetAccuracy], real: RealGpuAccuracy | None = None,
                      kernels: "KernelTransfer | None" = None) -> str:
    """The whole page (Markdown, ending in one newline); ``real``: the section on the real GPU's
    measurements (:mod:`warpspeed.validation.real_gpu`), when they could be predicted; ``kernels``:
    the kernels the model was not fitted on (:mod:`warpspeed.validation.kernel_transfer`)."""
    from warpspeed.validation.kernel_transfer import transfer_markdown as kernels_markdown

    lines = [_INTRO]
    if real is not None:
        lines += [real_gpu_markdown(real)]
    if kernels is not None:
        lines += [kernels_markdown(kernels)]
    lines += ["## Summary", ""]
    lines += _table(("group", "dataset", "points", "MAPE %", "worst", "worst point", "bound MAPE / worst %",
                     "within"), summary_rows(datasets))
    lines.append("")
    for group, (title, text) in _GROUPS.items():
        members = [ds for ds in datasets if ds.group == group]
        if not members:
            continue
        lines += [f"## {title}", "", text, ""]
        if group == "Time models":
            from warpspeed.models import TIME_MODELS

            lines += ["MAPE % per model:", ""]
            lines += _table(("dataset", *TIME_MODELS), time_model_rows(members))
            lines.append("")
        for ds in members:
            lines += _dataset_section(ds)
    lines.append(transfer_markdown(datasets, real))
    lines.append(_NOT_VALIDATED)
    return "\n".join(lines).rstrip("\n") + "\n"
