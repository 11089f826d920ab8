"""The pipeline model: an instruction dependence graph simulated block by block on the SMs.

Cornelis, Lemeire: "The Pipeline Performance Model: A Generic Executable Performance Model for
GPUs", 27th Euromicro International Conference on Parallel, Distributed and Network-Based
Processing (PDP), 2019. :data:`~warpspeed.pipeline.time_model.PIPELINE` is what ``--model
pipeline`` runs (``estimate`` is its :meth:`~warpspeed.pipeline.time_model.PipelineModel.estimate`).

The graph and the simulation load with the package (they need no numpy; ``simulate`` is the
function, not its module); the model's other names are imported on first use (PEP 562), so that
the registry of the time models (:mod:`warpspeed.models`) loads without numpy.
"""

from __future__ import annotations

from warpspeed.pipeline.graph import Graph, Node, Operation, operations_from_stream  # noqa: F401 (exported)
from warpspeed.pipeline.simulate import SimulationResult, groups_per_sm, simulate  # noqa: F401 (exported)
from warpspeed.lazy import lazy_exports


def _launch_time():
    from warpspeed.pipeline import launch_time

    return launch_time


def _time_model():
    from warpspeed.pipeline import time_model

    return time_model


def _pipeline():
    from warpspeed.pipeline.time_model import PIPELINE

    return PIPELINE


__getattr__, __dir__, _LAZY = lazy_exports(globals(), {
    _launch_time: ("PipelineResult", "build_graph", "pipeline_result"),
    _time_model: ("PIPELINE", "PipelineModel"),
    _pipeline: ("estimate",),
})
__all__ = sorted({"Graph", "Node", "Operation", "SimulationResult", "groups_per_sm", "operations_from_stream",
                  "simulate", *_LAZY})
