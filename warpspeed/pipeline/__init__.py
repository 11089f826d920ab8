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

from warpspeed.pipeline.graph import Graph, Node, Operation, operations_from_stream
from warpspeed.pipeline.simulate import SimulationResult, groups_per_sm, simulate

_MODEL_NAMES = frozenset(("PipelineResult", "build_graph", "pipeline_result"))
_TIME_MODEL_NAMES = frozenset(("PIPELINE", "PipelineModel"))

__all__ = sorted({"Graph", "Node", "Operation", "SimulationResult", "estimate", "groups_per_sm",
                  "operations_from_stream", "simulate"} | _MODEL_NAMES | _TIME_MODEL_NAMES)


def __getattr__(name: str):
    if name == "estimate":
        from warpspeed.pipeline.time_model import PIPELINE

        value = PIPELINE.estimate
    else:
        if name in _MODEL_NAMES:
            from warpspeed.pipeline import model as module
        elif name in _TIME_MODEL_NAMES:
            from warpspeed.pipeline import time_model as module
        else:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
