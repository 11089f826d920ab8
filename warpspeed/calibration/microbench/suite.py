"""The measuring half of ``warpspeed calibrate``: the benchmarks' sweeps, their tables, resume and budget.

Each benchmark asks a *runner* (:class:`Runner`: :class:`~warpspeed.calibration.microbench.cupy_runner.CupyRunner`
on a GPU, a fake in the tests) for one measured point at a time and writes its raw table
(:mod:`warpspeed.measured.raw_tables`, the columns of the public gpu-benches table it
mirrors) as soon as its sweep ends. :func:`run_suite`:

* **resumes**: a benchmark whose table exists, verifies (checksum) and was measured on this GPU
  (its ``gpu_uuid`` line) is skipped; a missing, corrupted or foreign table is measured again;
* **keeps to a budget**: benchmark ``i`` may run until ``start + budget x`` (its share of
  :data:`SHARES` plus those before it), so time one leaves is the next one's; a sweep measures its
  points coarse-first (:func:`coarse_first`: the ends and every level's windows come first, the
  points between later) and stops at its deadline, and its table says so (``# truncated:``);
* **never stops at a failure**: a benchmark that raises is recorded (``<benchmark>.failed``,
  one line) and the next one runs; the fit then takes that benchmark's figures from the base device;
* reports one progress line per benchmark through ``progress`` (the command prints it on stderr).

Sweeps (``quick`` halves the points of each; sizes from the device query and the base device):

``gpu-stream``      threads per block 32 .. 1024 (step 32; quick: 64), two blocks per SM, five kernels;
``gpu-l2-cache``    data sets C/32 .. 8 C (C: the L2 size), 8 per octave (quick: 4);
``gpu-cache``       per-SM buffers 1 KiB .. 8 L1 (the base's first level, at least the shared memory per SM), 4 per octave (quick: 2);
``gpu-latency``     1 KiB .. 8 C, 4 per octave up to 2 C and 2 beyond (quick: 2 and 1);
``gpu-small-kernels`` 4096 .. 2^19 elements, 16 per octave (quick: 8), blocks of 32 .. 1024 threads;
``gpu-strides``     strides 0 .. 64 elements and blocks 1 .. 64 threads wide, float and double;
``gpu-roofline``    inner loops 0, 1, 2, 4, ..., 512 FMAs (quick: 0, 4, 32, 256), each run held
                    :data:`ROOFLINE_RUN_S` seconds for nvidia-smi to sample power and clock.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol, Sequence

from warpspeed.measured.raw_tables import (TABLES, read_table, record_failure, table_path, write_table)
from warpspeed.measured.public_data import STREAM_BYTES_PER_THREAD
from warpspeed.errors import WarpspeedError
from warpspeed.hardware.device import Device
from warpspeed.units import GIGA, KIB

#: The benchmarks' shares of the budget, in the order of :data:`TABLES` (sum 1). The device
#: query takes a moment; the DRAM, L2 and latency sweeps move the most data.
SHARES = {"device-query": 0.03, "gpu-stream": 0.17, "gpu-l2-cache": 0.15, "gpu-cache": 0.10, "gpu-latency": 0.20,
          "gpu-small-kernels": 0.12, "gpu-strides": 0.05, "gpu-roofline": 0.18}
#: The default budget of a whole run, seconds: the run fits in 5 minutes on an H100-class GPU with
#: half of it to spare (kernel compilation and start-up included).
DEFAULT_BUDGET_S = 150.0
#: Fewest budget seconds accepted (the device query and one point per benchmark).
MIN_BUDGET_S = 10.0
#: Fewest rows a truncated sweep must have for its table to be written.
MIN_ROWS = 3
#: Stream kernels measured, in the order of the table's columns (their bytes per thread are
#: :data:`~warpspeed.measured.public_data.STREAM_BYTES_PER_THREAD`).
STREAM_KERNELS = ("init", "read", "scale", "triad", "stencil1d3pt")
#: Blocks resident per SM in the stream sweep (as the public gpu-stream tables).
STREAM_BLOCKS_PER_SM = 2
#: Block sizes of the small-kernel sweep, threads.
LAUNCH_BLOCKS = (32, 64, 128, 256, 512, 1024)
#: Element counts of the small-kernel sweep: 4096 up to 2^19 (8 MiB moved, past the fitted 4 MiB).
LAUNCH_ELEMENTS = (4096, 2**19)
#: Inner-loop lengths of the roofline sweep.
ROOFLINE_ITS = (0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
ROOFLINE_ITS_QUICK = (0, 4, 32, 256)
#: Seconds each roofline run is held (power and clock settle within about a second).
ROOFLINE_RUN_S = 1.5
ROOFLINE_RUN_S_QUICK = 1.0
#: Strides of the strides sweep (elements) and block widths (threads), as the public table.
STRIDES = tuple(range(0, 65))
BLOCK_WIDTHS = (1, 2, 4, 8, 16, 32, 64)
#: Row pitch of the block rows of the strides sweep, elements (as the public A100 table).
BLOCK_PITCH = 4098
#: Smallest data set of the latency and L1 sweeps, bytes.
SMALLEST_BYTES = 1024
#: The source line of every table written here.
SOURCE = "warpspeed calibrate (warpspeed.calibration.microbench; methods after D. Ernst's gpu-benches)"


@dataclass(frozen=True)
class GpuInfo:
    """What the CUDA runtime (and nvidia-smi, where present) reports of the GPU."""

    name: str
    uuid: str
    compute_capability: str
    sms: int
    clock_max_mhz: float
    l2_bytes: int
    shared_bytes_per_sm: int
    shared_bytes_per_block: int
    registers_per_sm: int
    max_threads_per_sm: int
    max_threads_per_block: int
    max_blocks_per_sm: int
    warp_size: int
    memory_bytes: int
    power_limit_w: float = math.nan


@dataclass(frozen=True)
class RooflineRun:
    """One held run of the roofline kernel: loaded GB/s, GFLOP/s, and nvidia-smi's medians."""

    gb_s: float
    gflop_s: float
    clock_mhz: float
    watts: float
    temp_c: float


