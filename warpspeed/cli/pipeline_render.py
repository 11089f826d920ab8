"""Table mode of ``predict --model pipeline``: the critical path and the pipelines' load."""

from __future__ import annotations

from typing import Any, Mapping

from rich.console import Console

from warpspeed.cli.render import Column, fitted_table, fmt, print_fitted

PATH_COLUMNS = (Column("#"), Column("instruction", justify="left"), Column("pipeline", justify="left"),
                Column("cycles"), Column("cumulative"))
BUSY_COLUMNS = (Column("pipeline", justify="left"), Column("busy"), Column("nodes/warp"))
#: What the critical-path table shows.
PATH_NOTE = ("The longest dependence chain of one warp, each instruction with the cycles it adds (its "
             "completion latency; a final store its issue latency). Global memory latencies come from this "
             "launch's predicted miss rates.")


def render_pipeline(console: Console, details: Mapping[str, Any]) -> None:
    """Print the critical path and the busy fraction per pipeline of ``details`` (the pipeline
    model's :attr:`warpspeed.models.ModelEstimate.details`)."""
    total, rows = 0.0, []
    for k, step in enumerate(details["critical_path"], start=1):
        total += step["cycles"]
        rows.append([str(k), step["instruction"], step["pipeline"], fmt(step["cycles"]), fmt(total)])
    table, _ = fitted_table(console, PATH_COLUMNS, rows)
    print_fitted(console, table, f"critical path of one warp: {fmt(details['critical_path_cycles'])} cycles "
                 f"({details['graph']['nodes']} nodes, from {details['graph']['source']})", [PATH_NOTE])
    per_pipeline = details["graph"]["nodes_per_pipeline"]
    rows = [[name, f"{100 * busy:.1f} %", str(per_pipeline.get(name, 0))]
            for name, busy in sorted(details["pipeline_busy"].items(), key=lambda kv: -kv[1])]
    table, _ = fitted_table(console, BUSY_COLUMNS, rows)
    launch = details["launch"]
    print_fitted(console, table, f"pipelines of the busiest SM: {launch['groups_per_sm']} blocks, "
                 f"{launch['resident_groups']} resident, {launch['warps_per_group']} warps each")
