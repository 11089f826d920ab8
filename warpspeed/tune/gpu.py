"""Tuning on the local GPU: Kernel Tuner's cupy backend measures the pystencils kernel's own code.

:func:`tune_on_gpu` ranks the kernel's launch configurations (blocks x foldings, the space of
``warpspeed rank``), then hands Kernel Tuner (``kernel_tuner.tune_kernel``, ``lang="cupy"``) the
tune parameters ``block_size_x/y/z`` and ``fold_x/y/z``, a kernel source function that returns the
CUDA code pystencils generates for each configuration's folding (with the prelude pystencils' own
cupy JIT adds), the fields as arrays shaped as pystencils expects them, and
:class:`~warpspeed.tune.strategy.PredictedOrder` as its strategy. The grid is the domain over
block x folding along each axis (``grid_div_x = ["block_size_x", "fold_x"]``), as pystencils
launches the folded kernel. Kernel Tuner writes its cache as it measures (``cache=``), and serves
configurations already in the cache without measuring them again: a run stopped half way resumes
from its cache. The measured rows also go to a measurement CSV in the project's format
(``docs/validation.md``) with the predictions beside them.
"""

from __future__ import annotations

import math
import re
import time
from pathlib import Path
from typing import Any, Sequence

from warpspeed.errors import WarpspeedError
from warpspeed.launch.space import Config
from warpspeed.rank import DEFAULT_SCORING, Scoring
from warpspeed.tune.cache import TuneError
from warpspeed.tune.mapping import BLOCK_NAMES, DEFAULT_MAPPING, FOLD_NAMES
from warpspeed.tune.result import TuneResult
from warpspeed.validation.plan import DEFAULT_DTYPE

#: Kernel Tuner's timed launches per configuration (its ``iterations``; Kernel Tuner's default, 7).
DEFAULT_ITERATIONS = 7
#: What tuning on a GPU needs, and what works without one.
NEEDS_GPU = ("tuning on the GPU needs cupy and an NVIDIA GPU ({why}); install cupy with "
             "pip install \"warpspeed[gpu,tune]\" on a machine with a GPU; here `warpspeed rank` predicts the "
             "ranking and `warpspeed tune --simulate CACHE.json` replays a Kernel Tuner cache")


def tuned_function_name(kernel: str, dtype: str = DEFAULT_DTYPE) -> str:
    """The CUDA function name of a tuned kernel (Kernel Tuner's ``kernel_name``, the name in its
    cache): ``ws_star3d_r4``, with ``_float`` for other element types than double."""
    stem = re.sub(r"[^0-9A-Za-z]+", "_", kernel).strip("_")
    if dtype != DEFAULT_DTYPE:
        stem += "_" + re.sub(r"[^0-9A-Za-z]+", "_", dtype).strip("_")
    return f"ws_{stem}"


def require_gpu() -> Any:
    """The cupy module when cupy imports and sees at least one CUDA device, else :class:`TuneError`
    with :data:`NEEDS_GPU`."""
    try:
        import cupy as cp
    except ImportError as exc:
        raise TuneError(NEEDS_GPU.format(why=f"cupy cannot be imported: {exc}")) from None
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except Exception as exc:  # cupy's CUDARuntimeError without a driver
        raise TuneError(NEEDS_GPU.format(why=f"no CUDA device: {' '.join(str(exc).split())}")) from None
    if count < 1:
        raise TuneError(NEEDS_GPU.format(why="no CUDA device"))
    return cp


def tune_params(configs: Sequence[Config]) -> dict[str, list[int]]:
    """Kernel Tuner's tune parameters of a configuration space: each of ``block_size_x/y/z`` and
    ``fold_x/y/z`` with the values the space uses."""
    params: dict[str, list[int]] = {}
    for i, name in enumerate(BLOCK_NAMES):
        params[name] = sorted({c.block[i] for c in configs})
    for i, name in enumerate(FOLD_NAMES):
        params[name] = sorted({c.fold[i] for c in configs})
    return params


def in_space(configs: Sequence[Config]) -> Any:
    """A Kernel Tuner restriction that admits exactly ``configs``. Kernel Tuner calls a restriction
    with the values in the order of the tune parameters (its search space) or by name (its
    checks); this one takes both."""
    allowed = {(tuple(c.block), tuple(c.fold)) for c in configs}
    names = BLOCK_NAMES + FOLD_NAMES

    def restriction(*values: int, **named: int) -> bool:
        p = named if named else dict(zip(names, values))
        return (tuple(p[n] for n in BLOCK_NAMES), tuple(p[n] for n in FOLD_NAMES)) in allowed

    return restriction


