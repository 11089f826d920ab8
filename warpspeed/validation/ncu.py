"""Nsight Compute (``ncu``): the counters collected, the command lines, and the profiler.

:func:`ncu_command`, :func:`kernel_name_filter` and :func:`child_command` build the command lines
(pure, tested offline); :mod:`warpspeed.validation.ncu_csv` parses ncu's raw CSV page;
:class:`NcuProfiler` runs one ncu process per chunk of configurations on a GPU machine: one child
process builds and launches every configuration of the chunk once, and ncu profiles the launches
of their functions (each configuration has its own function name,
:func:`warpspeed.validation.plan.kernel_function_name`).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence

from warpspeed.files.atomic import write_text_atomic
from warpspeed.units import SECTOR_BYTES
from warpspeed.validation.ncu_csv import counters_for_kernel, parse_ncu_csv, parse_ncu_number, unit_scale
from warpspeed.validation.plan import LaunchPlan, MeasurementError

__all__ = [
    "NCU_METRICS", "NCU_SECTOR_BYTES", "NcuProfiler", "child_command", "counters_for_kernel",
    "kernel_name_filter", "ncu_command", "ncu_timeout_s", "parse_ncu_csv", "parse_ncu_number", "unit_scale",
]

#: Nsight Compute metrics collected per launch, and the CSV column of each raw value.
#: Sources: Ernst, Holzer, Hager, Knorr, Wellein: "Analytical Performance Estimation during
#: Code Generation on Modern GPUs", Journal of Parallel and Distributed Computing, 2023,
#: sections 5.4 (``l1tex__data_pipe_lsu_wavefronts``) and 5.5
#: (``lts__t_sectors_srcunit_tex_op_read``); the store counterpart and the DRAM byte counters of
#: the Nsight Compute Kernel Profiling Guide ("Metrics Reference"), elapsed cycles
#: ``gpc__cycles_elapsed.max`` (the "Elapsed Cycles" of the SpeedOfLight section), the SM
#: clock ``sm__cycles_elapsed.avg.per_second`` ("SM Frequency") and the duration of the profiled
#: launch ``gpu__time_duration.sum`` ("Duration"; caches flushed, so it is not the timed run).
#: All of them come from one replay pass on an H200 (``profiler__replayer_passes`` = 1 in
#: Nsight Compute 2025.3.1's raw page).
NCU_METRICS: dict[str, str] = {
    "l1tex__data_pipe_lsu_wavefronts.sum": "ncu_l1_wavefronts",
    "lts__t_sectors_srcunit_tex_op_read.sum": "ncu_l2_read_sectors",
    "lts__t_sectors_srcunit_tex_op_write.sum": "ncu_l2_write_sectors",
    "dram__bytes_read.sum": "ncu_dram_read_bytes",
    "dram__bytes_write.sum": "ncu_dram_write_bytes",
    "gpc__cycles_elapsed.max": "ncu_cycles_elapsed",
    "sm__cycles_elapsed.avg.per_second": "ncu_sm_clock_hz",
    "gpu__time_duration.sum": "ncu_duration_s",
}

#: Bytes per L2 sector counted by ``lts__t_sectors*`` (Nsight Compute Kernel Profiling Guide,
#: "Memory Tables": a sector is an aligned 32-byte chunk of a 128-byte cache line): the one
#: definition, :data:`warpspeed.units.SECTOR_BYTES`.
NCU_SECTOR_BYTES = SECTOR_BYTES

#: Nsight Compute's clock control during profiling. ``none`` leaves the GPU at the clocks the
#: timed runs had (ncu's default ``base`` locks them to the base clock); volumes do not depend
#: on it, the recorded SM clock does.
DEFAULT_NCU_CLOCK_CONTROL = "none"
NCU_CLOCK_CONTROLS = ("none", "base")

#: Seconds an ncu run may take before it is abandoned: a fixed part for starting ncu, Python and
#: the imports of the child (6.5 s for a whole one-configuration run on an H200, 2026-11-26), and a
#: part per configuration for generating, compiling and profiling it. Generous choices: a timeout
#: only ends a run that hangs.
NCU_TIMEOUT_BASE_S = 120.0
NCU_TIMEOUT_PER_CONFIG_S = 30.0

#: A CUDA function name that may appear in ncu's ``--kernel-name regex:`` filter unescaped.
_FUNCTION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def ncu_timeout_s(configurations: int) -> float:
    """Seconds one ncu run over ``configurations`` configurations may take."""
    return NCU_TIMEOUT_BASE_S + NCU_TIMEOUT_PER_CONFIG_S * max(1, configurations)


def kernel_name_filter(function_names: Sequence[str]) -> str:
    """ncu's ``--kernel-name`` value selecting exactly these functions: ``regex:^(a|b|...)$``."""
    if not function_names:
        raise MeasurementError("kernel_name_filter needs at least one function name")
    bad = [n for n in function_names if not _FUNCTION_NAME.fullmatch(n)]
    if bad:
        raise MeasurementError(f"function name(s) {', '.join(map(repr, bad))} are not C identifiers")
    return "regex:^(" + "|".join(sorted(set(function_names))) + ")$"


