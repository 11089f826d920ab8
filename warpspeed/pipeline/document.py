"""The pipeline model's graph and launch as one JSON document (``warpspeed-pipeline`` v1).

What ``warpspeed predict --model pipeline --pipeline-out FILE`` writes: every node of one warp's
instruction dependence graph with its pipeline and latencies, the edges, and the launch the
simulator ran, so that a user can inspect, plot or re-simulate the graph elsewhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from warpspeed.pipeline.launch_time import build_graph
from warpspeed.pipeline.simulate import groups_per_sm

if TYPE_CHECKING:
    from warpspeed.prediction import Prediction

#: Name and version of the document format.
DOCUMENT_FORMAT = "warpspeed-pipeline"
DOCUMENT_VERSION = 1


def pipeline_document(prediction: "Prediction", source: str = "auto") -> dict[str, Any]:
    """The graph of ``prediction``'s kernel as simulated for its launch, JSON-ready.

    ``nodes``: ``[{id, op, label, pipeline, issue_cycles, completion_cycles, field}]`` in program
    order (issue = lambda, completion = Lambda, SM cycles); ``edges``: ``[producer, consumer]``
    pairs; ``in_order``: whether a warp issues the nodes in program order; ``launch``: SMs P,
    resident blocks per SM M, blocks N_total, warps per block, SM clock (GHz); ``memory``: the
    memory nodes' latencies and the predicted values they come from."""
    graph, memory, prologue = build_graph(prediction, source)
    info, device = prediction.launch, prediction.device
    return {
        "format": DOCUMENT_FORMAT,
        "version": DOCUMENT_VERSION,
        "kernel": prediction.kernel.name,
        "device": device.name,
        "block": list(info.launch.block),
        "fold": list(info.launch.fold),
        "source": graph.source,
        "in_order": graph.in_order,
        "guard_prologue_nodes": prologue,
        "nodes": [{"id": n.id, "op": n.kind, "label": n.label, "pipeline": n.pipeline, "issue_cycles": n.issue,
                   "completion_cycles": n.completion, "field": n.field} for n in graph.nodes],
        "edges": [[j, n.id] for n in graph.nodes for j in n.inputs],
        "launch": {"sms": device.sms, "resident_blocks_per_sm": info.occupancy.blocks_per_sm,
                   "total_blocks": info.launch.total_blocks,
                   "blocks_per_sm": groups_per_sm(info.launch.total_blocks, device.sms),
                   "warps_per_block": info.occupancy.warps_per_block, "clock_ghz": device.clock_ghz},
        "memory": memory,
    }
