"""``warpspeed validate``: the model against every stored public measurement.

Registered by :mod:`warpspeed.cli.main`. The comparison is
:func:`warpspeed.validation.public.public_accuracy`; the page it writes is
:func:`warpspeed.validation.public_report.accuracy_markdown`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from warpspeed.cli.paths import OutputFile
from warpspeed.cli.render import Column, console as make_console, fitted_table, print_fitted
from warpspeed.files.jsonsafe import json_text

#: Exit status when a dataset exceeds its stated error bound.
EXIT_OUT_OF_BOUNDS = 1

#: Columns of the table (the dataset name and the worst point may wrap; numbers never do).
VALIDATE_COLUMNS = (
    Column("group", justify="left"), Column("dataset", justify="left", wraps=True), Column("points"),
    Column("MAPE\n%"), Column("worst"), Column("worst point", justify="left", wraps=True, priority=1),
    Column("bound\nMAPE / worst %", priority=2), Column("within"),
)

#: Columns of the time-model table: MAPE % per model (docs/compare.md).
MODEL_COLUMNS = (Column("dataset", justify="left", wraps=True), Column("roofline\nMAPE %"),
                 Column("interval\nMAPE %"), Column("pipeline\nMAPE %"))


@click.command()
@click.option("--write-docs", is_flag=True,
              help="Write the report to docs/accuracy.md (relative to the current directory: run it in the repository root).")
@click.option("--out", "out_path", type=OutputFile("accuracy page", create_parents=True), default=None,
              help="Write the report as Markdown to this file.")
@click.option("--json", "as_json", is_flag=True, help="Print every dataset with its points as JSON.")
@click.option("--wide", is_flag=True, help="Show every column even if the table is wider than the terminal.")
def validate(write_docs: bool, out_path: str | None, as_json: bool, wide: bool) -> None:
    """Run every stored public measurement through the model: points, MAPE and worst case per dataset.

    Datasets: the A100 gpu-strides rows (L1 cycles and wavefront counters per warp load), the
    gpu-stream sweeps (DRAM bandwidth against occupancy, per device) and the gpu-l2-cache sweeps
    (the device files' L2 bandwidth and effective capacity), the power families (gpu-roofline) and
    the three time models on whole kernels (gpu-stream, gpu-roofline, gpu-small-kernels, FluidX3D's
    published D3Q19 throughput: MAPE per model and dataset). Exits with status 1 when a dataset
    exceeds its stated bound.
    """
    from warpspeed.files.output import check_output_path
    from warpspeed.validation.public import public_accuracy
    from warpspeed.validation.public_report import DOCS_PATH, accuracy_markdown, summary_rows, time_model_rows

    targets = [Path(out_path)] if out_path else []
    if write_docs:
        targets.append(check_output_path(DOCS_PATH, "accuracy page", create_parents=True))
    datasets = public_accuracy()
    if targets:
        text = accuracy_markdown(datasets)
        for target in targets:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    if as_json:
        click.echo(json_text([{
            "group": ds.group, "dataset": ds.name, "unit": ds.unit, "points": len(ds.points),
            "mape_percent": ds.mape_percent, "worst_error_percent": ds.worst.error_percent,
            "worst_point": ds.worst.label, "mape_bound_percent": ds.mape_bound_percent,
            "worst_bound_percent": ds.worst_bound_percent, "within_bounds": ds.within_bounds,
            "sources": [{"repository": ds.repository, "path": p, "commit": c} for p, c in ds.sources],
            "values": [{"point": p.label, "model": p.predicted, "measured": p.measured} for p in ds.points],
        } for ds in datasets], indent=2))
    else:
        out = make_console()
        table, dropped = fitted_table(out, VALIDATE_COLUMNS, summary_rows(datasets), wide)
        caption = ["Errors: 100 (model - measured) / measured. Data: te42kyfo/gpu-benches, stored under "
                   "fits/data/public/, and FluidX3D's published D3Q19 rates (docs/accuracy.md names each file and commit)."]
        caption += [f"Written: {t}" for t in targets]
        if dropped:
            caption.append(f"Left out to fit the terminal: {', '.join(c.name for c in dropped)} (--wide shows them).")
        print_fitted(out, table, "The model against the stored public measurements", caption)
        pivot = time_model_rows(datasets)
        if pivot:
            models, _ = fitted_table(out, MODEL_COLUMNS, pivot, wide)
            print_fitted(out, models, "Time models on whole kernels: MAPE % per model and dataset",
                         ["—: no parameters for the device. Which model is closest on which kind of kernel: "
                          "docs/compare.md."])
    if not all(ds.within_bounds for ds in datasets):
        sys.exit(EXIT_OUT_OF_BOUNDS)