class Runner(Protocol):
    """One measured point per call (the GPU side of the benchmarks)."""

    def device_info(self) -> GpuInfo: ...

    def stream(self, kernel: str, threads_per_block: int, blocks: int) -> float:
        """GB/s of stream ``kernel`` run by ``blocks`` blocks of ``threads_per_block`` threads."""

    def l2_read(self, data_set_bytes: int) -> float:
        """GB/s of the read-only sum over a data set of ``data_set_bytes``."""

    def l1_read(self, buffer_bytes: int) -> float:
        """GB/s (all SMs) of one block per SM re-reading a buffer of ``buffer_bytes``."""

    def pointer_chase(self, data_set_bytes: int) -> float:
        """SM cycles per step of a pointer chase through ``data_set_bytes``."""

    def sm_clock_mhz(self) -> float:
        """The SM clock while a kernel runs, MHz (cycles counted over a host-timed interval)."""

    def launches(self, elements: int, block_threads: int) -> float:
        """Seconds per launch of the scale kernel over ``elements`` in blocks of ``block_threads``."""

    def launch_method(self) -> str:
        """How :meth:`launches` launches (``cuda-graph`` or ``stream``)."""

    def strides(self, precision: str, kind: str, arg: int, pitch: int) -> float:
        """SM cycles per load instruction of 32 threads of the strides kernel."""

    def roofline(self, its: int, hold_s: float) -> RooflineRun | None:
        """One held roofline run; None where board power cannot be read (no nvidia-smi)."""


@dataclass(frozen=True)
class Outcome:
    """What happened to one benchmark: ``measured``, ``resumed`` (its table was kept), ``failed``
    or ``skipped`` (no time left, or no nvidia-smi); ``detail``: the progress line's text."""

    name: str
    status: str
    detail: str
    seconds: float = 0.0


@dataclass(frozen=True)
class SuiteReport:
    """Every benchmark's outcome and the folder of tables."""

    folder: Path
    outcomes: tuple[Outcome, ...] = field(default_factory=tuple)


