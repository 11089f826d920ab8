"""Validation runner: run every launch configuration on a real GPU and record the measured
hardware counters next to the predictions (paper 001, sections 5.4-5.8).

Structure (only :class:`CupyRunner` and :class:`NcuProfiler` touch a GPU or a subprocess; the
rest is pure and tested offline):

* :func:`plan_launch` generates one configuration's CUDA kernel with pystencils (no GPU needed)
  and fixes its launch geometry (block, grid) and field allocations.
* :class:`GpuRunner` (protocol) times a planned launch; :class:`CupyRunner` implements it with
  cupy and CUDA events (warm-up launches, then one event pair per timed launch). cupy is
  imported lazily; without cupy or a visible GPU it raises :class:`MeasurementError`.
* :class:`Profiler` (protocol) collects hardware counters; :class:`NcuProfiler` runs Nsight
  Compute (``ncu``) on a child process (``python -m warpspeed.validation.measure PLAN_JSON``) that builds
  the same kernel and launches it once. :func:`ncu_command` builds the command line and
  :func:`parse_ncu_csv` parses its ``--csv --page raw`` output (both pure).
* :func:`assemble_row` puts measured and predicted values side by side (bytes per lattice update
  and totals); :func:`write_measurement_csv` / :func:`read_measurement_csv` store a table.

CSV format (see ``docs/validation.md``): a block of ``# key: value`` comment lines (GPU name,
driver, clocks, kernel, domain, repeats, ...) followed by one header row and one row per
configuration. Columns are listed in :data:`CSV_COLUMNS`; units are in the names
(``_s`` seconds, ``_hz`` hertz, ``_bytes`` bytes, ``_per_lup`` per lattice update).
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import json
import math
import re
import shutil
import statistics
import subprocess
import sys
from dataclasses import asdict, dataclass, field as dc_field
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence

from warpspeed.errors import WarpspeedError
from warpspeed.launch.space import Config

Triple = tuple[int, int, int]


class MeasurementError(WarpspeedError):
    """A measurement cannot be made (no cupy, no GPU, no ncu output) or its data are invalid."""


# --------------------------------------------------------------------------------------------
# constants

#: Nsight Compute metrics collected per launch, and the CSV column of each raw value.
#: Sources: paper 001, 5.4 (``l1tex__data_pipe_lsu_wavefronts``), 5.5
#: (``lts__t_sectors_srcunit_tex_op_read``), the store counterpart and the DRAM byte counters of
#: the Nsight Compute Kernel Profiling Guide ("Metrics Reference"), elapsed cycles
#: ``gpc__cycles_elapsed.max`` (the "Elapsed Cycles" of the SpeedOfLight section) and the SM
#: clock ``sm__cycles_elapsed.avg.per_second`` ("SM Frequency").
NCU_METRICS: dict[str, str] = {
    "l1tex__data_pipe_lsu_wavefronts.sum": "ncu_l1_wavefronts",
    "lts__t_sectors_srcunit_tex_op_read.sum": "ncu_l2_read_sectors",
    "lts__t_sectors_srcunit_tex_op_write.sum": "ncu_l2_write_sectors",
    "dram__bytes_read.sum": "ncu_dram_read_bytes",
    "dram__bytes_write.sum": "ncu_dram_write_bytes",
    "gpc__cycles_elapsed.max": "ncu_cycles_elapsed",
    "sm__cycles_elapsed.avg.per_second": "ncu_sm_clock_hz",
}

#: Bytes per L2 sector counted by ``lts__t_sectors*`` (Nsight Compute Kernel Profiling Guide,
#: "Memory Tables": a sector is an aligned 32-byte chunk of a 128-byte cache line).
NCU_SECTOR_BYTES = 32

#: Nsight Compute's clock control during profiling. ``none`` leaves the GPU at the clocks the
#: timed runs had (ncu's default ``base`` locks them to the base clock); volumes do not depend
#: on it, the recorded SM clock does.
DEFAULT_NCU_CLOCK_CONTROL = "none"
NCU_CLOCK_CONTROLS = ("none", "base")

#: Default warm-up and timed launches per configuration. A launch of the paper's stencil domain
#: takes about 1-10 ms, so 20 repeats keep a configuration under a second.
DEFAULT_WARMUP = 3
DEFAULT_REPEATS = 20

#: Value given to every scalar (non-field) kernel parameter such as lbmpy's ``omega``: scalars
#: do not change memory accesses, and 1.0 keeps every number finite.
DEFAULT_SCALAR_VALUE = 1.0

#: Format version of the measurement CSV (first comment line).
CSV_FORMAT = "warpspeed-measurement 1"

#: Unit prefixes Nsight Compute prints with ``--print-units auto`` (decimal SI, and binary).
_UNIT_PREFIX: dict[str, float] = {
    "": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12,
    "ki": 2.0**10, "mi": 2.0**20, "gi": 2.0**30, "ti": 2.0**40,
}
_TIME_UNITS: dict[str, float] = {"second": 1.0, "msecond": 1e-3, "usecond": 1e-6, "nsecond": 1e-9}
#: Counted units of ncu metrics (prefixes allowed: Kbyte, Mbyte, Ksector, ...).
_COUNT_UNITS: tuple[str, ...] = ("byte", "sector", "cycle", "wavefront", "request", "inst", "warp",
                                 "thread", "block", "transaction")

#: The measured and predicted metrics of a row: (name, measured column, predicted column, unit).
#: Shared with :mod:`warpspeed.validation.accuracy`.
COMPARED_METRICS: tuple[tuple[str, str, str, str], ...] = (
    ("l1_wavefronts", "meas_l1_wavefronts_per_lup", "pred_l1_wavefronts_per_lup", "wavefronts/lup"),
    ("l2_load", "meas_l2_load_bytes_per_lup", "pred_l2_load_bytes_per_lup", "B/lup"),
    ("l2_store", "meas_l2_store_bytes_per_lup", "pred_l2_store_bytes_per_lup", "B/lup"),
    ("dram_load", "meas_dram_load_bytes_per_lup", "pred_dram_load_bytes_per_lup", "B/lup"),
    ("dram_store", "meas_dram_store_bytes_per_lup", "pred_dram_store_bytes_per_lup", "B/lup"),
    ("performance", "meas_lups_per_s", "pred_lups_per_s", "lup/s"),
)

_DIMS = ("x", "y", "z")

#: Every CSV column, in file order.
CSV_COLUMNS: tuple[str, ...] = (
    "config", "block_x", "block_y", "block_z", "fold_x", "fold_y", "fold_z",
    "grid_x", "grid_y", "grid_z", "lups", "error",
    # timing
    "time_median_s", "time_min_s", "time_max_s", "time_repeats", "meas_lups_per_s",
    # raw counters (Nsight Compute, totals of one launch)
    *NCU_METRICS.values(),
    # measured, converted
    "meas_l1_wavefronts_per_lup", "meas_l2_load_bytes_per_lup", "meas_l2_store_bytes_per_lup",
    "meas_dram_load_bytes_per_lup", "meas_dram_store_bytes_per_lup",
    "meas_l2_load_bytes", "meas_l2_store_bytes",
    # predicted, per lup
    "pred_lups_per_s", "pred_limiter", "pred_fp_lups_per_s", "pred_l1_lups_per_s",
    "pred_l2_lups_per_s", "pred_dram_lups_per_s",
    "pred_l1_wavefronts_per_lup", "pred_l1_load_bytes_per_lup",
    "pred_l2_load_compulsory_bytes_per_lup", "pred_l2_load_bytes_per_lup", "pred_l2_store_bytes_per_lup",
    "pred_dram_load_compulsory_bytes_per_lup", "pred_dram_store_compulsory_bytes_per_lup",
    "pred_dram_load_bytes_per_lup", "pred_dram_store_bytes_per_lup",
    "pred_blocks_per_sm", "pred_l1_oversubscription", "pred_l2_oversubscription",
    "pred_l2_redundant_load_bytes_per_lup", "pred_l2_redundant_store_bytes_per_lup",
    "pred_dram_capacity_miss_bytes_per_lup", "pred_dram_partial_store_read_bytes_per_lup",
    *(f"pred_{d}_{q}" for d in _DIMS for q in ("overlap_bytes_per_lup", "hit_rate", "oversubscription")),
    # predicted, totals of one launch
    "pred_l1_wavefronts", "pred_l2_load_bytes", "pred_l2_store_bytes",
    "pred_dram_load_bytes", "pred_dram_store_bytes",
)


# --------------------------------------------------------------------------------------------
# results


@dataclass(frozen=True)
class GpuInfo:
    """The GPU a measurement ran on. Clocks in MHz; 0 when unknown."""

    name: str
    driver: str = ""  # driver version (nvidia-smi), or the CUDA driver API version
    cuda_driver_api: str = ""  # e.g. "12.4" (cudaDriverGetVersion)
    compute_capability: str = ""
    sm_clock_mhz: float = 0.0  # current SM clock
    sm_clock_max_mhz: float = 0.0
    memory_clock_mhz: float = 0.0
    sms: int = 0

    def metadata(self) -> dict[str, str]:
        """The CSV comment-block entries (``gpu_name``, ``driver``, ``sm_clock_mhz``, ...)."""
        d = {k: str(v) for k, v in asdict(self).items()}
        d["gpu_name"] = d.pop("name")
        d["gpu_sms"] = d.pop("sms")
        return d


@dataclass(frozen=True)
class Timing:
    """Run times of the timed launches of one configuration, seconds."""

    samples_s: tuple[float, ...]

    def __post_init__(self) -> None:
        if not self.samples_s:
            raise MeasurementError("a timing needs at least one timed launch; got none")
        if any(not math.isfinite(t) or t <= 0 for t in self.samples_s):
            raise MeasurementError(f"launch times must be positive finite seconds, got {self.samples_s}")

    @property
    def median_s(self) -> float:
        return float(statistics.median(self.samples_s))

    @property
    def min_s(self) -> float:
        return float(min(self.samples_s))

    @property
    def max_s(self) -> float:
        return float(max(self.samples_s))

    @property
    def repeats(self) -> int:
        return len(self.samples_s)


@dataclass(frozen=True)
class FieldAllocation:
    """One kernel argument array: shape and element strides as pystencils expects them."""

    name: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # elements
    dtype: str  # numpy dtype name

    @property
    def buffer_elements(self) -> int:
        """Elements of the flat buffer that holds every index (1 + sum (n_i - 1) * stride_i)."""
        return allocation_elements(self.shape, self.strides)


@dataclass(frozen=True)
class LaunchPlan:
    """One configuration ready to compile and run (JSON-serialisable for the ncu child).

    ``block`` and ``grid`` are the CUDA launch dimensions (x, y, z); ``lups`` the lattice
    updates of one launch (interior cells of the domain).
    """

    kernel: str
    domain: tuple[int, ...]
    block: Triple
    fold: Triple
    grid: Triple
    function_name: str
    lups: int
    fields: tuple[FieldAllocation, ...] = ()
    scalars: tuple[str, ...] = ()

    @property
    def config(self) -> Config:
        return Config(self.block, self.fold)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @staticmethod
    def from_json(text: str) -> "LaunchPlan":
        try:
            d = json.loads(text)
            fields = tuple(FieldAllocation(f["name"], tuple(f["shape"]), tuple(f["strides"]), f["dtype"])
                           for f in d["fields"])
            return LaunchPlan(kernel=d["kernel"], domain=tuple(d["domain"]), block=tuple(d["block"]),
                              fold=tuple(d["fold"]), grid=tuple(d["grid"]), function_name=d["function_name"],
                              lups=int(d["lups"]), fields=fields, scalars=tuple(d["scalars"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise MeasurementError(f"invalid launch plan JSON ({exc}); expected LaunchPlan.to_json() output") from None


@dataclass(frozen=True)
class MeasurementTable:
    """A measurement campaign: metadata (the CSV's comment block) and one dict per row."""

    metadata: Mapping[str, str]
    rows: tuple[Mapping[str, Any], ...] = dc_field(default_factory=tuple)

    @property
    def kernel(self) -> str:
        return str(self.metadata.get("kernel", ""))

    @property
    def device(self) -> str:
        return str(self.metadata.get("device_model", ""))


# --------------------------------------------------------------------------------------------
# pure helpers


def allocation_elements(shape: Sequence[int], strides: Sequence[int]) -> int:
    """Elements a strided array of ``shape`` with element ``strides`` spans (>= 1)."""
    if len(shape) != len(strides):
        raise MeasurementError(f"shape {tuple(shape)} and strides {tuple(strides)} differ in length")
    if any(n <= 0 for n in shape) or any(s <= 0 for s in strides):
        raise MeasurementError(f"shape {tuple(shape)} and strides {tuple(strides)} must be positive")
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides))


