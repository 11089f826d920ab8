"""The CUDA-event timing loop: of the calibration benchmarks and of ``warpspeed measure``'s runner
(:class:`warpspeed.validation.runners.CupyRunner`), so both time a launch the same way."""

from __future__ import annotations

from typing import Any, Callable

from warpspeed.units import KILO


def event_seconds(cp: Any, launch: Callable[[], None], warmup: int, repeats: int) -> list[float]:
    """Seconds of each of ``repeats`` calls of ``launch()``, each between its own pair of CUDA
    events, after ``warmup`` untimed calls."""
    for _ in range(warmup):
        launch()
    samples = []
    for _ in range(repeats):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        launch()
        end.record()
        end.synchronize()
        samples.append(cp.cuda.get_elapsed_time(start, end) / KILO)
    return samples