class _Deadline:
    """The time a sweep may run until; ``passed()`` once the clock is beyond it."""

    def __init__(self, clock: Callable[[], float], until: float) -> None:
        self.clock, self.until = clock, until

    def passed(self) -> bool:
        return self.clock() > self.until


def coarse_first(points: Sequence[float]) -> list[float]:
    """``points`` (sorted) reordered so that a sweep cut short still spans them: both ends first,
    then the midpoints of ever finer halvings (every 2^k-th point before the others)."""
    n = len(points)
    if n <= 2:
        return list(points)
    order, seen = [0, n - 1], {0, n - 1}
    step = 1 << max(0, (n - 1).bit_length() - 1)
    while step >= 1:
        for i in range(0, n, step):
            if i not in seen:
                seen.add(i)
                order.append(i)
        step //= 2
    return [points[i] for i in order]


def geometric(lo: float, hi: float, per_octave: int) -> list[int]:
    """Integers from ``lo`` to ``hi`` spaced ``per_octave`` to a doubling (rounded, distinct)."""
    if lo <= 0 or hi < lo or per_octave < 1:
        raise WarpspeedError(f"no geometric sweep from {lo} to {hi} at {per_octave} per octave")
    steps = int(math.floor(math.log2(hi / lo) * per_octave + 1e-9))
    values = sorted({int(round(lo * 2 ** (k / per_octave))) for k in range(steps + 1)} | {int(round(hi))})
    return values


def _meta(info: GpuInfo, benchmark: str, units: str, *extra: tuple[str, str]) -> list[tuple[str, str]]:
    return [("source", SOURCE), ("part", info.name), ("gpu_uuid", info.uuid), ("benchmark", benchmark),
            ("units", units), *extra]


def _sweep(points: Sequence, measure: Callable, deadline: _Deadline) -> tuple[list, bool]:
    """Measure ``points`` coarse-first until the deadline: (sorted (point, value) rows, truncated)."""
    rows = []
    for p in coarse_first(list(points)):
        if rows and deadline.passed():
            return sorted(rows, key=lambda r: r[0]), True
        rows.append((p, measure(p)))
    return sorted(rows, key=lambda r: r[0]), False


def _truncated(meta: list[tuple[str, str]], cut: bool, total: int, done: int) -> list[tuple[str, str]]:
    if cut:
        meta.append(("truncated", f"yes: {done} of {total} points measured within the time budget"))
    return meta


def _require_rows(rows: Sequence, what: str) -> None:
    if len(rows) < MIN_ROWS:
        raise WarpspeedError(f"{what}: only {len(rows)} points measured within the time budget (need {MIN_ROWS})")


# --- the benchmarks ------------------------------------------------------------------------------

def bench_query(runner: Runner, info: GpuInfo, base: Device, quick: bool, deadline: _Deadline):
    columns = ("sms", "clock_max_mhz", "l2_bytes", "shared_bytes_per_sm", "shared_bytes_per_block",
               "registers_per_sm", "max_threads_per_sm", "max_threads_per_block", "max_blocks_per_sm", "warp_size",
               "memory_bytes", "power_limit_w")
    row = [getattr(info, c) for c in columns]
    meta = _meta(info, "device attributes of the CUDA runtime (cudaDeviceGetAttribute) and the enforced board "
                 "power limit of nvidia-smi (nan: not available)", "bytes, MHz, threads, registers, W",
                 ("compute_capability", info.compute_capability))
    return meta, columns, [row]


