"""The measurement campaign: run every launch configuration on a GPU and record the measured
hardware counters next to the predictions (Ernst, Holzer, Hager, Knorr, Wellein: "Analytical
Performance Estimation during Code Generation on Modern GPUs", Journal of Parallel and
Distributed Computing, 2023, sections 5.4-5.8).

The parts, each in its own module (only the runner, the profiler and the power sampler touch a
GPU or a subprocess):

* :mod:`warpspeed.validation.plan`: a launch plan (kernel, geometry, field allocations);
  the pystencils plugin's measurement generator (``pystencils_plugin.measure_kernels.plan_launch``,
  found through :func:`warpspeed.kernel.catalog.measurement_generator`) generates it.
* :mod:`warpspeed.validation.runners`: :class:`~warpspeed.validation.runners.CupyRunner` times
  planned launches with cupy and CUDA events, and runs them back to back for power sampling.
* :mod:`warpspeed.validation.ncu`: Nsight Compute command lines and the
  :class:`~warpspeed.validation.ncu.NcuProfiler`, which profiles a chunk of configurations in
  one ncu run: one child process builds and launches them all
  (``python -m warpspeed.validation.measure PLANS_FILE LAUNCHES DEVICE``, see :func:`child_main`);
  :mod:`warpspeed.validation.ncu_csv` parses ncu's output.
* :mod:`warpspeed.validation.power_sampling`: board power and SM clock from nvidia-smi.
* :mod:`warpspeed.validation.schema`: the row (measured and predicted values side by side);
  :mod:`warpspeed.validation.measurement_csv`: the CSV file, written row by row.

:func:`measure` works through the configurations chunk by chunk: each configuration of a chunk
is predicted, generated, timed and (with a power sampler) run back to back; then one ncu run
profiles the whole chunk, and the chunk's rows go to ``on_row`` in configuration order. It
predicts every configuration with the kernel generated for its folding
(:class:`warpspeed.studies.predictors.FoldingPredictors`).
"""

from __future__ import annotations

import datetime as _dt
import math
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from warpspeed.models import BASELINE_MODEL
from warpspeed.errors import WarpspeedError
from warpspeed.kernel.catalog import measurement_generator
from warpspeed.launch.space import Config
from warpspeed.validation.plan import DEFAULT_DTYPE, LaunchPlan, MeasurementError
from warpspeed.validation.power_sampling import DEFAULT_SOAK_S, PowerSampler
from warpspeed.validation.runners import GpuRunner, Profiler
from warpspeed.validation.schema import MeasurementTable, Timing, assemble_row, power_columns, prediction_record

#: Default warm-up and timed launches per configuration (``--warmup``, ``--repeats``). These are
#: choices, not derived from measurements: the recorded time is the median of the timed
#: launches, which a single slow launch does not move.
DEFAULT_WARMUP = 3
DEFAULT_REPEATS = 20

#: Generates one configuration: (kernel name, configuration, domain, dtype) -> (plan, code-generator kernel).
Planner = Callable[[str, Config, Sequence[int], str], tuple[LaunchPlan, Any]]


def _plugin() -> Any:
    """The code generator of the measured kernels (pystencils; found through the catalog's entry
    points, :func:`warpspeed.kernel.catalog.measurement_generator`)."""
    try:
        return measurement_generator()
    except ImportError as exc:
        raise MeasurementError(f"the runner generates kernels with pystencils, which cannot be imported ({exc}); "
                               "install warpspeed[pystencils]") from None


def measurable_kernels() -> dict[str, str]:
    """Kernels the runner can generate (name -> description)."""
    return _plugin().measurable_kernels()


def default_domain(kernel: str) -> tuple[int, ...]:
    """The measured kernel's default domain (cells)."""
    return _plugin().default_domain(kernel)


#: Configurations per ncu run (``--chunk``): one run costs a fixed start (ncu, Python, the imports
#: of the child: most of the 6.5 s a one-configuration run took on an H200, 2026-11-26) plus a
#: part per configuration; 32 gives 6 runs for the 168 configurations of the paper's space and
#: loses at most 32 configurations' counters when a run fails.
DEFAULT_CHUNK = 32


@dataclass
class _Pending:
    """One configuration of a chunk on its way to a row."""

    config: Config
    plan: LaunchPlan | None = None
    timing: Timing | None = None
    power: dict[str, float] | None = None
    counters: dict[str, float] | None = None
    errors: list[str] = field(default_factory=list)


#: The time model of the ``pred_*`` columns (a prediction record's rate is the four-limiter
#: roofline's); ``warpspeed accuracy`` names it.
PREDICTION_MODEL = BASELINE_MODEL