def kernel_function_name(kernel: str, config: Config) -> str:
    """A CUDA function name unique per configuration (for ``ncu --kernel-name``)."""
    stem = re.sub(r"[^0-9A-Za-z]+", "_", kernel).strip("_")
    return "ws_{}_b{}_f{}".format(stem, "x".join(map(str, config.block)), "x".join(map(str, config.fold)))


def ncu_command(child: Sequence[str], kernel_name: str | None = None,
                metrics: Sequence[str] = tuple(NCU_METRICS), clock_control: str = DEFAULT_NCU_CLOCK_CONTROL,
                launch_skip: int = 0, launch_count: int = 1, ncu: str = "ncu") -> list[str]:
    """The Nsight Compute command line that profiles ``child`` (argv of the profiled program).

    ``--csv --page raw`` prints one row per profiled launch; ``--print-units base`` avoids
    scaled units (the parser handles them anyway). ``kernel_name`` restricts profiling to that
    CUDA function (cupy's own fill kernels are skipped).
    """
    if clock_control not in NCU_CLOCK_CONTROLS:
        raise MeasurementError(f"ncu clock control {clock_control!r} unknown; allowed: {', '.join(NCU_CLOCK_CONTROLS)}")
    if launch_skip < 0 or launch_count < 1:
        raise MeasurementError(f"launch_skip must be >= 0 and launch_count >= 1, got {launch_skip}, {launch_count}")
    if not metrics:
        raise MeasurementError("ncu_command needs at least one metric")
    if not child:
        raise MeasurementError("ncu_command needs the command of the program to profile")
    cmd = [ncu, "--csv", "--page", "raw", "--print-units", "base", "--metrics", ",".join(metrics),
           "--clock-control", clock_control, "--target-processes", "all",
           "--launch-skip", str(launch_skip), "--launch-count", str(launch_count)]
    if kernel_name:
        cmd += ["--kernel-name", kernel_name]
    return cmd + list(child)