def bench_stream(runner: Runner, info: GpuInfo, base: Device, quick: bool, deadline: _Deadline):
    step = 64 if quick else 32
    sizes = list(range(step, info.max_threads_per_block + 1, step))
    if sizes[-1] != info.max_threads_per_block:
        sizes.append(info.max_threads_per_block)
    blocks = STREAM_BLOCKS_PER_SM * info.sms
    rows, cut = _sweep(sizes, lambda t: [runner.stream(k, t, blocks) for k in STREAM_KERNELS], deadline)
    _require_rows(rows, "gpu-stream")
    table = [[t, blocks * t, *values] for t, values in rows]  # blocks = resident blocks of the device
    meta = _meta(info, f"one element of 8 B per thread and stream, {STREAM_BLOCKS_PER_SM} blocks resident per SM "
                 "(shared-memory padding; resident = blocks x threads_per_block x sm_count), each launch over "
                 "its own window of 2 GiB arrays",
                 "threads_per_block and resident_threads in threads; kernel columns in GB/s = 1e9 B/s",
                 ("sm_count", str(info.sms)), ("blocks_per_sm", str(STREAM_BLOCKS_PER_SM)),
                 ("bytes_per_thread", ", ".join(f"{k} {STREAM_BYTES_PER_THREAD[k]}" for k in STREAM_KERNELS)))
    return _truncated(meta, cut, len(sizes), len(rows)), ("threads_per_block", "resident_threads", *STREAM_KERNELS), table


def bench_l2(runner: Runner, info: GpuInfo, base: Device, quick: bool, deadline: _Deadline):
    c = info.l2_bytes or base.l2.bytes
    sizes = geometric(c / 32, 8 * c, 4 if quick else 8)
    rows, cut = _sweep(sizes, runner.l2_read, deadline)
    _require_rows(rows, "gpu-l2-cache")
    meta = _meta(info, "read-only sum over a data set re-read by many blocks of 1024 threads, each reading a "
                 "chunk; full occupancy", "data_set_kb in kB = 1024 B (total data set); bandwidth_gb_s in GB/s",
                 ("nominal_l2_kib", f"{c / KIB:g}"),
                 ("nominal_l2_source", "the CUDA runtime's L2 size" if info.l2_bytes else f"the base device {base.name}"))
    return _truncated(meta, cut, len(sizes), len(rows)), ("data_set_kb", "bandwidth_gb_s"), \
        [[s / KIB, v] for s, v in rows]


def nominal_l1_bytes(info: GpuInfo, base: Device) -> int:
    """The first level's nominal size the L1 sweep is placed by: the base's first level, at least
    the shared memory per SM (the two share one array on NVIDIA parts)."""
    return max(base.l1.bytes, info.shared_bytes_per_sm)


def bench_l1(runner: Runner, info: GpuInfo, base: Device, quick: bool, deadline: _Deadline):
    c = nominal_l1_bytes(info, base)
    sizes = [s for s in geometric(SMALLEST_BYTES, 8 * c, 2 if quick else 4)]
    rows, cut = _sweep(sizes, runner.l1_read, deadline)
    _require_rows(rows, "gpu-cache")
    meta = _meta(info, "one block of 256 threads per SM, every block re-reads the same buffer of data_set_kb kB",
                 "data_set_kb in kB = 1024 B (per-block buffer); bandwidth_gb_s in GB/s summed over all SMs",
                 ("nominal_l1_kib", f"{c / KIB:g}"),
                 ("nominal_l1_source", f"the base device {base.name}'s first level, at least the shared memory per SM"),
                 ("element_bytes", "4"))
    return _truncated(meta, cut, len(sizes), len(rows)), ("data_set_kb", "bandwidth_gb_s"), \
        [[s / KIB, v] for s, v in rows]


def bench_latency(runner: Runner, info: GpuInfo, base: Device, quick: bool, deadline: _Deadline):
    c2 = info.l2_bytes or base.l2.bytes
    c1 = nominal_l1_bytes(info, base)
    near = geometric(SMALLEST_BYTES, 2 * c2, 2 if quick else 4)
    far = geometric(2 * c2, 8 * c2, 1 if quick else 2)
    sizes = sorted(set(near) | set(far))
    clock = runner.sm_clock_mhz()
    rows, cut = _sweep(sizes, runner.pointer_chase, deadline)
    _require_rows(rows, "gpu-latency")
    meta = _meta(info, "pointer chase by one thread through a random cyclic permutation of the data set, one 8 B "
                 "pointer per 64 B, timed with clock64", "data_set_kb in kB = 1024 B; latency_cycles in SM cycles "
                 "at clock_mhz", ("clock_mhz", f"{clock:.0f}"),
                 ("clock_source", "SM cycles counted over a host-timed interval while a kernel runs"),
                 ("nominal_l1_kib", f"{c1 / KIB:g}"), ("nominal_l2_kib", f"{c2 / KIB:g}"))
    return _truncated(meta, cut, len(sizes), len(rows)), ("data_set_kb", "latency_cycles"), \
        [[s / KIB, v] for s, v in rows]


