"""Nsight Compute (``ncu``): the counters collected, the command line, and parsing its CSV output.

:func:`ncu_command` and :func:`child_command` build the command lines and :func:`parse_ncu_csv`
parses ``ncu --csv --page raw`` output (all pure, tested offline); :class:`NcuProfiler` runs
them in a subprocess on a GPU machine.
"""

from __future__ import annotations

import csv
import io
import math
import re
import shutil
import subprocess
import sys
from typing import Any, Callable, Mapping, Sequence

from warpspeed.validation.plan import LaunchPlan, MeasurementError

#: Nsight Compute metrics collected per launch, and the CSV column of each raw value.
#: Sources: Ernst, Holzer, Hager, Knorr, Wellein: "Analytical Performance Estimation during
#: Code Generation on Modern GPUs", Journal of Parallel and Distributed Computing, 2023,
#: sections 5.4 (``l1tex__data_pipe_lsu_wavefronts``) and 5.5
#: (``lts__t_sectors_srcunit_tex_op_read``); the store counterpart and the DRAM byte counters of
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

#: Seconds one ncu run may take before it is abandoned (it replays the kernel once per metric pass).
DEFAULT_NCU_TIMEOUT_S = 600.0

#: Unit prefixes Nsight Compute prints with ``--print-units auto`` (decimal SI, and binary).
_UNIT_PREFIX: dict[str, float] = {
    "": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12,
    "ki": 2.0**10, "mi": 2.0**20, "gi": 2.0**30, "ti": 2.0**40,
}
_TIME_UNITS: dict[str, float] = {"second": 1.0, "msecond": 1e-3, "usecond": 1e-6, "nsecond": 1e-9}
#: Counted units of ncu metrics (prefixes allowed: Kbyte, Mbyte, Ksector, ...).
_COUNT_UNITS: tuple[str, ...] = ("byte", "sector", "cycle", "wavefront", "request", "inst", "warp",
                                 "thread", "block", "transaction")

#: Identification columns of ncu's raw page, and the keys :func:`parse_ncu_csv` gives them.
_NCU_ID_COLUMNS = {"ID": "id", "Kernel Name": "kernel_name", "Block Size": "block_size",
                   "Grid Size": "grid_size", "Device": "device", "Process ID": "process_id",
                   "Process Name": "process_name", "Stream": "stream", "CC": "cc", "Context": "context",
                   "Host Name": "host_name"}
_TRIPLE_KEYS = ("block_size", "grid_size")
_INT_KEYS = ("id", "process_id")


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


def child_command(plan: LaunchPlan, launches: int = 1, device_id: int = 0, python: str | None = None) -> list[str]:
    """argv of the child process that runs ``plan`` ``launches`` times on CUDA device ``device_id``
    (the index the parent process uses; the child inherits its environment, so
    ``CUDA_VISIBLE_DEVICES`` numbers devices the same way in both)."""
    if device_id < 0:
        raise MeasurementError(f"CUDA device index must be >= 0, got {device_id}")
    return [python or sys.executable, "-m", "warpspeed.validation.measure", plan.to_json(), str(launches),
            str(device_id)]


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


def _is_metric(column: str) -> bool:
    """ncu metric names contain a double underscore (``unit__counter.rollup``)."""
    return "__" in column and column not in _NCU_ID_COLUMNS


def _table_rows(text: str) -> list[list[str]]:
    """The CSV rows from the header (``"ID",...``) on, without ``==PROF==`` lines and blank lines."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"') or line.startswith("ID,")), None)
    if start is None:
        raise MeasurementError("no ncu CSV table found (expected a header row starting with \"ID\"); "
                               "was ncu run with --csv --page raw?")
    body = [line for line in lines[start:] if line.strip() and not line.startswith("==")]
    return list(csv.reader(io.StringIO("\n".join(body))))


def _unit_scales(header: Sequence[str], units: Sequence[str]) -> list[float]:
    """Factor to the base unit per column, from ncu's units row (1 for identification columns)."""
    scales = []
    for h, unit in zip(header, units):
        scale = _unit_scale(unit) if _is_metric(h) else 1.0
        if scale is None:
            raise MeasurementError(f"ncu metric {h!r} has unit {unit!r}, which is not understood; "
                                   "known: byte, sector, cycle, ... with K/M/G prefixes, Hz, x/second")
        scales.append(scale)
    return scales


