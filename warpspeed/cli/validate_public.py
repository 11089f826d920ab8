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
from warpspeed.models import TIME_MODELS

#: Exit status when a dataset exceeds its stated error bound.
EXIT_OUT_OF_BOUNDS = 1

#: Columns of the table (the dataset name and the worst point may wrap; numbers never do).
VALIDATE_COLUMNS = (
    Column("group", justify="left"), Column("dataset", justify="left", wraps=True), Column("points"),
    Column("MAPE\n%"), Column("worst"), Column("worst point", justify="left", wraps=True, priority=1),
    Column("bound\nMAPE / worst %", priority=2), Column("within"),
)

#: Columns of the time-model table: MAPE % per model (docs/compare.md).
MODEL_COLUMNS = (Column("dataset", justify="left", wraps=True), *(Column(f"{m}\nMAPE %") for m in TIME_MODELS))
#: Columns of the real GPU's table: per time model, its figures on the timed configurations.
REAL_COLUMNS = (Column("model", justify="left"), Column("MAPE\n%"), Column("median\npred/meas"),
                Column("Spearman"), Column("best predicted", justify="left"), Column("its share\nof best"))


@click.command()
@click.option("--write-docs", is_flag=True,
              help="Write the report to docs/accuracy.md (relative to the current directory: run it in the repository root).")
@click.option("--out", "out_path", type=OutputFile("accuracy page", create_parents=True), default=None,
              help="Write the report as Markdown to this file.")
@click.option("--json", "as_json", is_flag=True, help="Print every dataset with its points as JSON.")
@click.option("--wide", is_flag=True, help="Show every column even if the table is wider than the terminal.")
def validate(write_docs: bool, out_path: str | None, as_json: bool, wide: bool) -> None:
    """Run every stored measurement through the model: points, MAPE and worst case per dataset.

    First the real GPU: the 25-point stencil's 160 configurations timed on an H200 with every time
    model (MAPE, Spearman, the measured share of each model's best configuration), the volumes of
    its three Nsight Compute profiles and its board-power soaks (needs the pystencils workloads).
    Then the public microbenchmarks: the A100 gpu-strides rows (L1 cycles and wavefront counters per
    warp load), the RX 6900 XT rows and the MI210 float rows (first-level cycles per load of 32
    threads), the gpu-stream sweeps (DRAM bandwidth against occupancy, per device) and the
    gpu-l2-cache sweeps (the device files' L2 bandwidth and effective capacity), the power families
    (gpu-roofline) and the time models on whole kernels (gpu-stream, gpu-roofline, gpu-small-kernels,
    FluidX3D's published D3Q19 throughput: MAPE per model and dataset). Exits with status 1 when a
    dataset exceeds its stated bound.
    """
    from warpspeed.files.output import check_output_path
    from warpspeed.validation.public import public_accuracy
    from warpspeed.validation.public_report import DOCS_PATH, accuracy_markdown, summary_rows, time_model_rows
    from warpspeed.validation.real_gpu import real_gpu_caption, real_gpu_document, real_gpu_rows

    targets = [Path(out_path)] if out_path else []
    if write_docs:
        targets.append(check_output_path(DOCS_PATH, "accuracy page", create_parents=True))
    datasets = public_accuracy()
    real = _real_gpu()
    if targets:
        text = accuracy_markdown(datasets, real)
        for target in targets:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    if as_json:
        click.echo(json_text({"real_gpu": real_gpu_document(real) if real is not None else None, "datasets": [{
            "group": ds.group, "dataset": ds.name, "unit": ds.unit, "points": len(ds.points),
            "mape_percent": ds.mape_percent, "worst_error_percent": ds.worst.error_percent,
            "worst_point": ds.worst.label, "mape_bound_percent": ds.mape_bound_percent,
            "worst_bound_percent": ds.worst_bound_percent, "within_bounds": ds.within_bounds,
            "sources": [{"repository": ds.repository, "path": p, "commit": c} for p, c in ds.sources],
            "values": [{"point": p.label, "model": p.predicted, "measured": p.measured} for p in ds.points],
        } for ds in datasets]}, indent=2))
    else:
        out = make_console()
        if real is not None:
            table, _ = fitted_table(out, REAL_COLUMNS, real_gpu_rows(real), wide)
            print_fitted(out, table, f"Real GPU: {real.kernel} on an {real.device}, {len(real.models[0].points)} "
                         "timed configurations", [real_gpu_caption(real)])
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
    if not all(ds.within_bounds for ds in datasets) or (real is not None and not real.within_criteria):
        sys.exit(EXIT_OUT_OF_BOUNDS)


def _real_gpu():
    """The real GPU's comparison, or ``None`` (with a note on stderr) without the pystencils workloads."""
    from warpspeed.errors import WarpspeedError
    from warpspeed.validation.real_gpu import real_gpu_accuracy

    try:
        return real_gpu_accuracy()
    except WarpspeedError as exc:
        click.echo(f"note: the real GPU's measurements are not compared: {exc}", err=True)
        return None