def bench_launch(runner: Runner, info: GpuInfo, base: Device, quick: bool, deadline: _Deadline):
    elements = geometric(LAUNCH_ELEMENTS[0], LAUNCH_ELEMENTS[1], 8 if quick else 16)
    blocks = [b for b in LAUNCH_BLOCKS if b <= info.max_threads_per_block]
    rows, cut = _sweep(elements, lambda n: [n * 16 / runner.launches(n, b) / GIGA for b in blocks], deadline)
    _require_rows(rows, "gpu-small-kernels")
    meta = _meta(info, "the scale kernel A[i] = 0.25 B[i] (one 8 B load and one 8 B store per element) launched "
                 f"back to back ({runner.launch_method()}), 1-D blocks of block_threads threads, elements / "
                 "block_threads + 1 blocks", f"elements; gb_s_1..gb_s_{len(blocks)} in GB/s = 16 elements / time "
                 "per launch, one column per block size", ("block_threads", ",".join(str(b) for b in blocks)),
                 ("launch_method", runner.launch_method()))
    columns = ("elements", *(f"gb_s_{i + 1}" for i in range(len(blocks))))
    return _truncated(meta, cut, len(elements), len(rows)), columns, [[n, *v] for n, v in rows]


def bench_strides(runner: Runner, info: GpuInfo, base: Device, quick: bool, deadline: _Deadline):
    points = [(p, "block", w, BLOCK_PITCH) for p in ("float", "double") for w in BLOCK_WIDTHS]
    points += [(p, "stride", s, s) for p in ("float", "double") for s in (STRIDES[::2] if quick else STRIDES)]
    rows = []
    for point in points:
        if rows and deadline.passed():
            break
        precision, kind, arg, pitch = point
        cycles = runner.strides(precision, kind, arg, pitch)
        elem = 4 if precision == "float" else 8
        rows.append([precision, kind, arg, pitch, cycles, 32 * elem / cycles, math.nan, math.nan, math.nan])
    _require_rows(rows, "gpu-strides")
    meta = _meta(info, "one block of 1024 threads, 8 loads per iteration from base(t) + 4 k elements (k = 0..7), "
                 "4 FMAs per iteration; kind stride: base = (threadIdx.x mod 64) x arg; kind block: block (arg, "
                 "1024 / arg), base = (threadIdx.x mod 64) + ((threadIdx.y mod 32) + 1) x pitch",
                 "cycles = SM cycles (clock64) per load instruction of 32 threads; bytes_per_cycle = loaded bytes "
                 "per cycle; the L1TEX counter columns are nan (not measured: no profiler)")
    columns = ("precision", "kind", "arg", "pitch", "cycles", "bytes_per_cycle", "data_pipe_wavefronts",
               "tag_wavefronts", "lts_sectors")
    return _truncated(meta, len(rows) < len(points), len(points), len(rows)), columns, rows