class _Predictions:
    """Predictions per configuration, made once (the campaign's metadata needs one up front)."""

    def __init__(self, predict: Callable[[Config], Any]) -> None:
        self._predict = predict
        self._done: dict[Config, tuple[dict[str, Any] | None, str, str]] = {}

    def get(self, config: Config) -> tuple[dict[str, Any] | None, str, str]:
        """(prediction record or None, capacity-curve family, error text)."""
        if config not in self._done:
            try:
                p = self._predict(config)
                self._done[config] = (prediction_record(p), p.dram.curves_family, "")
            except WarpspeedError as exc:
                self._done[config] = (None, "", f"prediction: {exc}")
        return self._done[config]

    def family(self, configs: Sequence[Config]) -> str:
        """The capacity-curve family of the first configuration that can be predicted ("" if none)."""
        for config in configs:
            record, family, _ = self.get(config)
            if record is not None:
                return family
        return ""


def chunks(items: Sequence[Config], size: int) -> list[list[Config]]:
    """``items`` in consecutive groups of ``size`` (the last may be shorter)."""
    if size < 1:
        raise MeasurementError(f"configurations per ncu run must be >= 1, got {size}")
    return [list(items[i:i + size]) for i in range(0, len(items), size)]


def _run_one(item: _Pending, kernel: str, dom: tuple[int, ...], dtype: str, planner: Planner, runner: GpuRunner,
             warmup: int, repeats: int, power: PowerSampler | None, power_seconds: float) -> None:
    """Generate, time and (with ``power``) soak one configuration; errors go to ``item.errors``."""
    try:
        plan, gpu_kernel = planner(kernel, item.config, dom, dtype)
        item.plan = plan
        item.timing = runner.time(plan, gpu_kernel, warmup, repeats)
    except WarpspeedError as exc:
        item.errors.append(str(exc))
        return
    if power is None:
        return
    try:
        soak, reading = power.sample_during(lambda: runner.soak(plan, gpu_kernel, power_seconds))
        item.power = power_columns(plan.lups, soak, reading.watts, reading.sm_clock_mhz, reading.samples)
    except WarpspeedError as exc:
        item.errors.append(f"power: {exc}")


def _profile(items: Sequence[_Pending], profiler: Profiler) -> None:
    """One ncu run for the chunk's generated configurations; counters or errors into the items."""
    planned = [item for item in items if item.plan is not None]
    if not planned:
        return
    found = profiler.profile_many([item.plan for item in planned])  # type: ignore[misc]
    for item in planned:
        result = found.get(item.plan.function_name)  # type: ignore[union-attr]
        if isinstance(result, dict):
            item.counters = result
        else:
            item.errors.append(f"ncu: {result or 'no result for ' + item.plan.function_name}")  # type: ignore[union-attr]


def campaign_metadata(kernel: str, device: Any, dom: Sequence[int], dtype: str, info: Any, warmup: int,
                      repeats: int, profiler: Profiler | None, family: str,
                      power: PowerSampler | None, power_seconds: float) -> dict[str, str]:
    """The CSV's comment block (see ``docs/validation.md``)."""
    metadata = {
        "kernel": kernel, "dtype": dtype, "device_model": getattr(device, "name", str(device)),
        "domain": "x".join(map(str, dom)), "lups_per_launch": math.prod(dom),
        **info.metadata(), "warmup": warmup, "repeats": repeats,
        "ncu": profiler.version() if profiler is not None else "not used",
        "power": (f"nvidia-smi ({' '.join(power.command)}), {power_seconds:g} s back to back per configuration"
                  if power is not None else "not measured"),
        "curves_family": family,
        "prediction_model": PREDICTION_MODEL,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "warpspeed_version": _version(),
    }
    return {k: str(v) for k, v in metadata.items()}