def ncu_command(child: Sequence[str], kernel_name: str | None = None,
                metrics: Sequence[str] = tuple(NCU_METRICS), clock_control: str = DEFAULT_NCU_CLOCK_CONTROL,
                launch_skip: int = 0, launch_count: int = 1, ncu: str = "ncu") -> list[str]:
    """The Nsight Compute command line that profiles ``child`` (argv of the profiled program).

    ``--csv --page raw`` prints one row per profiled launch; ``--print-units base`` avoids
    scaled units (the parser handles them anyway). ``kernel_name`` is ncu's ``--kernel-name``
    filter: a function name or :func:`kernel_name_filter`'s ``regex:`` (cupy's own fill kernels
    are skipped); ``--launch-skip`` and ``--launch-count`` count the launches that pass it.
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


def write_plans(plans: Sequence[LaunchPlan], path: str | Path) -> Path:
    """Write ``plans`` as a JSON list (the child's input, :func:`read_plans`)."""
    p = Path(path)
    write_text_atomic(p, json.dumps([json.loads(plan.to_json()) for plan in plans]))
    return p


def read_plans(path: str | Path) -> list[LaunchPlan]:
    """The plans of a file written by :func:`write_plans`."""
    try:
        items = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise MeasurementError(f"cannot read the plans file {str(path)!r}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise MeasurementError(f"plans file {str(path)!r} is not JSON ({exc})") from None
    if not isinstance(items, list) or not items:
        raise MeasurementError(f"plans file {str(path)!r} must hold a non-empty JSON list of launch plans")
    return [LaunchPlan.from_json(json.dumps(item)) for item in items]


def child_command(plans_file: str | Path, launches: int = 1, device_id: int = 0,
                  python: str | None = None) -> list[str]:
    """argv of the child process that builds every plan of ``plans_file`` and runs each
    ``launches`` times on CUDA device ``device_id`` (the index the parent process uses; the
    child inherits its environment, so ``CUDA_VISIBLE_DEVICES`` numbers devices the same way in
    both)."""
    if device_id < 0:
        raise MeasurementError(f"CUDA device index must be >= 0, got {device_id}")
    if launches < 1:
        raise MeasurementError(f"launches per configuration must be >= 1, got {launches}")
    return [python or sys.executable, "-m", "warpspeed.validation.measure", str(plans_file), str(launches),
            str(device_id)]


#: The child's per-configuration failure line on standard error: ``error: <function>: <why>``.
_CHILD_ERROR = re.compile(r"^error: ([A-Za-z_][A-Za-z0-9_]*): (.*)$")


def _child_errors(text: str) -> dict[str, str]:
    """function name -> the child's error line for it."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = _CHILD_ERROR.match(line.strip())
        if m:
            out[m.group(1)] = m.group(2)
    return out


class NcuProfiler:
    """Profiles configurations with Nsight Compute on CUDA device ``device_id``: one ncu run per
    chunk of plans (:meth:`profile_many`), one profiled launch per plan.

    ``run`` is :func:`subprocess.run` (a test passes a stand-in); ``timeout_s`` overrides
    :func:`ncu_timeout_s`; ``python`` is the child's interpreter (default: this one).
    """

    def __init__(self, ncu: str | None = None, clock_control: str = DEFAULT_NCU_CLOCK_CONTROL,
                 run: Callable[..., Any] = subprocess.run, timeout_s: float | None = None,
                 device_id: int = 0, metrics: Sequence[str] = tuple(NCU_METRICS), python: str | None = None) -> None:
        path = ncu or shutil.which("ncu")
        if not path:
            raise MeasurementError("Nsight Compute (ncu) is not on PATH; install it or pass --no-ncu")
        if clock_control not in NCU_CLOCK_CONTROLS:
            raise MeasurementError(f"ncu clock control {clock_control!r} unknown; allowed: {', '.join(NCU_CLOCK_CONTROLS)}")
        self._ncu = path
        self._clock = clock_control
        self._run = run
        self._timeout = timeout_s
        self._device_id = device_id
        self._metrics = tuple(metrics)
        self._python = python

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metrics asked for, and read back."""
        return self._metrics

    def version(self) -> str:
        """ncu's version line and the clock control used (for the CSV metadata)."""
        done = self._run([self._ncu, "--version"], capture_output=True, text=True, timeout=60)
        lines = [line for line in (done.stdout or "").splitlines() if line.strip()]
        return f"{lines[-1].strip() if lines else 'unknown version'} (clock control {self._clock})"

    def command(self, plans: Sequence[LaunchPlan], plans_file: str | Path) -> list[str]:
        """The ncu command line that profiles one launch of each of ``plans`` (stored in ``plans_file``)."""
        names = [p.function_name for p in plans]
        if len(set(names)) != len(names):
            raise MeasurementError(f"plans of one ncu run need distinct function names, got {names}")
        return ncu_command(child_command(plans_file, device_id=self._device_id, python=self._python),
                           kernel_name=kernel_name_filter(names), metrics=self._metrics,
                           clock_control=self._clock, launch_count=len(plans), ncu=self._ncu)

    def profile_many(self, plans: Sequence[LaunchPlan]) -> dict[str, "dict[str, float] | MeasurementError"]:
        """Counters per function name of ``plans`` from one ncu run, or the error for that plan.

        A failed or hanging run, or one without a CSV table, is the error of every plan; a plan
        ncu did not profile gets the child's error line for it, if any.
        """
        if not plans:
            return {}
        with tempfile.TemporaryDirectory(prefix="warpspeed-ncu-") as tmp:
            plans_file = write_plans(plans, Path(tmp) / "plans.json")
            cmd = self.command(plans, plans_file)
            timeout = self._timeout if self._timeout is not None else ncu_timeout_s(len(plans))
            try:
                done = self._run(cmd, capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                error = MeasurementError(f"ncu did not finish within {timeout:.0f} s for {len(plans)} configuration(s)")
                return {p.function_name: error for p in plans}
        stdout, stderr = done.stdout or "", done.stderr or ""
        try:
            records = parse_ncu_csv(stdout, self._metrics)
        except MeasurementError as exc:
            tail = (stderr + stdout)[-800:].strip()
            error = MeasurementError(f"ncu exited with status {done.returncode}: {exc}; output ends: {tail}"
                                     if done.returncode != 0 else str(exc))
            return {p.function_name: error for p in plans}
        child = _child_errors(stderr + "\n" + stdout)
        out: dict[str, dict[str, float] | MeasurementError] = {}
        for plan in plans:
            try:
                out[plan.function_name] = counters_for_kernel(records, plan.function_name, self._metrics)
            except MeasurementError as exc:
                why = child.get(plan.function_name)
                out[plan.function_name] = MeasurementError(f"the profiled child failed: {why}") if why else exc
        return out

    def profile(self, plan: LaunchPlan) -> dict[str, float]:
        """The counters of one launch of ``plan`` (raises :class:`MeasurementError`)."""
        found = self.profile_many([plan])[plan.function_name]
        if isinstance(found, MeasurementError):
            raise found
        return found