def bench_roofline(runner: Runner, info: GpuInfo, base: Device, quick: bool, deadline: _Deadline):
    its_values = ROOFLINE_ITS_QUICK if quick else ROOFLINE_ITS
    hold = ROOFLINE_RUN_S_QUICK if quick else ROOFLINE_RUN_S
    rows = []
    for its in coarse_first(list(its_values)):
        if rows and deadline.passed():
            break
        run = runner.roofline(its, hold)
        if run is None:
            return None
        rows.append([0, info.sms * (info.max_threads_per_sm // 256), its, (2 * its + 2) / 8, run.gb_s, run.gflop_s,
                     run.clock_mhz, run.watts, run.temp_c])
    rows.sort(key=lambda r: r[2])
    _require_rows(rows, "gpu-roofline")
    meta = _meta(info, "float streaming kernel, per element pair two 4 B loads, one subtraction, its fused "
                 "multiply-adds and one addition to a sum; full occupancy, blocks of 256 threads; each run held "
                 f"{hold:g} s while nvidia-smi samples board power and SM clock",
                 "flop_per_byte (flops per loaded byte), gb_s (1e9 B/s loaded), gflop_s, clock_mhz (SM clock "
                 "during the run), watts (board power), temp_c")
    columns = ("gpu", "blocks", "its", "flop_per_byte", "gb_s", "gflop_s", "clock_mhz", "watts", "temp_c")
    return _truncated(meta, len(rows) < len(its_values), len(its_values), len(rows)), columns, rows


BENCHMARKS = {"device-query": bench_query, "gpu-stream": bench_stream, "gpu-l2-cache": bench_l2,
              "gpu-cache": bench_l1, "gpu-latency": bench_latency, "gpu-small-kernels": bench_launch,
              "gpu-strides": bench_strides, "gpu-roofline": bench_roofline}


def _kept(folder: Path, name: str, info: GpuInfo) -> bool:
    table = read_table(folder, name)
    return table is not None and table.value("gpu_uuid") == info.uuid


def run_suite(runner: Runner, folder: str | Path, base: Device, budget_s: float = DEFAULT_BUDGET_S,
              quick: bool = False, progress: Callable[[str], None] = lambda line: None,
              clock: Callable[[], float] = time.monotonic, only: Sequence[str] | None = None) -> SuiteReport:
    """Run the benchmarks (``only``: a subset of :data:`TABLES`) into ``folder`` (see the module
    docstring for resume, budget and failures)."""
    if not budget_s >= MIN_BUDGET_S:
        raise WarpspeedError(f"budget {budget_s!r} s is too short; allowed: at least {MIN_BUDGET_S:g} s")
    unknown = [n for n in (only or ()) if n not in TABLES]
    if unknown:
        raise WarpspeedError(f"unknown benchmark(s) {', '.join(unknown)}; allowed: {', '.join(TABLES)}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    start = clock()
    info = runner.device_info()
    names = [n for n in TABLES if only is None or n in only or n == "device-query"]
    total = sum(SHARES[n] for n in names)
    outcomes, share = [], 0.0
    for i, name in enumerate(names, start=1):
        share += SHARES[name] / total
        deadline = _Deadline(clock, start + budget_s * share)
        head = f"[{i}/{len(names)}] {name}"
        t0 = clock()
        if _kept(folder, name, info):
            outcome = Outcome(name, "resumed", f"{head}: kept {table_path(folder, name).name} (verified, this GPU)")
        elif i > 1 and clock() > start + budget_s:
            outcome = Outcome(name, "skipped", f"{head}: skipped, the time budget of {budget_s:g} s is spent")
        else:
            try:
                result = BENCHMARKS[name](runner, info, base, quick, deadline)
                if result is None:
                    outcome = Outcome(name, "skipped", f"{head}: skipped (board power cannot be read: no nvidia-smi)")
                else:
                    meta, columns, rows = result
                    path = write_table(folder, name, meta, columns, rows)
                    cut = " (cut short by the budget)" if any(k == "truncated" for k, _ in meta) else ""
                    outcome = Outcome(name, "measured", f"{head}: {len(rows)} rows -> {path.name} in "
                                      f"{clock() - t0:.1f} s{cut}", clock() - t0)
            except Exception as exc:  # noqa: BLE001 - one failed benchmark must not stop the others
                reason = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
                record_failure(folder, name, reason)
                outcome = Outcome(name, "failed", f"{head}: FAILED ({reason}); its figures come from the base device",
                                  clock() - t0)
        progress(outcome.detail)
        outcomes.append(outcome)
    return SuiteReport(folder, tuple(outcomes))