def child_command(plan: LaunchPlan, launches: int = 1, python: str | None = None) -> list[str]:
    """argv of the child process that runs ``plan`` ``launches`` times (for ncu)."""
    return [python or sys.executable, "-m", "warpspeed.validation.measure", plan.to_json(), str(launches)]


def _unit_scale(unit: str) -> float | None:
    """Factor from ``unit`` to its base unit (byte, sector, cycle, cycle/second, ...); None if unknown."""
    u = unit.strip().lower()
    if u in ("", "%"):
        return 1.0
    if "/" in u:
        num, den = u.split("/", 1)
        scale_num = _unit_scale(num)
        scale_den = _TIME_UNITS.get(den) or _unit_scale(den)
        return None if scale_num is None or not scale_den else scale_num / scale_den
    if u in _TIME_UNITS:
        return _TIME_UNITS[u]
    if u.endswith("hz"):
        return _UNIT_PREFIX.get(u[:-2])
    if u.endswith("s") and u[:-1].endswith(_COUNT_UNITS):  # plural: "bytes", "cycles"
        u = u[:-1]
    for base in _COUNT_UNITS:
        if u.endswith(base):
            return _UNIT_PREFIX.get(u[: -len(base)])
    return None


def parse_ncu_number(text: str) -> float:
    """A number as ncu prints it: thousands separators, ``n/a`` -> NaN."""
    t = text.strip().replace(",", "").replace("\u202f", "").replace(" ", "")
    if t in ("", "n/a", "N/A", "(!)n/a", "-"):
        return math.nan
    try:
        return float(t)
    except ValueError:
        raise MeasurementError(f"ncu value {text!r} is not a number") from None


#: Identification columns of ncu's raw page, and the keys :func:`parse_ncu_csv` gives them.
_NCU_ID_COLUMNS = {"ID": "id", "Kernel Name": "kernel_name", "Block Size": "block_size",
                   "Grid Size": "grid_size", "Device": "device", "Process ID": "process_id",
                   "Process Name": "process_name", "Stream": "stream", "CC": "cc", "Context": "context",
                   "Host Name": "host_name"}