class FoldedSource:
    """Kernel Tuner's kernel source function: the CUDA code pystencils generates for a
    configuration's folding, named :func:`tuned_function_name`, with pystencils' prelude (one
    generation per folding)."""

    def __init__(self, kernel: str, domain: Sequence[int], dtype: str) -> None:
        self.kernel, self.domain, self.dtype = kernel, tuple(domain), dtype
        self.name = tuned_function_name(kernel, dtype)
        self._code: dict[tuple[int, ...], str] = {}

    def plan(self, fold: Sequence[int]) -> tuple[Any, Any]:
        """(launch plan, pystencils kernel) of ``fold`` (its block is irrelevant to the code)."""
        from warpspeed.kernel.catalog import measurement_generator

        block = tuple(min(8, n) for n in (*self.domain, 1, 1)[:3])
        return measurement_generator().plan_launch(self.kernel, Config(block, tuple(fold)), self.domain,  # type: ignore[arg-type]
                                                   self.dtype)

    def code(self, fold: Sequence[int]) -> str:
        key = tuple(fold)
        if key not in self._code:
            from pystencils_plugin.registers import standalone_cuda_source

            plan, gpu_kernel = self.plan(key)
            source = gpu_kernel.get_c_code().replace(plan.function_name, self.name)
            # Kernel Tuner's cupy backend looks the function up by its C++ name (name_expressions)
            self._code[key] = standalone_cuda_source(gpu_kernel, source).replace('extern "C" ', "")
        return self._code[key]

    def __call__(self, params: dict) -> str:
        return self.code(tuple(int(params[n]) for n in FOLD_NAMES))


def kernel_arguments(gpu_kernel: Any, plan: Any) -> list[Any]:
    """The kernel's arguments in its parameter order: one flat numpy buffer per field (its elements
    at pystencils' strides), 1.0 for a scalar; raises :class:`TuneError` for other parameters."""
    import numpy as np

    from pystencils.codegen.properties import FieldBasePtr

    fields = {f.name: f for f in plan.fields}
    args: list[Any] = []
    for param in gpu_kernel.parameters:
        if param.is_field_parameter and param.get_properties(FieldBasePtr):
            field = fields[param.fields[0].name]
            args.append(np.ones(field.buffer_elements, dtype=field.dtype))
        elif not param.is_field_parameter:
            args.append(np.dtype(plan.fields[0].dtype if plan.fields else "float64").type(1.0))
        else:
            raise TuneError(f"kernel parameter {param.name!r} is a field shape or stride; tuning needs fields of "
                            "fixed shape (the built-in workloads have them)")
    return args


