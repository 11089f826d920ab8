"""The pipeline model: an instruction dependence graph simulated block by block on the SMs.

Cornelis, Lemeire: "The Pipeline Performance Model: A Generic Executable Performance Model for
GPUs", 27th Euromicro International Conference on Parallel, Distributed and Network-Based
Processing (PDP), 2019. ``estimate(prediction, **options)`` is what ``--model pipeline`` runs.
"""

from warpspeed.pipeline.graph import Graph, Node, Operation, operations_from_stream
from warpspeed.pipeline.model import build_graph, estimate
from warpspeed.pipeline.simulate import SimulationResult, groups_per_sm, simulate

__all__ = ["Graph", "Node", "Operation", "SimulationResult", "build_graph", "estimate", "groups_per_sm",
           "operations_from_stream", "simulate"]