def _is_metric(column: str) -> bool:
    """ncu metric names contain a double underscore (``unit__counter.rollup``)."""
    return "__" in column and column not in _NCU_ID_COLUMNS


def parse_ncu_csv(text: str) -> list[dict[str, Any]]:
    """Parse ``ncu --csv --page raw`` output: one dict per profiled launch.

    Lines before the header (``==PROF==`` messages, program output) and after the table are
    ignored. A units row (empty ``ID``) scales every metric to its base unit (bytes, sectors,
    cycles, cycles/second), so ``Kbyte`` and ``Mbyte`` values come back in bytes. Keys:
    ``id`` (int), ``kernel_name``, ``block_size``, ``grid_size`` (tuples), ``device`` and the
    other identification columns, plus every metric column under its ncu name (float).
    """
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"') or line.startswith("ID,")), None)
    if start is None:
        raise MeasurementError("no ncu CSV table found (expected a header row starting with \"ID\"); "
                               "was ncu run with --csv --page raw?")
    body = [line for line in lines[start:] if line.strip() and not line.startswith("==")]
    reader = csv.reader(io.StringIO("\n".join(body)))
    header = [h.strip() for h in next(reader)]
    scales = [1.0] * len(header)
    records: list[dict[str, Any]] = []
    for row in reader:
        if len(row) != len(header):
            raise MeasurementError(f"ncu CSV row has {len(row)} cells, header has {len(header)}: {row[:3]}")
        cells = dict(zip(header, row))
        if not cells.get("ID", "").strip():  # units row
            scales = []
            for h, cell in zip(header, row):
                scale = _unit_scale(cell) if _is_metric(h) else 1.0
                if scale is None:
                    raise MeasurementError(f"ncu metric {h!r} has unit {cell!r}, which is not understood; "
                                           "known: byte, sector, cycle, ... with K/M/G prefixes, Hz, x/second")
                scales.append(scale)
            continue
        rec: dict[str, Any] = {}
        for h, cell, scale in zip(header, row, scales):
            key = _NCU_ID_COLUMNS.get(h)
            if key is None and not _is_metric(h):
                rec[h] = cell.strip()
            elif key is None:
                rec[h] = parse_ncu_number(cell) * scale
            elif key in ("block_size", "grid_size"):
                rec[key] = tuple(int(v) for v in re.findall(r"\d+", cell))
            elif key in ("id", "process_id"):
                rec[key] = int(parse_ncu_number(cell))
            else:
                rec[key] = cell.strip()
        records.append(rec)
    return records


def counters_for_kernel(records: Sequence[Mapping[str, Any]], function_name: str,
                        metrics: Sequence[str] = tuple(NCU_METRICS)) -> dict[str, float]:
    """The counters of the last launch of ``function_name`` (name or a ``name(...)`` signature)."""
    matching = [r for r in records
                if str(r.get("kernel_name", "")).split("(")[0].strip() == function_name]
    if not matching:
        names = sorted({str(r.get("kernel_name", "")) for r in records}) or ["(none)"]
        raise MeasurementError(f"ncu profiled no launch of {function_name!r}; kernels seen: {', '.join(names)}")
    last = matching[-1]
    missing = [m for m in metrics if m not in last]
    if missing:
        raise MeasurementError(f"ncu output lacks metric(s) {', '.join(missing)} for {function_name!r}")
    return {m: float(last[m]) for m in metrics}


def parse_nvidia_smi(text: str) -> dict[str, str]:
    """Parse ``nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem
    --format=csv,noheader,nounits`` (first GPU line)."""
    keys = ("name", "driver", "sm_clock_mhz", "sm_clock_max_mhz", "memory_clock_mhz")
    for line in text.splitlines():
        if line.strip():
            parts = [p.strip() for p in line.split(",")]
            if len(parts) != len(keys):
                raise MeasurementError(f"nvidia-smi line {line!r} has {len(parts)} values; expected {len(keys)}")
            return dict(zip(keys, parts))
    raise MeasurementError("nvidia-smi printed no GPU line")


#: The nvidia-smi query :func:`parse_nvidia_smi` reads.
NVIDIA_SMI_QUERY = ["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem",
                    "--format=csv,noheader,nounits"]


def measured_columns(lups: int, timing: Timing | None, counters: Mapping[str, float] | None) -> dict[str, float]:
    """Measured values of one launch, raw and per lattice update (units in the column names)."""
    if lups <= 0:
        raise MeasurementError(f"lups per launch must be positive, got {lups}")
    nan = math.nan
    out: dict[str, float] = {}
    if timing is not None:
        out.update(time_median_s=timing.median_s, time_min_s=timing.min_s, time_max_s=timing.max_s,
                   time_repeats=timing.repeats, meas_lups_per_s=lups / timing.median_s)
    c = {col: (counters[m] if counters is not None and m in counters else nan) for m, col in NCU_METRICS.items()}
    out.update(c)
    out.update(
        meas_l1_wavefronts_per_lup=c["ncu_l1_wavefronts"] / lups,
        meas_l2_load_bytes=c["ncu_l2_read_sectors"] * NCU_SECTOR_BYTES,
        meas_l2_store_bytes=c["ncu_l2_write_sectors"] * NCU_SECTOR_BYTES,
        meas_l2_load_bytes_per_lup=c["ncu_l2_read_sectors"] * NCU_SECTOR_BYTES / lups,
        meas_l2_store_bytes_per_lup=c["ncu_l2_write_sectors"] * NCU_SECTOR_BYTES / lups,
        meas_dram_load_bytes_per_lup=c["ncu_dram_read_bytes"] / lups,
        meas_dram_store_bytes_per_lup=c["ncu_dram_write_bytes"] / lups,
    )
    return out


