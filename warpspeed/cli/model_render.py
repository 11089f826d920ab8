"""Tables of the time models' own results in ``warpspeed predict``: the interval model's CPI
stack (before the model's rate) and the pipeline model's critical path (after it)."""

from __future__ import annotations

from typing import Callable

from rich.console import Console

from warpspeed.cli.interval_render import print_cpi_stack
from warpspeed.cli.pipeline_render import render_pipeline
from warpspeed.estimate import ModelEstimate
from warpspeed.interval.time_model import INTERVAL
from warpspeed.pipeline.time_model import PIPELINE

#: Tables printed before the line with a model's rate, and after it, by model.
BEFORE: dict[str, Callable] = {INTERVAL.name: print_cpi_stack}
AFTER: dict[str, Callable] = {PIPELINE.name: render_pipeline}


def render_before(console: Console, estimate: ModelEstimate) -> None:
    """The model's tables that precede its rate (the interval model's CPI stack)."""
    if estimate.model in BEFORE:
        BEFORE[estimate.model](console, {"cycles": estimate.cycles, **estimate.details})


def render_after(console: Console, estimate: ModelEstimate) -> None:
    """The model's tables that follow its rate (the pipeline model's critical path and pipelines)."""
    if estimate.model in AFTER:
        AFTER[estimate.model](console, estimate.details)