def _parse_cell(column: str, text: str, scale: float) -> tuple[str, Any]:
    """(key, value) of one cell: metrics as floats in base units, identification columns typed."""
    key = _NCU_ID_COLUMNS.get(column)
    if key is None:
        return (column, parse_ncu_number(text) * scale) if _is_metric(column) else (column, text.strip())
    if key in _TRIPLE_KEYS:
        return key, tuple(int(v) for v in re.findall(r"\d+", text))
    if key in _INT_KEYS:
        return key, int(parse_ncu_number(text))
    return key, text.strip()


def parse_ncu_csv(text: str) -> list[dict[str, Any]]:
    """Parse ``ncu --csv --page raw`` output: one dict per profiled launch.

    Lines before the header (``==PROF==`` messages, program output) and after the table are
    ignored. A units row (empty ``ID``) scales every metric to its base unit (bytes, sectors,
    cycles, cycles/second), so ``Kbyte`` and ``Mbyte`` values come back in bytes. Keys:
    ``id`` (int), ``kernel_name``, ``block_size``, ``grid_size`` (tuples), ``device`` and the
    other identification columns, plus every metric column under its ncu name (float).
    """
    header, *rows = _table_rows(text)
    header = [h.strip() for h in header]
    scales = [1.0] * len(header)
    records: list[dict[str, Any]] = []
    for row in rows:
        if len(row) != len(header):
            raise MeasurementError(f"ncu CSV row has {len(row)} cells, header has {len(header)}: {row[:3]}")
        if not row[header.index("ID")].strip():  # the units row
            scales = _unit_scales(header, row)
        else:
            records.append(dict(_parse_cell(h, c, s) for h, c, s in zip(header, row, scales)))
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


class NcuProfiler:
    """Profiles one launch of a plan with Nsight Compute in a child process on CUDA device ``device_id``."""

    def __init__(self, ncu: str | None = None, clock_control: str = DEFAULT_NCU_CLOCK_CONTROL,
                 run: Callable[..., Any] = subprocess.run, timeout_s: float = DEFAULT_NCU_TIMEOUT_S,
                 device_id: int = 0) -> None:
        path = ncu or shutil.which("ncu")
        if not path:
            raise MeasurementError("Nsight Compute (ncu) is not on PATH; install it or pass --no-ncu")
        self._ncu = path
        self._clock = clock_control
        self._run = run
        self._timeout = timeout_s
        self._device_id = device_id

    def version(self) -> str:
        """ncu's version line and the clock control used (for the CSV metadata)."""
        done = self._run([self._ncu, "--version"], capture_output=True, text=True, timeout=60)
        lines = [line for line in (done.stdout or "").splitlines() if line.strip()]
        return f"{lines[-1].strip() if lines else 'unknown version'} (clock control {self._clock})"

    def command(self, plan: LaunchPlan) -> list[str]:
        """The ncu command line that profiles one launch of ``plan`` on this profiler's device."""
        return ncu_command(child_command(plan, device_id=self._device_id), kernel_name=plan.function_name,
                           clock_control=self._clock, ncu=self._ncu)

    def profile(self, plan: LaunchPlan) -> dict[str, float]:
        done = self._run(self.command(plan), capture_output=True, text=True, timeout=self._timeout)
        if done.returncode != 0:
            tail = ((done.stderr or "") + (done.stdout or ""))[-800:]
            raise MeasurementError(f"ncu failed with exit code {done.returncode} for {plan.function_name}: {tail}")
        return counters_for_kernel(parse_ncu_csv(done.stdout), plan.function_name)