def prediction_record(prediction: Any) -> dict[str, Any]:
    """``Prediction.to_dict()`` plus the DRAM model terms the refit needs (``"dram_terms"``)."""
    d = dict(prediction.to_dict())
    dram = prediction.dram
    d["dram_terms"] = {
        "l2_oversubscription": dram.l2_oversubscription,
        "l2_redundant_load_bytes_per_lup": dram.l2_redundant_load_bytes_per_lup,
        "l2_redundant_store_bytes_per_lup": dram.l2_redundant_store_bytes_per_lup,
        "capacity_miss_bytes_per_lup": dram.capacity_miss_bytes_per_lup,
        "partial_store_read_bytes_per_lup": dram.partial_store_read_bytes_per_lup,
    }
    return d


def _num(value: Any) -> float:
    """None (JSON's infinity for an unlimited limiter) -> inf; anything else -> float."""
    return math.inf if value is None else float(value)


def predicted_columns(record: Mapping[str, Any], lups: int) -> dict[str, Any]:
    """Predicted columns from a :func:`prediction_record` (per lup and launch totals)."""
    r = record
    lim = r.get("limiters", {})
    terms = r.get("dram_terms", {})
    layers = r.get("layer_conditions", {})
    out: dict[str, Any] = {
        "pred_lups_per_s": _num(r["lups_per_s"]), "pred_limiter": r.get("limiter", ""),
        **{f"pred_{k}_lups_per_s": _num(lim.get(k)) for k in ("fp", "l1", "l2", "dram")},
        "pred_l1_wavefronts_per_lup": float(r["l1_cycles_per_lup"]),
        "pred_l1_load_bytes_per_lup": float(r["l1_load_bytes_per_lup"]),
        "pred_l2_load_compulsory_bytes_per_lup": float(r["l2_load_compulsory_bytes_per_lup"]),
        "pred_l2_load_bytes_per_lup": float(r["l2_load_bytes_per_lup"]),
        "pred_l2_store_bytes_per_lup": float(r["l2_store_bytes_per_lup"]),
        "pred_dram_load_compulsory_bytes_per_lup": float(r["dram_load_compulsory_bytes_per_lup"]),
        "pred_dram_store_compulsory_bytes_per_lup": float(r["dram_store_compulsory_bytes_per_lup"]),
        "pred_dram_load_bytes_per_lup": float(r["dram_load_bytes_per_lup"]),
        "pred_dram_store_bytes_per_lup": float(r["dram_store_bytes_per_lup"]),
        "pred_blocks_per_sm": r.get("blocks_per_sm", ""),
        "pred_l1_oversubscription": float(r.get("l1_oversubscription", math.nan)),
        "pred_l2_oversubscription": float(terms.get("l2_oversubscription", math.nan)),
        "pred_l2_redundant_load_bytes_per_lup": float(terms.get("l2_redundant_load_bytes_per_lup", math.nan)),
        "pred_l2_redundant_store_bytes_per_lup": float(terms.get("l2_redundant_store_bytes_per_lup", math.nan)),
        "pred_dram_capacity_miss_bytes_per_lup": float(terms.get("capacity_miss_bytes_per_lup", math.nan)),
        "pred_dram_partial_store_read_bytes_per_lup": float(terms.get("partial_store_read_bytes_per_lup", math.nan)),
    }
    for d in _DIMS:
        lc = layers.get(d, {})
        out[f"pred_{d}_overlap_bytes_per_lup"] = float(lc.get("overlap_bytes_per_lup", 0.0))
        out[f"pred_{d}_hit_rate"] = float(lc.get("hit_rate", math.nan))
        out[f"pred_{d}_oversubscription"] = float(lc.get("oversubscription", math.nan))
    out.update(
        pred_l1_wavefronts=out["pred_l1_wavefronts_per_lup"] * lups,
        pred_l2_load_bytes=out["pred_l2_load_bytes_per_lup"] * lups,
        pred_l2_store_bytes=out["pred_l2_store_bytes_per_lup"] * lups,
        pred_dram_load_bytes=out["pred_dram_load_bytes_per_lup"] * lups,
        pred_dram_store_bytes=out["pred_dram_store_bytes_per_lup"] * lups,
    )
    return out


def assemble_row(config: Config, grid: Sequence[int], lups: int, timing: Timing | None,
                 counters: Mapping[str, float] | None, prediction: Mapping[str, Any] | None,
                 error: str = "") -> dict[str, Any]:
    """One CSV row: configuration, measured values and predictions side by side.

    ``prediction`` is a :func:`prediction_record`; missing parts (no ncu, failed prediction)
    become NaN cells, ``error`` says why.
    """
    row: dict[str, Any] = {c: math.nan for c in CSV_COLUMNS}
    row.update(config=config.label.replace(" ", "_"), error=error, lups=lups, pred_limiter="")
    for i, d in enumerate(_DIMS):
        row[f"block_{d}"] = config.block[i]
        row[f"fold_{d}"] = config.fold[i]
        row[f"grid_{d}"] = int(grid[i]) if i < len(grid) else 1
    row.update(measured_columns(lups, timing, counters))
    if prediction is not None:
        row.update(predicted_columns(prediction, lups))
    return row


def _cell(value: Any) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    return str(value)


