"""The L1 model on the gpu-strides microbenchmark: per-row predictions and their error.

The benchmark ``gpu-strides`` of the gpu-benches collection (Dominik Ernst,
https://github.com/te42kyfo/gpu-benches) runs one thread block of 1024 threads whose loop issues
8 loads per iteration from one array; thread ``t`` reads ``base(t) + 4 k`` elements for
``k = 0..7``. Two families of rows:

* ``stride``: block ``(1024, 1, 1)``, ``base(t) = (t mod 64) * arg`` elements;
* ``block``: block ``(arg, 1024 / arg, 1)``,
  ``base(tx, ty) = (tx mod 64) + ((ty mod 32) + 1) * pitch`` elements.

The loop body also multiplies the loads pairwise into a running sum: ``sum += A[0] * A[4]`` and
three more, 4 fused multiply-adds per 8 loads (``gpu-strides/main.cu``; nvcc emits 8 ``LDG`` and
4 ``FFMA`` or ``DFMA`` per iteration). They bound the cycles from below wherever the SM's FP
rate is low: 4 FMAs x 32 lanes / 2 FP64 lanes per SM / 8 loads = 8 cycles per double warp load
on GA102 and AD102 (CUDA C++ Programming Guide, arithmetic instruction throughput, compute
capability 8.6 and 8.9: 2 FP64 results per clock and SM), 0.5 on the A100 (32 lanes), below
every L1 cost there.

Each row gives, per load instruction of 32 threads (the benchmark normalizes to 32 threads on
every GPU: a wave64 load of CDNA is two such loads, a warp or wave32 load one), the measured SM
cycles and the L1TEX counters ``l1tex__data_pipe_lsu_wavefronts`` (data pipe) and
``l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld`` (tag stage). :func:`benchmark_kernel`
writes a row's loop body as a warpspeed kernel, :func:`predict_row` runs the L1 model on it and
takes the larger of its cycles and the FP cycles (the roofline's L1 and FP limiters,
:func:`warpspeed.levels.four_limiter`, on one SM), and :func:`strides_accuracy` gives the
mean absolute percentage error of the cycles over all rows.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from warpspeed.errors import WarpspeedError
from warpspeed.hardware.device import Device
from warpspeed.kernel.description import Field, FlopCounts, Kernel, load_linear
from warpspeed.launch.geometry import make_launch
from warpspeed.memory.addresses import block_cells, compile_kernel
from warpspeed.memory.l1 import l1_cycles
from warpspeed.levels import four_limiter
from warpspeed.units import GIGA
from warpspeed.validation.percent import mape

#: Threads of the benchmark's single thread block.
BLOCK_THREADS = 1024
#: Loads per loop iteration and their element offsets (``4 k``, ``k = 0..7``).
LOADS_PER_ITERATION = 8
LOAD_OFFSET_ELEMENTS = 4
#: Threads per "load instruction" in the benchmark's figures: it divides the measured cycles by
#: threads x loads / 32 on every GPU (``warpSize = 32``, "normalize to 32 for all GPU types",
#: ``gpu-strides/main.cu``), so a wave64 load of CDNA counts as two loads of 32 threads.
BENCHMARK_THREADS_PER_LOAD = 32
#: Fused multiply-adds per loop iteration: ``sum += A[i] * A[j]`` for four pairs of the 8 loads.
FMAS_PER_ITERATION = 4
#: ``threadIdx.x`` and ``threadIdx.y`` wrap at these values in the benchmark's address expressions.
X_WRAP = 64
Y_WRAP = 32
#: Bytes per element of the two precisions.
PRECISION_BYTES = {"float": 4, "double": 8}
KINDS = ("stride", "block")
_COLUMNS = ("precision", "kind", "arg", "pitch", "cycles", "data_pipe_wavefronts", "tag_wavefronts")


class StridesDataError(WarpspeedError):
    """A gpu-strides CSV file is missing, malformed or holds an unknown row."""


@dataclass(frozen=True)
class StrideRow:
    """One measured row (all counts per load instruction of 32 threads)."""

    precision: str  # "float" or "double"
    kind: str  # "stride" or "block"
    arg: int  # stride in elements, or block width in threads
    pitch: int  # row pitch in elements ("block" rows)
    cycles: float
    data_pipe_wavefronts: float
    tag_wavefronts: float


@dataclass(frozen=True)
class StridePrediction:
    """The model for one row, per load instruction of 32 threads: cycles (the larger of the L1 and
    the FP cycles), data-pipe and tag-stage wavefronts, the L1 cycles alone and the cycles the
    loop's FMAs need on the SM's FP units."""

    row: StrideRow
    cycles: float
    data_pipe_wavefronts: float
    tag_wavefronts: float
    l1_cycles: float = 0.0
    fp_cycles: float = 0.0

    @property
    def relative_error(self) -> float:
        """``|predicted - measured| / measured``."""
        return abs(self.cycles - self.row.cycles) / self.row.cycles


@dataclass(frozen=True)
class StridesAccuracy:
    """Error of the predicted cycles over a set of rows.

    Attributes:
        mape_percent: mean absolute percentage error of the cycles (%).
        worst: the prediction with the largest relative error.
        predictions: every row's prediction, in input order.
    """

    mape_percent: float
    worst: StridePrediction
    predictions: tuple[StridePrediction, ...]


def read_strides_csv(path: str | Path) -> tuple[StrideRow, ...]:
    """Rows of a gpu-strides CSV (``#`` lines are comments; see ``fits/data/public/gpu-strides/a100.csv``)."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise StridesDataError(f"cannot read gpu-strides data {p}: {exc.strerror}") from None
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    reader = csv.DictReader(lines)
    missing = [c for c in _COLUMNS if c not in (reader.fieldnames or ())]
    if missing:
        raise StridesDataError(f"{p}: missing column(s) {', '.join(missing)}; required: {', '.join(_COLUMNS)}")
    rows = []
    for n, rec in enumerate(reader, start=2):
        try:
            row = StrideRow(precision=rec["precision"], kind=rec["kind"], arg=int(rec["arg"]),
                            pitch=int(rec["pitch"]), cycles=float(rec["cycles"]),
                            data_pipe_wavefronts=float(rec["data_pipe_wavefronts"]),
                            tag_wavefronts=float(rec["tag_wavefronts"]))
        except (TypeError, ValueError) as exc:
            raise StridesDataError(f"{p}, data row {n - 1}: {exc}") from None
        _check_row(row, f"{p}, data row {n - 1}")
        rows.append(row)
    if not rows:
        raise StridesDataError(f"{p}: no data rows")
    return tuple(rows)


def _check_row(row: StrideRow, where: str) -> None:
    if row.precision not in PRECISION_BYTES:
        raise StridesDataError(f"{where}: precision {row.precision!r} unknown; allowed: float, double")
    if row.kind not in KINDS:
        raise StridesDataError(f"{where}: kind {row.kind!r} unknown; allowed: {', '.join(KINDS)}")
    if row.kind == "block" and (row.arg <= 0 or BLOCK_THREADS % row.arg):
        raise StridesDataError(f"{where}: block width {row.arg} must divide {BLOCK_THREADS}")
    if row.arg < 0 or row.pitch < 0 or row.cycles <= 0:
        raise StridesDataError(f"{where}: arg and pitch must be >= 0 and cycles > 0")


def benchmark_kernel(row: StrideRow) -> tuple[Kernel, tuple[int, int, int]]:
    """The row's loop body (8 loads) as a warpspeed kernel, and the thread block it runs with."""
    _check_row(row, "gpu-strides row")
    elem = PRECISION_BYTES[row.precision]
    if row.kind == "stride":
        base = f"Mod(x, {X_WRAP}) * {row.arg}"
        block = (BLOCK_THREADS, 1, 1)
        extent = X_WRAP * row.arg
    else:
        base = f"Mod(x, {X_WRAP}) + (Mod(y, {Y_WRAP}) + 1) * {row.pitch}"
        block = (row.arg, BLOCK_THREADS // row.arg, 1)
        extent = X_WRAP + (Y_WRAP + 1) * row.pitch
    size = extent + LOAD_OFFSET_ELEMENTS * LOADS_PER_ITERATION
    accesses = tuple(load_linear("A", f"{base} + {LOAD_OFFSET_ELEMENTS * k}") for k in range(LOADS_PER_ITERATION))
    dtype = "float32" if elem == 4 else "float64"
    kernel = Kernel(f"gpu-strides {row.precision} {row.kind} {row.arg}", (Field("A", elem, (size,)),),
                    accesses, block, flops=FlopCounts(fmas=FMAS_PER_ITERATION), dtype=dtype)
    return kernel, block


def predict_row(row: StrideRow, device: Device) -> StridePrediction:
    """The model's cycles per load of 32 threads (:data:`BENCHMARK_THREADS_PER_LOAD`) for ``row``
    on ``device``: the larger
    of the L1 cycles and the cycles of the loop's FMAs (the L1 and FP limiters of
    :func:`~warpspeed.levels.four_limiter` for the single SM the benchmark runs on)."""
    kernel, block = benchmark_kernel(row)
    launch = make_launch(block, (1, 1, 1), kernel.domain)
    result = l1_cycles(compile_kernel(kernel), block_cells(launch), device)
    roofline = four_limiter(device, kernel.dtype, kernel.flops.instructions, kernel.flops.flops,
                            result.cycles_per_lup, 0.0, 0.0)
    sm_cycles_per_s = device.sms * device.clock_ghz * GIGA  # the limiters count every SM
    cycles_per_lup = {"l1": result.cycles_per_lup, "fp": sm_cycles_per_s / roofline.fp_lups_per_s}
    lups_per_warp_load = BENCHMARK_THREADS_PER_LOAD / LOADS_PER_ITERATION
    return StridePrediction(row=row, cycles=cycles_per_lup[roofline.limiter] * lups_per_warp_load,
                            data_pipe_wavefronts=result.data_pipe_wavefronts_per_lup * lups_per_warp_load,
                            tag_wavefronts=result.tag_wavefronts_per_lup * lups_per_warp_load,
                            l1_cycles=cycles_per_lup["l1"] * lups_per_warp_load,
                            fp_cycles=cycles_per_lup["fp"] * lups_per_warp_load)


def strides_accuracy(rows: tuple[StrideRow, ...], device: Device) -> StridesAccuracy:
    """MAPE (%) and worst case of the predicted cycles over ``rows``."""
    if not rows:
        raise StridesDataError("no gpu-strides rows to compare")
    predictions = tuple(predict_row(r, device) for r in rows)
    error = mape([p.cycles for p in predictions], [p.row.cycles for p in predictions])
    worst = max(predictions, key=lambda p: p.relative_error)
    return StridesAccuracy(mape_percent=error, worst=worst, predictions=predictions)