def tune_on_gpu(kernel: str, device: Any, domain: Sequence[int] | None = None, *, dtype: str | None = None,
                budget: int | None = None, patience: int | None = None, cache_path: str | Path,
                scoring: Scoring = DEFAULT_SCORING, threads: int | None = None,
                iterations: int = DEFAULT_ITERATIONS, device_index: int = 0,
                use_patience: bool = True) -> tuple[TuneResult, list[dict]]:
    """Tune ``kernel`` (a pystencils workload) on the local GPU in warpspeed's order (module
    docstring): ``budget`` measurements at most, stopping after ``patience`` without a better time
    (default :data:`~warpspeed.tune.strategy.DEFAULT_PATIENCE`; none when ``use_patience`` is
    False). Returns the result and Kernel Tuner's raw results (for the measurement CSV)."""
    from warpspeed.hardware.device import load_device
    from warpspeed.launch.folded import folded_space
    from warpspeed.tune.kt import kernel_tuner_modules
    from warpspeed.tune.replay import _runs
    from warpspeed.tune.strategy import DEFAULT_PATIENCE, PredictedOrder

    if budget is not None and budget < 1:
        raise TuneError(f"the budget must be at least 1 measurement, got {budget}")
    kt = kernel_tuner_modules()
    require_gpu()
    dev = load_device(device) if isinstance(device, str) else device
    dtype = dtype or DEFAULT_DTYPE
    space = folded_space(kernel, domain, dev, dtype, threads)
    configs = space.configs()
    dom = tuple(next(iter(space.resolved.values())).kernel.domain)
    source = FoldedSource(kernel, dom, dtype)
    plan, gpu_kernel = source.plan((1, 1, 1))
    args = kernel_arguments(gpu_kernel, plan)
    from pystencils.include import get_pystencils_include_path

    runs_without_gain = (patience if patience is not None else DEFAULT_PATIENCE) if use_patience else None
    order = PredictedOrder(kernel, dev, DEFAULT_MAPPING, runs_without_gain, scoring, dom, dtype)
    options = {"max_fevals": int(budget)} if budget is not None else {}
    size = (*dom, 1, 1)[:3]
    start = time.perf_counter()
    try:
        results, _ = kt.interface.tune_kernel(
            source.name, source, size, args, tune_params(configs), restrictions=[in_space(configs)],
            grid_div_x=[BLOCK_NAMES[0], FOLD_NAMES[0]], grid_div_y=[BLOCK_NAMES[1], FOLD_NAMES[1]],
            grid_div_z=[BLOCK_NAMES[2], FOLD_NAMES[2]], lang="cupy", device=device_index,
            compiler_options=["-w", "-std=c++17", "-I" + get_pystencils_include_path()], iterations=iterations,
            cache=str(cache_path), strategy=kt.wrapper.OptAlgWrapper(order), strategy_options=options, quiet=True)
    except WarpspeedError:
        raise
    except (ValueError, KeyError, TypeError, RuntimeError) as exc:
        raise TuneError(f"Kernel Tuner stopped: {' '.join(str(exc).split())}") from None
    names = list(BLOCK_NAMES + FOLD_NAMES)
    stopped = "space" if len(results) >= len(configs) else order.stopped
    result = TuneResult(kernel=kernel, device=dev.name, domain=dom, lups=math.prod(dom),
                        runs=_runs(results, names, DEFAULT_MAPPING, order), space=len(configs), stopped=stopped,
                        model_seconds=order.model_seconds,
                        notes=(f"Kernel Tuner ran {time.perf_counter() - start:.1f} s", *space.left_out_lines()))
    return result, list(results)


def write_measurements(result: TuneResult, raw: Sequence[dict], path: str | Path, kernel: str, device: Any,
                       dtype: str | None = None, iterations: int = DEFAULT_ITERATIONS, device_index: int = 0) -> Path:
    """The measured configurations as a measurement CSV (``docs/validation.md``): Kernel Tuner's
    launch times (its ``times``, ms, converted to seconds) with the prediction of each
    configuration beside them; a configuration that failed gets its Kernel Tuner error."""
    import datetime as _dt

    from warpspeed import __version__
    from warpspeed.studies.predictors import FoldingPredictors
    from warpspeed.validation.measurement_csv import write_measurement_csv
    from warpspeed.validation.runners import CupyRunner
    from warpspeed.validation.schema import Timing, assemble_row, prediction_record
    from warpspeed.units import KILO

    dtype = dtype or DEFAULT_DTYPE
    predictors = FoldingPredictors(kernel, result.domain, device, dtype=dtype)
    rows = []
    for run, record in zip(result.runs, raw):
        if run.config is None:
            continue
        grid = tuple(math.ceil(n / (b * f)) for n, b, f in zip((*result.domain, 1, 1)[:3], run.config.block,
                                                                  run.config.fold))
        times = record.get("times") if isinstance(record.get("times"), list) else [run.time_ms]
        timing = Timing(tuple(t / KILO for t in times)) if run.time_ms is not None else None
        try:
            predicted, error = prediction_record(predictors.predict(run.config)), ""
        except WarpspeedError as exc:
            predicted, error = None, f"prediction: {exc}"
        if run.error:
            error = "; ".join(e for e in (error, f"Kernel Tuner: {run.error}") if e)
        rows.append(assemble_row(run.config, grid, result.lups, timing, None, predicted, error))
    from kernel_tuner import __version__ as kt_version

    metadata = {"kernel": kernel, "dtype": dtype, "device_model": result.device,
                "domain": "x".join(map(str, result.domain)), "lups_per_launch": str(result.lups),
                **CupyRunner(device_index).info().metadata(), "warmup": "1 (Kernel Tuner's warm-up launch)",
                "repeats": str(iterations), "ncu": "not used", "power": "not measured",
                "timed_by": f"Kernel Tuner {kt_version} (cupy backend), in warpspeed's order",
                "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                "warpspeed_version": __version__}
    return write_measurement_csv(path, metadata, rows)
