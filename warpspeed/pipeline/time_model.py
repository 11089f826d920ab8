"""The pipeline model as a time model (:class:`~warpspeed.model_protocol.TimeModel`; the model itself:
:func:`warpspeed.pipeline.launch_time.estimate`), with its command-line options."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from warpspeed.model_protocol import (ModelAbout, ModelCommandLine, ModelEstimate, ModelOption, ModelTable,
                                      ModelTables, TableColumn, TimeModelBase, number_text)
from warpspeed.pipeline.graph import GRAPH_SOURCES
from warpspeed.pipeline.simulate import DEFAULT_SELECTION, ISSUE_RULES, SELECTIONS

if TYPE_CHECKING:
    from warpspeed.prediction import Prediction
    from warpspeed.trace.document import Trace


class PipelineCommandLine(ModelCommandLine):
    """The pipeline model's options (the graph's source, the issue rules, a file for the graph)
    and its tables (the critical path, the busy pipelines)."""

    options = (
        ModelOption("--pipeline-graph", "graph_source", choices=GRAPH_SOURCES, default=GRAPH_SOURCES[0],
                    help="With --model pipeline: the instruction graph from the generator's source-level operations "
                         "(ast), the compiled SASS (sass, needs nvcc; issued in program order), the stream derived "
                         "from the kernel description (derived), or ast when the kernel carries it (auto)."),
        ModelOption("--pipeline-selection", "selection", choices=SELECTIONS, default=DEFAULT_SELECTION,
                    help="With --model pipeline: which ready instruction a pipeline issues. fifo: the one ready "
                         "first, so warps take turns (a round robin on dependence chains; reproduces the paper's "
                         "Eq. 1 for every warp count). oldest: oldest block, then lowest warp, a strict priority "
                         "like a greedy-then-oldest (GTO) warp scheduler, which staggers the resident blocks."),
        ModelOption("--pipeline-issue", "issue", choices=ISSUE_RULES, default=ISSUE_RULES[0],
                    help="With --model pipeline: when an idle pipeline issues. event: the moment an instruction "
                         "is ready (fractional times; reproduces Eq. 1). cycle: the paper's Algorithm 1 as "
                         "printed, a retry every cycle, like a scheduler deciding on clock edges only."),
        ModelOption("--pipeline-out", "pipeline_out", output="pipeline graph",
                    help="With --model pipeline: write the graph, its latencies and the launch as JSON "
                         "(warpspeed-pipeline v1)."),
    )
    options_error = ("--pipeline-graph, --pipeline-selection, --pipeline-issue and --pipeline-out belong to the "
                     "pipeline model: add --model pipeline")

    def estimate_options(self, values: Mapping[str, Any]) -> dict[str, Any]:
        return {"source": values["graph_source"], "selection": values["selection"],
                "poll": values["issue"] == ISSUE_RULES[1]}

    def write_outputs(self, prediction: "Prediction", estimate: ModelEstimate, values: Mapping[str, Any]) -> None:
        path = values.get("pipeline_out")
        if path:
            from warpspeed.files.atomic import write_text_atomic
            from warpspeed.files.jsonsafe import json_text
            from warpspeed.pipeline.document import pipeline_document

            write_text_atomic(path, json_text(pipeline_document(prediction, values["graph_source"]), indent=1))


    def tables(self, estimate: ModelEstimate) -> ModelTables:
        """After the rate: the critical path of one warp and the busy fraction per pipeline."""
        return ModelTables(after=pipeline_tables(estimate.details))


class PipelineModel(TimeModelBase):
    """An instruction dependence graph simulated block by block on the SMs. Its options choose the
    graph's source, the issue rules and a file for the graph; :meth:`estimate` takes the keyword
    options of :func:`warpspeed.pipeline.launch_time.estimate`."""

    name = "pipeline"
    about = ModelAbout(
        help="the pipeline model (an instruction graph simulated on the SMs; no launch cost)",
        style=("^", "tab:blue"))
    command_line = PipelineCommandLine()

    def estimate(self, prediction: "Prediction", trace: "Trace | None" = None, **options: Any) -> ModelEstimate:
        """The estimate of :func:`warpspeed.pipeline.launch_time.pipeline_result` (``options``: its own)."""
        from warpspeed.pipeline.launch_time import pipeline_result

        r = pipeline_result(prediction, **options)
        return ModelEstimate(self.name, r.lups_per_s, r.seconds, r.cycles, r.explanation, r.details)


PATH_COLUMNS = (TableColumn("#"), TableColumn("instruction", justify="left"), TableColumn("pipeline", justify="left"),
                TableColumn("cycles"), TableColumn("cumulative"))
BUSY_COLUMNS = (TableColumn("pipeline", justify="left"), TableColumn("busy"), TableColumn("nodes/warp"))
#: What the critical-path table shows.
PATH_NOTE = ("The longest dependence chain of one warp, each instruction with the cycles it adds (its "
             "completion latency; a final store its issue latency). Global memory latencies come from this "
             "launch's predicted miss rates.")


def pipeline_tables(details: Mapping[str, Any]) -> tuple[ModelTable, ModelTable]:
    """The critical path (cycles per instruction and cumulative) and the busy fraction per
    pipeline of ``details`` (the pipeline model's :attr:`~warpspeed.model_protocol.ModelEstimate.details`)."""
    total, path = 0.0, []
    for k, step in enumerate(details["critical_path"], start=1):
        total += step["cycles"]
        path.append((str(k), step["instruction"], step["pipeline"], number_text(step["cycles"]),
                     number_text(total)))
    graph = details["graph"]
    per_pipeline = graph["nodes_per_pipeline"]
    busy = tuple((name, f"{100 * share:.1f} %", str(per_pipeline.get(name, 0)))
                 for name, share in sorted(details["pipeline_busy"].items(), key=lambda kv: -kv[1]))
    launch = details["launch"]
    return (ModelTable(f"critical path of one warp: {number_text(details['critical_path_cycles'])} cycles "
                       f"({graph['nodes']} nodes, from {graph['source']})", PATH_COLUMNS, tuple(path), (PATH_NOTE,)),
            ModelTable(f"pipelines of the busiest SM: {launch['groups_per_sm']} blocks, "
                       f"{launch['resident_groups']} resident, {launch['warps_per_group']} warps each",
                       BUSY_COLUMNS, busy))


#: The pipeline time model.
PIPELINE = PipelineModel()
