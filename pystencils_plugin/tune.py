"""Tune a pystencils workload with Kernel Tuner in warpspeed's order: ``tune(workload, device, ...)``.

On a machine with an NVIDIA GPU and cupy, Kernel Tuner measures the code pystencils generates for
each folding, best predicted first (:func:`warpspeed.tune.gpu.tune_on_gpu`); with
``simulate="cache.json"`` a Kernel Tuner cache is replayed through Kernel Tuner's simulation mode
instead (:func:`warpspeed.tune.replay.simulate`), no GPU needed. Needs Kernel Tuner
(``pip install "warpspeed[tune]"``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from warpspeed.errors import KernelError
from warpspeed.models import DEFAULT_TIME_MODEL
from warpspeed.rank import Scoring
from warpspeed.tune.result import TuneResult

#: Device a tuning predicts for when none is given (name the GPU the kernel runs on).
DEFAULT_DEVICE = "A100-SXM4-40GB"


def tune(workload: str, device: Any = DEFAULT_DEVICE, domain: Sequence[int] | None = None, *,
         budget: int | None = None, patience: int | None = None, simulate: str | Path | None = None,
         cache: str | Path | None = None, csv: str | Path | None = None, dtype: str | None = None,
         model: str = DEFAULT_TIME_MODEL) -> TuneResult:
    """Find the fastest launch configuration of ``workload`` in a handful of measurements.

    Args:
        workload: a workload name (:data:`pystencils_plugin.workloads.WORKLOADS`, e.g. ``star3d-r4``).
        device: the device the model predicts for (name or Device): the GPU measured, or the one
            the replayed cache was measured on.
        domain: cells (default: the cache's problem size when replaying, else the workload's).
        budget: measurements at most (default: until ``patience``).
        patience: stop after this many measurements without a better time (default 5; 0: never).
        simulate: a Kernel Tuner cache to replay instead of measuring.
        cache: the Kernel Tuner cache written while measuring and resumed from (default
            ``<workload>.kerneltuner.json``).
        csv: also write the measurements as a measurement CSV.
        dtype: ``double`` (default) or ``float``.
        model: the time model whose prediction orders the measurements.

    Returns a :class:`warpspeed.tune.result.TuneResult`: every run, predicted against measured
    (``runs``), the best found (``best()``), runs to a fraction of the best (``runs_to(0.99)``).
    """
    from pystencils_plugin.workloads import WORKLOADS

    if not isinstance(workload, str) or workload not in WORKLOADS:
        raise KernelError(f"unknown workload {workload!r}; workloads: {', '.join(WORKLOADS)}")
    scoring = Scoring(model)
    if simulate is not None:
        from warpspeed.tune.replay import simulate as replay

        return replay(simulate, workload, device, domain, budget=budget, patience=patience or None, dtype=dtype,
                      scoring=scoring, use_patience=patience != 0)
    from warpspeed.tune.gpu import require_gpu, tune_on_gpu, write_measurements

    require_gpu()
    result, raw = tune_on_gpu(workload, device, domain, dtype=dtype, budget=budget,
                              patience=patience or None, use_patience=patience != 0,
                              cache_path=cache or f"{workload}.kerneltuner.json", scoring=scoring)
    if csv is not None:
        write_measurements(result, raw, csv, workload, result.device, dtype)
    return result


__all__ = ["tune"]