def measure(kernel: str, device: Any, configs: Sequence[Config], runner: GpuRunner,
            profiler: Profiler | None = None, domain: Sequence[int] | None = None,
            warmup: int = DEFAULT_WARMUP, repeats: int = DEFAULT_REPEATS,
            predictor: Any = None, progress: Callable[[int], None] | None = None,
            planner: Planner | None = None, *, dtype: str = DEFAULT_DTYPE, chunk: int = DEFAULT_CHUNK,
            power: PowerSampler | None = None, power_seconds: float = DEFAULT_SOAK_S,
            on_metadata: Callable[[Mapping[str, str]], None] | None = None,
            on_row: Callable[[Mapping[str, Any]], None] | None = None) -> MeasurementTable:
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
        dtype: element type of the generated kernel (``double`` or ``float``).
        chunk: configurations per ncu run.
        power: samples board power while each configuration runs back to back for
            ``power_seconds`` (:class:`~warpspeed.validation.power_sampling.PowerSampler`), or None.
        on_metadata: called once with the metadata before the first row (to write the file's header).
        on_row: called with each row as soon as its chunk is measured (to write it at once).

    A configuration that cannot be generated, run, profiled or predicted becomes a row with ``error``.
    """
    if warmup < 0 or repeats < 1:
        raise MeasurementError(f"warmup must be >= 0 and repeats >= 1, got {warmup} and {repeats}")
    if power is not None and not power_seconds > 0:
        raise MeasurementError(f"the power soak needs a positive duration, got {power_seconds} s")
    groups = chunks(configs, chunk)
    dom = tuple(domain) if domain is not None else default_domain(kernel)
    plan = planner or _plugin().plan_launch
    if predictor is not None:
        def predict(config: Config) -> Any:
            return predictor.predict(config.block, config.fold)
    else:
        from warpspeed.studies.predictors import FoldingPredictors

        predict = FoldingPredictors(kernel, dom, device, dtype=dtype).predict
    predictions = _Predictions(predict)
    metadata = campaign_metadata(kernel, device, dom, dtype, runner.info(), warmup, repeats, profiler,
                                 predictions.family(configs), power, power_seconds)
    if on_metadata is not None:
        on_metadata(metadata)
    rows = []
    for group in groups:
        items = [_Pending(config) for config in group]
        for item in items:
            _run_one(item, kernel, dom, dtype, plan, runner, warmup, repeats, power, power_seconds)
        if profiler is not None:
            _profile(items, profiler)
        for item in items:
            record, _, predict_error = predictions.get(item.config)
            grid = item.plan.grid if item.plan is not None else (0, 0, 0)
            errors = ([predict_error] if predict_error else []) + item.errors
            row = assemble_row(item.config, grid, math.prod(dom), item.timing, item.counters, record,
                               "; ".join(errors), item.power)
            rows.append(row)
            if on_row is not None:
                on_row(row)
            if progress:
                progress(len(rows))
    return MeasurementTable(metadata=metadata, rows=tuple(rows))


def _version() -> str:
    from warpspeed import __version__

    return __version__


def child_main(argv: Sequence[str], plan_launch: Planner | None = None, runner_factory: Callable[[int], Any] | None = None,
               err: Callable[[str], None] = sys.stderr.write) -> int:
    """``python -m warpspeed.validation.measure PLANS_FILE [LAUNCHES [DEVICE]]``: build every plan
    of ``PLANS_FILE`` (a JSON list, :func:`warpspeed.validation.ncu.write_plans`) and run each
    ``LAUNCHES`` times (default 1) on CUDA device ``DEVICE`` (default 0), profiled by ncu.

    A plan that cannot be built or run prints ``error: <function name>: <why>`` and the others
    still run; the exit status is 0 when all ran, else 3. ``plan_launch`` and
    ``runner_factory`` (device index -> runner) default to pystencils and the cupy runner.
    """
    usage = "usage: python -m warpspeed.validation.measure PLANS_FILE [LAUNCHES [DEVICE]]"
    if not 1 <= len(argv) <= 3:
        raise MeasurementError(usage)
    try:
        launches = int(argv[1]) if len(argv) >= 2 else 1
        device_id = int(argv[2]) if len(argv) == 3 else 0
    except ValueError:
        raise MeasurementError(f"LAUNCHES and DEVICE must be integers; {usage}") from None
    from warpspeed.validation.ncu import read_plans

    plans = read_plans(argv[0])
    if runner_factory is None:
        from warpspeed.validation.runners import CupyRunner

        runner_factory = CupyRunner
    runner = runner_factory(device_id)
    build = plan_launch or _plugin().plan_launch
    failed = 0
    for plan in plans:
        try:
            rebuilt, gpu_kernel = build(plan.kernel, plan.config, plan.domain, plan.dtype)
            if (rebuilt.function_name, rebuilt.block, rebuilt.grid) != (plan.function_name, plan.block, plan.grid):
                raise MeasurementError(f"rebuilt {rebuilt.function_name} with block {rebuilt.block}, grid "
                                       f"{rebuilt.grid}; planned block {plan.block}, grid {plan.grid}")
            runner.launch(rebuilt, gpu_kernel, launches)
        except WarpspeedError as exc:
            failed += 1
            err(f"error: {plan.function_name}: {exc}\n")
    return 0 if not failed else CHILD_PARTIAL_FAILURE


#: Exit status of the ncu child when some plans could not be built or run.
CHILD_PARTIAL_FAILURE = 3


def _entry(argv: Sequence[str]) -> int:
    """The child's command line: errors as one ``error:`` line on stderr and exit status 2."""
    try:
        return child_main(argv)
    except WarpspeedError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2


if __name__ == "__main__":  # pragma: no cover - runs under ncu on a GPU machine
    sys.exit(_entry(sys.argv[1:]))
