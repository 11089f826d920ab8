"""Time models against public measurements: the roofline, interval and pipeline rates per dataset.

Every point is a whole kernel run as the three time models of :mod:`warpspeed.models` predict it
(:func:`warpspeed.models.estimate_time` on one :class:`warpspeed.predict.Prediction`, the code
path of ``warpspeed rank --model``), against what was measured:

gpu-stream (``fits/data/public/gpu-stream/<part>.csv``, NVIDIA parts)
    the ``scale`` kernel ``a[i] = s b[i]`` (one 8 B load, one 8 B store per thread) over 128 Mi
    doubles at each measured occupancy: blocks of the row's ``threads_per_block``, two blocks
    resident per SM as the benchmark forces with shared-memory padding. GB/s = 16 B x lups/s.
gpu-roofline (``fits/data/public/gpu-roofline/<part>.csv``)
    :func:`warpspeed.power.benchmark.roofline_benchmark` with ``its`` FMAs, blocks of 256
    threads; measured GFLOP/s = lups/s x the description's flops per update (two element pairs,
    ``4 + 4 its`` flops); one point per ``its`` (the median
    over the node's GPUs), on the representative subset :data:`ROOFLINE_ITS` (the pipeline
    model's simulation grows with the loop length).
gpu-small-kernels (``fits/data/public/gpu-small-kernels/<part>.csv``)
    the scale kernel over ``elements`` doubles, 1-D blocks of the column's threads (32 and more:
    a block is at least one warp), every :data:`SMALL_KERNEL_ROW_STEP`-th row; GB/s = 16 B x lups/s.
FluidX3D (``fits/data/public/fluidx3d/d3q19.csv``)
    the published D3Q19 FP32 throughput, against the built-in pull-streaming pattern
    (:func:`warpspeed.kernel.builtin.lbm_pull`) with the 19 D3Q19 velocities in float on a
    256^3 domain with blocks of 64 threads.

A model that has no parameters for a device (the interval model needs the device file's
``[interval]`` table) is left out of that device's datasets.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np

from warpspeed.errors import WarpspeedError
from warpspeed.files.stored import stored_file
from warpspeed.hardware.device import Device, load_device
from warpspeed.calibration.launch import measured_rows, source_line
from warpspeed.kernel.builtin import lbm_pull
from warpspeed.kernel.description import Field, FlopCounts, Kernel, X, load, store
from warpspeed.models import TIME_MODELS, estimate_time
from warpspeed.measured.public_data import read_public_csv
from warpspeed.power.benchmark import BLOCK_THREADS as ROOFLINE_BLOCK_THREADS
from warpspeed.power.benchmark import roofline_benchmark
from warpspeed.calibration.power import read_runs
from warpspeed.predict import Predictor
from warpspeed.units import GIGA, MEGA
from warpspeed.validation.datasets import DatasetAccuracy, PointError, dataset as _dataset, source_of

#: Group of these datasets in the summary.
GROUP = "Time models"

#: gpu-stream parts modelled, with the built-in device of each (NVIDIA parts: the pipeline and
#: interval models describe NVIDIA SMs).
STREAM_PARTS = (("a100-40gb", "A100-SXM4-40GB"), ("a100-80gb", "A100-SXM4-80GB"), ("a40", "A40"),
                ("h100-pcie", "H100-PCIe-80GB"), ("h200", "H200"), ("l40", "L40"), ("v100", "V100-PCIe-32GB"))
#: Elements per array of the gpu-stream runs: 128 Mi doubles (the files' benchmark line).
STREAM_ELEMENTS = 2**27
#: Blocks resident per SM in the gpu-stream runs (the files' ``blocks_per_sm`` header).
STREAM_BLOCKS_PER_SM = 2
#: Bytes the scale kernel moves per element: one 8 B load and one 8 B store.
SCALE_BYTES = 16
#: gpu-roofline parts and their built-in devices (the H200 file is held out).
ROOFLINE_PARTS = (("a100-40", "A100-SXM4-40GB"), ("a40", "A40"), ("l40", "L40"))
#: Inner-loop FMA counts compared, present in every gpu-roofline file: the DRAM-bound start, the
#: bend between DRAM and FP (48-160 FMAs on these parts) and the FP-bound tail. A subset, because
#: the pipeline model simulates every FMA of the loop (about 3 s per point at 256 FMAs).
ROOFLINE_ITS = (0, 24, 56, 96, 128, 160, 256)
#: gpu-small-kernels parts and their built-in devices.
SMALL_KERNEL_PARTS = (("a100-80", "A100-SXM4-80GB"), ("a40", "A40"), ("h200", "H200"), ("l40", "L40"))
#: Every this many rows of a gpu-small-kernels file is compared (the rows grow by 8 % in the
#: element count; every fourth row still covers the whole sweep, 4 Ki to 256 Mi elements).
SMALL_KERNEL_ROW_STEP = 4
#: Smallest block compared: one warp (CUDA C++ Programming Guide, "SIMT Architecture": 32 threads).
MIN_BLOCK_THREADS = 32
#: The published FluidX3D figures, relative to the installed ``warpspeed.fits`` data.
FLUIDX3D_FILE = ("public", "fluidx3d", "d3q19.csv")
#: Repository of the FluidX3D figures.
FLUIDX3D_REPOSITORY = "ProjectPhysX/FluidX3D"
#: Lattice velocities of D3Q19 (rest, 6 faces, 12 edges): Qian, d'Humieres, Lallemand, "Lattice
#: BGK Models for Navier-Stokes Equation", Europhysics Letters 17(6), 479-484, 1992.
D3Q19_VELOCITIES: tuple[tuple[int, int, int], ...] = (
    (0, 0, 0),
    (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1),
    (1, 1, 0), (-1, -1, 0), (1, 0, 1), (-1, 0, -1), (0, 1, 1), (0, -1, -1),
    (1, -1, 0), (-1, 1, 0), (1, 0, -1), (-1, 0, 1), (0, 1, -1), (0, -1, 1),
)
#: FluidX3D's benchmark box, cells per edge (README: "typically 256^3").
FLUIDX3D_EDGE = 256
#: FluidX3D's work-group size (src/opencl.hpp, ``WORKGROUP_SIZE``).
FLUIDX3D_BLOCK_THREADS = 64
#: Bytes per float (IEEE 754-2008 binary32).
FLOAT_BYTES = 4

# --- bounds (percent): (MAPE, worst point) per dataset kind and model ---------------------------
#: gpu-stream scale: the roofline takes each device's Little's-law DRAM curve, fitted to these
#: sweeps (1.8-3.8 % today; worst -16 %, H100 PCIe at 32 threads per block); the pipeline model
#: follows the roofline's DRAM floor and adds the memory latency (1.9-4.4 %, worst -20.4 %, H200 at
#: 32 threads: the latency of the GH100's pointer chase, 374.5 ns, where it took the A100's
#: 551 cycles until every model read the device's one latency record); the
#: interval model charges every warp its memory latency and is low at low occupancy (5.2-23.8 %,
#: worst -35.7 %, H200 at 32 threads). The bounds leave a quarter to a third of headroom.
#: gpu-roofline: the roofline and pipeline model over-predict the FP-bound tail of the A40 and
#: L40 (GA102 and AD102 share half their FP32 lanes with integer work; the runs also clock below
#: the device files' clocks under load): 6.7-16.0 %, worst +68.8 % (A40, 256 FMAs); the interval
#: model is low at the DRAM-to-FP bend (7.1-21.4 %, worst -39.2 %, A100 at 56 FMAs).
#: gpu-small-kernels: the roofline and the pipeline model have no launch cost and predict a
#: DRAM or L2 rate for launches that take microseconds (roofline 60-168 %, pipeline 38-118 %,
#: worst +407 %); the interval model's launch cost was fitted to the A100, H200 and L40 rows of
#: less than 4 MiB, so these rows are partly in-sample (15.7-31.5 %, worst -82 %, L40 2.8 M
#: elements where the measured rate jumps between the L2 and DRAM).
#: FluidX3D: every model is DRAM-bound on this pattern (9.6 %); the L40 and L40S reach 69 % of
#: their peak DRAM bandwidth in FluidX3D, less than in gpu-stream (worst +27.8 %, L40S).
#: The overlap model is the roofline's volumes with the L1's miss costs, the wave-end latency, the
#: smooth maximum of the L1 and DRAM times, the partial-sector DRAM cost, the DRAM curve's knee by
#: resident blocks, block dispatch and launch overhead: on gpu-stream it is 2.5-7.3 % (worst -19.8 %,
#: H200 at 32 threads, where the wave-end latency adds to the curve's own), on gpu-roofline as the
#: roofline, on small kernels 7.6-30.2 % (worst -82 %, the L40's L2-resident arrays; the launch fit
#: shares the A100, H200 and L40 rows below 4 MiB; the A40 borrows the median overhead: 18 %).
#: On FluidX3D the overlap model is DRAM-bound at the curve's peak B and low on both GH100 parts
#: (12.4 %; H200 -27.5 %, H100 PCIe -17.0 %): the H100 PCIe's own curve, fitted to its gpu-stream
#: stencil1d3pt sweep (gpu-benches gpu-stream/h100_pcie.txt), peaks at 1803 GB/s, below its 1832 GB/s
#: triad, where the H200's curve shape it borrowed before peaked at 1978 GB/s (-9.0 %). Its MAPE
#: bound is 13 %, a point above the other models', until the overlap model's Hopper DRAM rate on
#: many-stream kernels is understood.
BOUNDS: dict[tuple[str, str], tuple[float, float]] = {
    ("stream", "roofline"): (6.0, 20.0), ("stream", "interval"): (30.0, 45.0),
    ("stream", "pipeline"): (6.0, 25.0),
    ("roofline", "roofline"): (20.0, 80.0), ("roofline", "interval"): (35.0, 55.0),
    ("roofline", "pipeline"): (20.0, 80.0),
    ("small", "roofline"): (200.0, 450.0), ("small", "interval"): (40.0, 95.0),
    ("small", "pipeline"): (140.0, 450.0),
    ("fluidx3d", "roofline"): (12.0, 35.0), ("fluidx3d", "interval"): (12.0, 35.0),
    ("fluidx3d", "pipeline"): (12.0, 35.0),
    ("stream", "overlap"): (8.0, 25.0), ("roofline", "overlap"): (20.0, 80.0),
    ("small", "overlap"): (40.0, 95.0), ("fluidx3d", "overlap"): (13.0, 35.0),
}


@dataclass(frozen=True)
class Case:
    """One measured point to predict: the kernel, the device, the block (threads x, y, z), the
    measured value and ``per_lups``: the measured unit per lattice update per second."""

    label: str
    kernel: Kernel
    device: Device
    block: tuple[int, int, int]
    measured: float
    per_lups: float


def model_points(cases: Sequence[Case], models: Sequence[str] = TIME_MODELS) -> dict[str, list[PointError]]:
    """Per model, the predicted against the measured value of every case; a model that fails on a
    case's device (no parameters) gets no points for any case of that device. One Predictor per
    distinct (kernel, device): cases that share a kernel share its prediction set-up."""
    predictors: dict[tuple[int, str], Predictor] = {}
    failed: set[tuple[str, str]] = set()
    found: dict[str, list[tuple[str, PointError]]] = {m: [] for m in models}
    for case in cases:
        key = (id(case.kernel), case.device.name)
        if key not in predictors:
            predictors[key] = Predictor(case.kernel, case.device)
        prediction = predictors[key].predict(case.block)
        for model in models:
            if (model, case.device.name) in failed:
                continue
            try:
                estimate = estimate_time(model, prediction)
            except WarpspeedError:
                failed.add((model, case.device.name))
                continue
            point = PointError(case.label, estimate.lups_per_s * case.per_lups, case.measured)
            found[model].append((case.device.name, point))
    return {m: [p for device, p in pts if (m, device) not in failed] for m, pts in found.items()}


def _scale_kernel(elements: int, shared_bytes: int = 0) -> Kernel:
    """``a[i] = s b[i]`` over ``elements`` doubles (one multiply per element)."""
    shape = (elements,)
    return Kernel(name="scale", fields=(Field("a", 8, shape), Field("b", 8, shape)),
                  accesses=(load("b", X), store("a", X)), domain=(elements, 1, 1),
                  flops=FlopCounts(muls=1), dtype="float64", shared_bytes_per_block=shared_bytes)


def padding_bytes(device: Device, blocks_per_sm: int) -> int:
    """Shared memory per block that lets exactly ``blocks_per_sm`` blocks reside on an SM: more
    than 1 / (blocks_per_sm + 1) of the SM's shared memory, in allocation units."""
    unit = device.shared_alloc_unit_bytes
    return (device.shared_bytes_per_sm // (blocks_per_sm + 1) // unit + 1) * unit


def _datasets(kind: str, title: str, unit: str, cases_by_device: Sequence[tuple[str, list[Case]]],
              sources: list[tuple[str, str]], note: str) -> list[DatasetAccuracy]:
    out = []
    for device_name, cases in cases_by_device:
        for model, points in model_points(cases).items():
            if points:
                out.append(_dataset(GROUP, f"{model}: {title}, {device_name}", unit, points, sources, note,
                                    BOUNDS[(kind, model)]))
    return out


def stream_datasets() -> list[DatasetAccuracy]:
    """The scale kernel at every measured occupancy of each NVIDIA gpu-stream part."""
    out: list[DatasetAccuracy] = []
    for part, device_name in STREAM_PARTS:
        f = read_public_csv("gpu-stream", part)
        device = load_device(device_name)
        kernel = _scale_kernel(STREAM_ELEMENTS, padding_bytes(device, STREAM_BLOCKS_PER_SM))
        cases = [Case(f"{int(t)} threads/block", kernel, device, (int(t), 1, 1), float(bw), SCALE_BYTES / GIGA)
                 for t, bw in zip(f.column("threads_per_block"), f.column("scale"))]
        out += _datasets("stream", "gpu-stream scale", "GB/s", [(device_name, cases)], [source_of(f.source)],
                         f"{len(cases)} occupancies, 2 blocks per SM")
    return _by_model(out)


def _rows(path) -> tuple[str, list[dict[str, str]]]:
    lines = path.read_text().splitlines()
    header = " ".join(line.lstrip("# ") for line in lines if line.startswith("#"))
    return header, list(csv.DictReader(line for line in lines if line and not line.startswith("#")))


def _public(*parts: str):
    return stored_file("public", *parts)


def roofline_datasets() -> list[DatasetAccuracy]:
    """The gpu-roofline kernel at :data:`ROOFLINE_ITS` FMAs per update on each part."""
    out: list[DatasetAccuracy] = []
    kernels = {its: roofline_benchmark(its) for its in ROOFLINE_ITS}
    for part, device_name in ROOFLINE_PARTS:
        path = _public("gpu-roofline", f"{part}.csv")
        by_its: dict[int, list[float]] = {}
        for run in read_runs(path):
            by_its.setdefault(run.its, []).append(run.gflop_s)
        measured = {its: float(np.median(v)) for its, v in by_its.items()}
        device = load_device(device_name)
        cases = [Case(f"{its} FMAs", kernels[its], device, (ROOFLINE_BLOCK_THREADS, 1, 1), measured[its],
                      kernels[its].flops.flops / GIGA) for its in ROOFLINE_ITS]
        out += _datasets("roofline", "gpu-roofline", "GFLOP/s", [(device_name, cases)],
                         [source_of(path.read_text().splitlines()[0])],
                         f"{len(cases)} loop lengths, median over the node's GPUs")
    return _by_model(out)


def small_kernel_datasets() -> list[DatasetAccuracy]:
    """Every :data:`SMALL_KERNEL_ROW_STEP`-th row of each gpu-small-kernels file, blocks of 32+ threads."""
    out: list[DatasetAccuracy] = []
    for part, device_name in SMALL_KERNEL_PARTS:
        rows = measured_rows(part)
        kept = set(list(dict.fromkeys(r.elements for r in rows))[::SMALL_KERNEL_ROW_STEP])
        device = load_device(device_name)
        kernels = {n: _scale_kernel(n) for n in sorted(kept)}
        cases = [Case(f"{r.elements} elements, {r.block_threads} threads", kernels[r.elements], device,
                      (r.block_threads, 1, 1), r.volume / r.seconds / GIGA, SCALE_BYTES / GIGA)
                 for r in rows if r.elements in kept and r.block_threads >= MIN_BLOCK_THREADS]
        out += _datasets("small", "gpu-small-kernels", "GB/s", [(device_name, cases)], [source_of(source_line(part))],
                         f"every {SMALL_KERNEL_ROW_STEP}th element count, blocks of {MIN_BLOCK_THREADS} "
                         f"threads and more")
    return _by_model(out)


def fluidx3d_datasets() -> list[DatasetAccuracy]:
    """FluidX3D's published D3Q19 FP32 throughput against the D3Q19 pull pattern, per device."""
    header, rows = _rows(stored_file(*FLUIDX3D_FILE))
    edge = FLUIDX3D_EDGE
    kernel = lbm_pull(D3Q19_VELOCITIES, (edge, edge, edge), FLOAT_BYTES, name="d3q19_pull")
    cases = [Case(row["device"], kernel, load_device(row["device"]), (FLUIDX3D_BLOCK_THREADS, 1, 1),
                  float(row["mlups"]), 1 / MEGA) for row in rows]
    commit = header.split("commit ", 1)[1].split(",", 1)[0]
    # one dataset per model over the devices every model can predict
    points = model_points(cases)
    common = set.intersection(*({p.label for p in pts} for pts in points.values()))
    out = []
    for model in TIME_MODELS:
        kept = [p for p in points[model] if p.label in common]
        ds = _dataset(GROUP, f"{model}: FluidX3D D3Q19 FP32", "MLUP/s", kept, [("README.md", commit)],
                      f"{len(kept)} devices; the pattern of D3Q19 pull streaming in float, {edge}^3 cells, "
                      f"blocks of {FLUIDX3D_BLOCK_THREADS}", BOUNDS[("fluidx3d", model)])
        out.append(replace(ds, repository=FLUIDX3D_REPOSITORY))
    return out


def _by_model(datasets: list[DatasetAccuracy]) -> list[DatasetAccuracy]:
    """Datasets ordered by model (roofline, interval, pipeline), then as given."""
    order: Callable[[DatasetAccuracy], int] = lambda ds: TIME_MODELS.index(ds.name.split(":", 1)[0])
    return sorted(datasets, key=order)


def time_model_datasets() -> tuple[DatasetAccuracy, ...]:
    """Every time-model dataset: gpu-stream, gpu-roofline, gpu-small-kernels, FluidX3D."""
    return tuple(stream_datasets() + roofline_datasets() + small_kernel_datasets() + fluidx3d_datasets())


__all__ = ["BOUNDS", "Case", "GROUP", "model_points", "padding_bytes", "time_model_datasets"]