def write_measurement_csv(path: str | Path, metadata: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> Path:
    """Write the comment block (``# key: value``), the header and the rows; creates parents."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    buf.write(f"# {CSV_FORMAT}\n")
    for key, value in metadata.items():
        text = str(value).replace("\n", " ")
        if ":" in key or not key:
            raise MeasurementError(f"metadata key {key!r} must be non-empty and contain no ':'")
        buf.write(f"# {key}: {text}\n")
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        unknown = sorted(set(row) - set(CSV_COLUMNS))
        if unknown:
            raise MeasurementError(f"row has unknown column(s) {', '.join(unknown)}; columns: see CSV_COLUMNS")
        writer.writerow([_cell(row.get(c, math.nan)) for c in CSV_COLUMNS])
    p.write_text(buf.getvalue())
    return p


#: Columns that stay strings when reading a measurement CSV.
_TEXT_COLUMNS = {"config", "error", "pred_limiter"}


def read_measurement_csv(path: str | Path) -> MeasurementTable:
    """Read a measurement CSV: metadata from the comment block, numbers as floats (empty: NaN)."""
    p = Path(path)
    if not p.is_file():
        raise MeasurementError(f"measurement file {str(p)!r} does not exist")
    metadata: dict[str, str] = {}
    lines = p.read_text().splitlines()
    body = []
    for line in lines:
        if line.startswith("#"):
            text = line[1:].strip()
            if ":" in text:
                key, value = text.split(":", 1)
                metadata[key.strip()] = value.strip()
        elif line.strip():
            body.append(line)
    if not body:
        raise MeasurementError(f"{str(p)!r}: no header row; expected the columns of warpspeed.measure.CSV_COLUMNS")
    reader = csv.DictReader(io.StringIO("\n".join(body)))
    required = ("block_x", "block_y", "block_z", "fold_x", "fold_y", "fold_z")
    missing = [c for c in required if c not in (reader.fieldnames or [])]
    if missing:
        raise MeasurementError(f"{str(p)!r}: missing column(s) {', '.join(missing)}")
    rows = []
    for i, raw in enumerate(reader, start=2):
        row: dict[str, Any] = {}
        for key, text in raw.items():
            if key is None:
                raise MeasurementError(f"{str(p)!r} data row {i}: more cells than header columns")
            text = (text or "").strip()
            if key in _TEXT_COLUMNS:
                row[key] = text
            elif text == "":
                row[key] = math.nan
            else:
                try:
                    row[key] = float(text)
                except ValueError:
                    raise MeasurementError(f"{str(p)!r} data row {i}: column {key!r} value {text!r} "
                                           "is not a number") from None
        for c in required:
            row[c] = int(row[c])
        rows.append(row)
    return MeasurementTable(metadata=metadata, rows=tuple(rows))


def default_output_path(device: str, kernel: str, root: str | Path = Path("fits") / "data") -> Path:
    """``fits/data/<device>/<kernel>.csv`` (relative to the working directory by default)."""
    return Path(root) / device / f"{kernel}.csv"


# --------------------------------------------------------------------------------------------
# kernel generation (pystencils, no GPU needed)


def measurable_kernels() -> dict[str, str]:
    """Kernels the runner can generate: the pystencils plugin's workloads (name -> description)."""
    try:
        from pystencils_plugin.workloads import WORKLOADS
    except ImportError as exc:
        raise MeasurementError(f"the runner generates kernels with pystencils, which cannot be imported ({exc}); "
                               "install warpspeed[pystencils]") from None
    return {name: desc for name, (desc, _) in WORKLOADS.items()}


def default_domain(kernel: str) -> tuple[int, ...]:
    """The workload's default domain (cells)."""
    from pystencils_plugin.workloads import WORKLOADS

    if kernel not in WORKLOADS:
        raise MeasurementError(f"kernel {kernel!r} has no pystencils workload; measurable kernels: "
                               f"{', '.join(measurable_kernels())}")
    return tuple(WORKLOADS[kernel][1])


def plan_launch(kernel: str, config: Config, domain: Sequence[int] | None = None) -> tuple[LaunchPlan, Any]:
    """Generate ``config``'s CUDA kernel with pystencils and fix its launch geometry.

    Returns the plan and the pystencils ``GpuKernel`` (compile it with ``.compile()`` on a GPU
    machine). Raises :class:`MeasurementError` for unknown kernels and pystencils' refusals
    (e.g. a domain not divisible by the fold).
    """
    measurable = measurable_kernels()
    if kernel not in measurable:
        raise MeasurementError(f"kernel {kernel!r} has no pystencils workload; measurable kernels: "
                               f"{', '.join(measurable)}")
    import pystencils as ps

    from pystencils_plugin.folding import create_folded_kernel
    from pystencils_plugin.workloads import workload_assignments

    dom = tuple(domain) if domain is not None else default_domain(kernel)
    name = kernel_function_name(kernel, config)
    try:
        gpu_kernel = create_folded_kernel(workload_assignments(kernel, dom), fold=config.fold,
                                          target=ps.Target.CUDA, function_name=name)
        launch = gpu_kernel.get_launch_configuration()
        launch.trim_block_size(tuple(config.block))
        block, grid = launch.evaluate()
    except WarpspeedError:
        raise
    except Exception as exc:  # pystencils' CodegenError and friends
        raise MeasurementError(f"pystencils cannot generate {kernel!r} for {config.label}: {exc}") from None
    block = tuple(int(b) for b in block) + (1,) * (3 - len(block))
    grid = tuple(int(g) for g in grid) + (1,) * (3 - len(grid))
    if block != tuple(config.block):
        raise MeasurementError(f"pystencils trimmed block {config.block} to {block} on domain {dom}; "
                               "use a domain at least as large as block x fold along every axis")
    fields = []
    for f in sorted(gpu_kernel.get_fields(), key=lambda f: f.name):
        shape = tuple(int(s) for s in f.shape)
        strides = tuple(int(s) for s in f.strides)
        fields.append(FieldAllocation(f.name, shape, strides, str(f.dtype.numpy_dtype)))
    scalars = tuple(sorted(p.name for p in gpu_kernel.parameters if not p.is_field_parameter))
    lups = math.prod(dom)
    plan = LaunchPlan(kernel=kernel, domain=dom, block=block, fold=tuple(config.fold), grid=grid,  # type: ignore[arg-type]
                      function_name=name, lups=lups, fields=tuple(fields), scalars=scalars)
    return plan, gpu_kernel


# --------------------------------------------------------------------------------------------
# the GPU-executing part


class GpuRunner(Protocol):
    """Something that times planned launches on a GPU."""

    def info(self) -> GpuInfo: ...

    def time(self, plan: LaunchPlan, gpu_kernel: Any, warmup: int, repeats: int) -> Timing: ...


class Profiler(Protocol):
    """Something that returns the :data:`NCU_METRICS` counters of one launch of a plan."""

    def profile(self, plan: LaunchPlan) -> dict[str, float]: ...

    def version(self) -> str: ...


def _import_cupy() -> Any:
    try:
        import cupy  # noqa: PLC0415 - lazily: only GPU machines have it
    except ImportError as exc:
        raise MeasurementError(f"measuring needs cupy and an NVIDIA GPU: cupy cannot be imported ({exc}); "
                               "install cupy-cuda12x (or the package for your CUDA version) on a GPU machine") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # cupy raises CUDARuntimeError when no driver/GPU is present
        raise MeasurementError(f"measuring needs an NVIDIA GPU: cupy found none ({exc})") from None
    if count < 1:
        raise MeasurementError("measuring needs an NVIDIA GPU: cupy reports 0 devices")
    return cupy


def _allocate(cp: Any, plan: LaunchPlan) -> dict[str, Any]:
    arrays: dict[str, Any] = {}
    for f in plan.fields:
        buf = cp.ones(f.buffer_elements, dtype=f.dtype)
        item = buf.dtype.itemsize
        arrays[f.name] = cp.lib.stride_tricks.as_strided(buf, shape=f.shape, strides=tuple(s * item for s in f.strides))
    for s in plan.scalars:
        arrays[s] = DEFAULT_SCALAR_VALUE
    return arrays


class CupyRunner:
    """Times launches with cupy and CUDA events on GPU ``device_id``.

    Raises :class:`MeasurementError` on construction when cupy or a GPU is missing.
    """

    def __init__(self, device_id: int = 0, run: Callable[..., Any] = subprocess.run) -> None:
        self._cp = _import_cupy()
        self._device_id = device_id
        self._run = run

    def info(self) -> GpuInfo:
        cp = self._cp
        props = cp.cuda.runtime.getDeviceProperties(self._device_id)
        name = props.get("name", b"")
        name = name.decode() if isinstance(name, bytes) else str(name)
        api = cp.cuda.runtime.driverGetVersion()
        smi: dict[str, str] = {}
        if shutil.which(NVIDIA_SMI_QUERY[0]):
            done = self._run(NVIDIA_SMI_QUERY + ["-i", str(self._device_id)], capture_output=True, text=True)
            if done.returncode == 0:
                smi = parse_nvidia_smi(done.stdout)

        def mhz(key: str, prop: str) -> float:
            try:
                return float(smi[key])
            except (KeyError, ValueError):
                return float(props.get(prop, 0)) / 1000.0  # kHz

        return GpuInfo(name=smi.get("name", name), driver=smi.get("driver", ""),
                       cuda_driver_api=f"{api // 1000}.{api % 1000 // 10}",
                       compute_capability=f"{props.get('major', '')}.{props.get('minor', '')}",
                       sm_clock_mhz=mhz("sm_clock_mhz", "clockRate"),
                       sm_clock_max_mhz=mhz("sm_clock_max_mhz", "clockRate"),
                       memory_clock_mhz=mhz("memory_clock_mhz", "memoryClockRate"),
                       sms=int(props.get("multiProcessorCount", 0)))

    def _prepare(self, plan: LaunchPlan, gpu_kernel: Any) -> Callable[[], None]:
        cp = self._cp
        with cp.cuda.Device(self._device_id):
            wrapper = gpu_kernel.compile()
            wrapper.launch_config.trim_block_size(plan.block)
            block, grid = wrapper.launch_config.evaluate()
            if (tuple(block), tuple(grid)) != (plan.block, plan.grid):
                raise MeasurementError(f"pystencils would launch block {tuple(block)}, grid {tuple(grid)}; "
                                       f"planned block {plan.block}, grid {plan.grid}")
            args = _allocate(cp, plan)
        return lambda: wrapper(**args)

    def launch(self, plan: LaunchPlan, gpu_kernel: Any, count: int = 1) -> None:
        """Run ``count`` launches (the ncu child)."""
        call = self._prepare(plan, gpu_kernel)
        for _ in range(count):
            call()
        self._cp.cuda.Device(self._device_id).synchronize()

    def time(self, plan: LaunchPlan, gpu_kernel: Any, warmup: int, repeats: int) -> Timing:
        cp = self._cp
        call = self._prepare(plan, gpu_kernel)
        with cp.cuda.Device(self._device_id):
            for _ in range(warmup):
                call()
            samples = []
            for _ in range(repeats):
                start, end = cp.cuda.Event(), cp.cuda.Event()
                start.record()
                call()
                end.record()
                end.synchronize()
                samples.append(cp.cuda.get_elapsed_time(start, end) / 1e3)  # ms -> s
        return Timing(tuple(samples))


class NcuProfiler:
    """Profiles one launch of a plan with Nsight Compute in a child process."""

    def __init__(self, ncu: str | None = None, clock_control: str = DEFAULT_NCU_CLOCK_CONTROL,
                 run: Callable[..., Any] = subprocess.run, timeout_s: float = 600.0) -> None:
        path = ncu or shutil.which("ncu")
        if not path:
            raise MeasurementError("Nsight Compute (ncu) is not on PATH; install it or pass --no-ncu")
        self._ncu = path
        self._clock = clock_control
        self._run = run
        self._timeout = timeout_s

    def version(self) -> str:
        """ncu's version line and the clock control used (for the CSV metadata)."""
        done = self._run([self._ncu, "--version"], capture_output=True, text=True, timeout=60)
        lines = [line for line in (done.stdout or "").splitlines() if line.strip()]
        return f"{lines[-1].strip() if lines else 'unknown version'} (clock control {self._clock})"

    def command(self, plan: LaunchPlan) -> list[str]:
        return ncu_command(child_command(plan), kernel_name=plan.function_name,
                           clock_control=self._clock, ncu=self._ncu)

    def profile(self, plan: LaunchPlan) -> dict[str, float]:
        done = self._run(self.command(plan), capture_output=True, text=True, timeout=self._timeout)
        if done.returncode != 0:
            tail = ((done.stderr or "") + (done.stdout or ""))[-800:]
            raise MeasurementError(f"ncu failed with exit code {done.returncode} for {plan.function_name}: {tail}")
        return counters_for_kernel(parse_ncu_csv(done.stdout), plan.function_name)


# --------------------------------------------------------------------------------------------
# the campaign


def measure(kernel: str, device: Any, configs: Sequence[Config], runner: GpuRunner,
            profiler: Profiler | None = None, domain: Sequence[int] | None = None,
            warmup: int = DEFAULT_WARMUP, repeats: int = DEFAULT_REPEATS,
            predictor: Any = None, progress: Callable[[int], None] | None = None) -> MeasurementTable:
    """Measure and predict every configuration of ``configs``.

    Args:
        kernel: a pystencils workload name (see :func:`measurable_kernels`).
        device: the model's :class:`~warpspeed.device.Device` (its name goes into the metadata).
        runner: times launches (:class:`CupyRunner` on a GPU machine).
        profiler: collects counters (:class:`NcuProfiler`), or None to skip counters.
        domain: cells (default: the workload's).
        warmup, repeats: untimed and timed launches per configuration.
        predictor: a :class:`~warpspeed.predict.Predictor` (default: built for the kernel,
            resolved like ``warpspeed rank --kernel``).

    A configuration that cannot be generated, run or predicted becomes a row with ``error``.
    """
    if warmup < 0 or repeats < 1:
        raise MeasurementError(f"warmup must be >= 0 and repeats >= 1, got {warmup} and {repeats}")
    dom = tuple(domain) if domain is not None else default_domain(kernel)
    if predictor is None:
        from warpspeed.kernel.catalog import resolve_kernel
        from warpspeed.predict import Predictor

        predictor = Predictor(resolve_kernel(kernel, dom), device)
    info = runner.info()
    rows = []
    family = ""
    for i, config in enumerate(configs, 1):
        errors = []
        record = None
        try:
            p = predictor.predict(config.block, config.fold)
            record = prediction_record(p)
            family = p.dram.curves_family
        except WarpspeedError as exc:
            errors.append(f"prediction: {exc}")
        timing = counters = None
        grid: Sequence[int] = (0, 0, 0)
        try:
            plan, gpu_kernel = plan_launch(kernel, config, dom)
            grid = plan.grid
            timing = runner.time(plan, gpu_kernel, warmup, repeats)
            if profiler is not None:
                counters = profiler.profile(plan)
        except WarpspeedError as exc:
            errors.append(str(exc))
        rows.append(assemble_row(config, grid, math.prod(dom), timing, counters, record, "; ".join(errors)))
        if progress:
            progress(i)
    metadata = {
        "kernel": kernel, "device_model": getattr(device, "name", str(device)),
        "domain": "x".join(map(str, dom)), "lups_per_launch": math.prod(dom),
        **info.metadata(), "warmup": warmup, "repeats": repeats,
        "ncu": profiler.version() if profiler is not None else "not used",
        "curves_family": family,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "warpspeed_version": _version(),
    }
    return MeasurementTable(metadata={k: str(v) for k, v in metadata.items()}, rows=tuple(rows))


def _version() -> str:
    from warpspeed import __version__

    return __version__


def _child_main(argv: Sequence[str]) -> int:
    """``python -m warpspeed.validation.measure PLAN_JSON [LAUNCHES]``: run a plan (profiled by ncu)."""
    if not 1 <= len(argv) <= 2:
        raise MeasurementError("usage: python -m warpspeed.validation.measure PLAN_JSON [LAUNCHES]")
    plan = LaunchPlan.from_json(argv[0])
    launches = int(argv[1]) if len(argv) == 2 else 1
    rebuilt, gpu_kernel = plan_launch(plan.kernel, plan.config, plan.domain)
    CupyRunner().launch(rebuilt, gpu_kernel, launches)
    return 0


if __name__ == "__main__":  # pragma: no cover - runs under ncu on a GPU machine
    sys.exit(_child_main(sys.argv[1:]))
