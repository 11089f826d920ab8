"""The measurement campaign: run every launch configuration on a GPU and record the measured
hardware counters next to the predictions (Ernst, Holzer, Hager, Knorr, Wellein: "Analytical
Performance Estimation during Code Generation on Modern GPUs", Journal of Parallel and
Distributed Computing, 2023, sections 5.4-5.8).

The parts, each in its own module (only the runner and the profiler touch a GPU or a subprocess):

* :mod:`warpspeed.validation.plan`: a launch plan (kernel, geometry, field allocations);
  :func:`pystencils_plugin.measure_kernels.plan_launch` generates it with pystencils.
* :mod:`warpspeed.validation.runners`: :class:`~warpspeed.validation.runners.CupyRunner` times
  planned launches with cupy and CUDA events.
* :mod:`warpspeed.validation.ncu`: Nsight Compute command lines, output parsing and the
  :class:`~warpspeed.validation.ncu.NcuProfiler`, which profiles the launch in a child process
  (``python -m warpspeed.validation.measure PLAN_JSON LAUNCHES DEVICE``, see :func:`child_main`).
* :mod:`warpspeed.validation.schema`: the row (measured and predicted values side by side);
  :mod:`warpspeed.validation.measurement_csv`: the CSV file.

:func:`measure` predicts every configuration with the kernel generated for its folding
(:class:`warpspeed.studies.predictors.FoldingPredictors`).
"""

from __future__ import annotations

import datetime as _dt
import math
import sys
from typing import Any, Callable, Sequence

from warpspeed.errors import WarpspeedError
from warpspeed.launch.space import Config
from warpspeed.validation.plan import LaunchPlan, MeasurementError
from warpspeed.validation.runners import GpuRunner, Profiler
from warpspeed.validation.schema import MeasurementTable, assemble_row, prediction_record

#: Default warm-up and timed launches per configuration (``--warmup``, ``--repeats``). These are
#: choices, not derived from measurements: the recorded time is the median of the timed
#: launches, which a single slow launch does not move.
DEFAULT_WARMUP = 3
DEFAULT_REPEATS = 20

#: Generates one configuration: (kernel name, configuration, domain) -> (plan, code-generator kernel).
Planner = Callable[[str, Config, Sequence[int]], tuple[LaunchPlan, Any]]


def _plugin() -> Any:
    """The code generator of the measured kernels (pystencils)."""
    try:
        from pystencils_plugin import measure_kernels
    except ImportError as exc:
        raise MeasurementError(f"the runner generates kernels with pystencils, which cannot be imported ({exc}); "
                               "install warpspeed[pystencils]") from None
    return measure_kernels


def measurable_kernels() -> dict[str, str]:
    """Kernels the runner can generate (name -> description)."""
    return _plugin().measurable_kernels()


def default_domain(kernel: str) -> tuple[int, ...]:
    """The measured kernel's default domain (cells)."""
    return _plugin().default_domain(kernel)


def _row(kernel: str, config: Config, dom: tuple[int, ...], predict: Callable[[Config], Any], planner: Planner,
         runner: GpuRunner, profiler: Profiler | None, warmup: int, repeats: int) -> tuple[dict[str, Any], str]:
    """One configuration's row and the capacity-curve family its prediction used ("" if none)."""
    errors = []
    record = None
    family = ""
    try:
        p = predict(config)
        record = prediction_record(p)
        family = p.dram.curves_family
    except WarpspeedError as exc:
        errors.append(f"prediction: {exc}")
    timing = counters = None
    grid: Sequence[int] = (0, 0, 0)
    try:
        plan, gpu_kernel = planner(kernel, config, dom)
        grid = plan.grid
        timing = runner.time(plan, gpu_kernel, warmup, repeats)
        if profiler is not None:
            counters = profiler.profile(plan)
    except WarpspeedError as exc:
        errors.append(str(exc))
    return assemble_row(config, grid, math.prod(dom), timing, counters, record, "; ".join(errors)), family


def measure(kernel: str, device: Any, configs: Sequence[Config], runner: GpuRunner,
            profiler: Profiler | None = None, domain: Sequence[int] | None = None,
            warmup: int = DEFAULT_WARMUP, repeats: int = DEFAULT_REPEATS,
            predictor: Any = None, progress: Callable[[int], None] | None = None,
            planner: Planner | None = None) -> MeasurementTable:
    """Measure and predict every configuration of ``configs``.

    Args:
        kernel: a kernel the code generator can build (see :func:`measurable_kernels`).
        device: the model's :class:`~warpspeed.hardware.device.Device` (its name goes into the metadata).
        runner: times launches (:class:`~warpspeed.validation.runners.CupyRunner` on a GPU machine).
        profiler: collects counters (:class:`~warpspeed.validation.ncu.NcuProfiler`), or None to skip counters.
        domain: cells (default: the kernel's).
        warmup, repeats: untimed and timed launches per configuration.
        predictor: one :class:`~warpspeed.predict.Predictor` for every configuration (e.g. with
            other capacity curves); default: the kernel generated for each configuration's
            folding, resolved by :func:`warpspeed.kernel.catalog.resolve_kernel`.
        planner: generates a configuration (default: :func:`pystencils_plugin.measure_kernels.plan_launch`).

    A configuration that cannot be generated, run or predicted becomes a row with ``error``.
    """
    if warmup < 0 or repeats < 1:
        raise MeasurementError(f"warmup must be >= 0 and repeats >= 1, got {warmup} and {repeats}")
    dom = tuple(domain) if domain is not None else default_domain(kernel)
    plan = planner or _plugin().plan_launch
    if predictor is not None:
        def predict(config: Config) -> Any:
            return predictor.predict(config.block, config.fold)
    else:
        from warpspeed.studies.predictors import FoldingPredictors

        predict = FoldingPredictors(kernel, dom, device).predict
    info = runner.info()
    rows = []
    family = ""
    for i, config in enumerate(configs, 1):
        row, row_family = _row(kernel, config, dom, predict, plan, runner, profiler, warmup, repeats)
        rows.append(row)
        family = row_family or family
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


def child_main(argv: Sequence[str]) -> int:
    """``python -m warpspeed.validation.measure PLAN_JSON [LAUNCHES [DEVICE]]``: run a plan
    ``LAUNCHES`` times (default 1) on CUDA device ``DEVICE`` (default 0), profiled by ncu."""
    usage = "usage: python -m warpspeed.validation.measure PLAN_JSON [LAUNCHES [DEVICE]]"
    if not 1 <= len(argv) <= 3:
        raise MeasurementError(usage)
    plan = LaunchPlan.from_json(argv[0])
    try:
        launches = int(argv[1]) if len(argv) >= 2 else 1
        device_id = int(argv[2]) if len(argv) == 3 else 0
    except ValueError:
        raise MeasurementError(f"LAUNCHES and DEVICE must be integers; {usage}") from None
    from warpspeed.validation.runners import CupyRunner

    rebuilt, gpu_kernel = _plugin().plan_launch(plan.kernel, plan.config, plan.domain)
    CupyRunner(device_id).launch(rebuilt, gpu_kernel, launches)
    return 0


def _entry(argv: Sequence[str]) -> int:
    """The child's command line: errors as one ``error:`` line on stderr and exit status 2."""
    try:
        return child_main(argv)
    except WarpspeedError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2


if __name__ == "__main__":  # pragma: no cover - runs under ncu on a GPU machine
    sys.exit(_entry(sys.argv[1:]))
