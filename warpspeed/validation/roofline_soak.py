"""Measuring the power-fit benchmark on a GPU at hand: runs that ``warpspeed power-fit`` reads.

``warpspeed power-fit`` fits a power family to runs of one kernel: the float streaming kernel of
:mod:`warpspeed.power.benchmark` (gpu-benches' ``gpu-roofline``, D. Ernst, GPU
microbenchmarks, https://github.com/te42kyfo/gpu-benches), whose inner loop of ``its`` fused
multiply-adds per element pair sets the mix of FP32 and DRAM activity
(:func:`warpspeed.calibration.power.read_runs`: columns ``its``, ``clock_mhz``, ``watts`` and
``gflop_s``). A stencil's power soak (``warpspeed measure --power``) is another kernel, so it
cannot be such a run; this module gives the benchmark itself, written here from that description
(not the benchmark's source): :func:`cuda_source` is the kernel for one ``its``, :func:`grid_blocks` its
one full-occupancy wave, and :func:`run_record` turns launches, GPU seconds and a power reading
into a row of :data:`RUN_COLUMNS`, the columns of ``fits/data/public/gpu-roofline/*.csv``.
``benchmarks/gpu/roofline_power.py`` runs it with cupy and nvidia-smi.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from warpspeed.files.atomic import atomic_output
from warpspeed.power.benchmark import BLOCK_THREADS, BYTES_PER_UPDATE, PAIRS_PER_UPDATE, roofline_benchmark
from warpspeed.units import GIGA
from warpspeed.validation.plan import MeasurementError
from warpspeed.validation.power_sampling import PowerReading

#: Rows of each block's chunk (``M`` of the benchmark: 256 x 4000 elements of each array per block).
ROWS_PER_BLOCK = 4000
#: Inner-loop lengths of a sweep: memory-bound (0) through the balance point of an H100/H200
#: (FP32 ~ 60 TFLOP/s over ~ 3-4 TB/s: about 2 its flops per 8 bytes -> its ~ 50) to FP-bound.
DEFAULT_ITS: tuple[int, ...] = (0, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256)
#: Columns of a run (those of ``fits/data/public/gpu-roofline/*.csv`` without the temperature).
RUN_COLUMNS: tuple[str, ...] = ("gpu", "blocks", "its", "flop_per_byte", "gb_s", "gflop_s", "clock_mhz", "watts")
#: Element values of the two arrays: the chain ``v = v a - b`` stays finite and exact for any ``its``
#: (with a = 1 it only subtracts b).
FILL_A, FILL_B = 1.0, 0.5


def function_name(its: int) -> str:
    """The CUDA function of the kernel with ``its`` fused multiply-adds per pair."""
    return f"ws_roofline_its{its}"


def cuda_source(its: int) -> str:
    """The benchmark kernel for ``its`` (see the module docstring): each block of
    :data:`~warpspeed.power.benchmark.BLOCK_THREADS` threads walks its own chunk of
    :data:`ROWS_PER_BLOCK` rows of both arrays; a loop trip loads two element pairs of the
    thread's column, 256 elements apart, computes ``v = a - b`` and ``its`` times ``v = v a - b``
    per pair, and adds both to a running sum; one value per block may be stored."""
    if its < 0:
        raise MeasurementError(f"the inner loop needs its >= 0 fused multiply-adds, got {its}")
    return f"""
extern "C" __global__ void {function_name(its)}(const float* __restrict__ a, const float* __restrict__ b,
                                                  float* __restrict__ out) {{
    const long long chunk = (long long)blockIdx.x * {BLOCK_THREADS} * {ROWS_PER_BLOCK} + threadIdx.x;
    const float* pa = a + chunk;
    const float* pb = b + chunk;
    float sum = 0.0f;
#pragma unroll 1
    for (int row = 0; row < {ROWS_PER_BLOCK}; row += 2) {{
        const float a0 = pa[row * {BLOCK_THREADS}], b0 = pb[row * {BLOCK_THREADS}];
        const float a1 = pa[(row + 1) * {BLOCK_THREADS}], b1 = pb[(row + 1) * {BLOCK_THREADS}];
        float v0 = a0 - b0, v1 = a1 - b1;
#pragma unroll
        for (int k = 0; k < {its}; k++) {{
            v0 = v0 * a0 - b0;
            v1 = v1 * a1 - b1;
        }}
        sum += v0;
        sum += v1;
    }}
    if (sum == 123456.0f) out[blockIdx.x] = sum;  /* never true: keeps the loop, stores nothing */
}}
"""


def grid_blocks(sms: int, blocks_per_sm: int) -> int:
    """Blocks of one full-occupancy wave."""
    if sms < 1 or blocks_per_sm < 1:
        raise MeasurementError(f"a wave needs >= 1 SM and >= 1 block per SM, got {sms} and {blocks_per_sm}")
    return sms * blocks_per_sm


def array_elements(blocks: int) -> int:
    """Elements of each array for ``blocks`` blocks."""
    return blocks * BLOCK_THREADS * ROWS_PER_BLOCK


def updates_per_launch(blocks: int) -> int:
    """Updates (loop trips of a thread, :mod:`warpspeed.power.benchmark`) of one launch."""
    return array_elements(blocks) // PAIRS_PER_UPDATE


def run_record(gpu: str, its: int, blocks: int, launches: int, seconds: float, reading: PowerReading) -> dict[str, Any]:
    """One run: ``launches`` launches of ``blocks`` blocks in ``seconds`` GPU seconds, with the
    median board power and SM clock sampled meanwhile; GFLOP/s with the flops of the description
    (so :func:`warpspeed.calibration.power.measured_lups_per_s` gives back updates per second)."""
    if launches < 1 or not seconds > 0:
        raise MeasurementError(f"a run needs >= 1 launch and positive seconds, got {launches} and {seconds}")
    flops = roofline_benchmark(its).flops.flops
    updates_per_s = launches * updates_per_launch(blocks) / seconds
    return {"gpu": gpu, "blocks": blocks, "its": its, "flop_per_byte": flops / BYTES_PER_UPDATE,
            "gb_s": updates_per_s * BYTES_PER_UPDATE / GIGA, "gflop_s": updates_per_s * flops / GIGA,
            "clock_mhz": reading.sm_clock_mhz, "watts": reading.watts}


def write_runs(path: str | Path, rows: Iterable[Mapping[str, Any]], comments: Sequence[str] = ()) -> Path:
    """Write runs as a CSV ``warpspeed power-fit`` reads (``# comment`` lines, then :data:`RUN_COLUMNS`)."""
    p = Path(path)
    with atomic_output(p, "w", newline="") as fh:
        for line in comments:
            fh.write(f"# {line}\n")
        writer = csv.DictWriter(fh, RUN_COLUMNS, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: row[k] for k in RUN_COLUMNS})
    return p
