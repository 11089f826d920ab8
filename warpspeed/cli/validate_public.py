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
from warpspeed.cli.render import Column, console as make_console, fitted_table, print_fitted, stderr_status
from warpspeed.files.atomic import write_text_atomic
from warpspeed.files.jsonsafe import json_text
from warpspeed.models import TIME_MODELS

#: Exit status when a dataset exceeds its stated error bound.
EXIT_OUT_OF_BOUNDS = 1
#: Exit status when a documented section cannot be run (the real GPU's comparison without the
#: pystencils workloads): the report is incomplete, which a script must not take for success.
EXIT_SECTION_SKIPPED = 3
#: How the instruction mixes of the real GPU's section are obtained, by whether nvcc is there.
MIX_SASS = "SASS compiled by nvcc (cuobjdump -sass)"
MIX_DERIVED = ("derived from the kernel description: nvcc and cuobjdump not found, so the interval, pipeline and "
               "power figures differ from docs/accuracy.md (pip install 'warpspeed[cuda]')")

#: Columns of the table (the dataset name and the worst point may wrap; numbers never do).
VALIDATE_COLUMNS = (
    Column("group", justify="left"), Column("dataset", justify="left", wraps=True), Column("points"),
    Column("MAPE\n%"), Column("worst"), Column("worst point", justify="left", wraps=True, priority=1),
    Column("bound\nMAPE / worst %", priority=2), Column("within"),
)

#: Columns of the time-model table: MAPE % per model (docs/compare.md).
MODEL_COLUMNS = (Column("dataset", justify="left", wraps=True), *(Column(f"{m}\nMAPE %") for m in TIME_MODELS))
#: Columns of the table of kernels the model was not fitted on.
TRANSFER_COLUMNS = (Column("kernel", justify="left"), Column("points"), Column("MAPE\n%"), Column("median\npred/meas"),
                    Column("Spearman"), Column("best\nshare"), Column("in-sample\nMAPE %"),
                    Column("left out\nMAPE %"))
#: Columns of the table of what each device was checked against.
CHECKED_COLUMNS = (Column("device", justify="left"), Column("datasets"), Column("checked against", justify="left", wraps=True))
#: Columns of the real GPU's table: per time model, its figures on the timed configurations.
REAL_COLUMNS = (Column("model", justify="left"), Column("MAPE\n%"), Column("median\npred/meas"),
                Column("Spearman"), Column("best predicted", justify="left"), Column("its share\nof best"))


@click.command()
@click.option("--write-docs", is_flag=True,
              help="Write the report to docs/accuracy.md, its figures to warpspeed/validation/accuracy_figures.json "
                   "and the README's accuracy tables (relative to the current directory: run it in the "
                   "repository root).")
@click.option("--out", "out_path", type=OutputFile("accuracy page", create_parents=True), default=None,
              help="Write the report as Markdown to this file.")
@click.option("--json", "as_json", is_flag=True, help="Print every dataset with its points as JSON.")
@click.option("--wide", is_flag=True, help="Show every column even if the table is wider than the terminal.")
@click.option("--device", "device_name", default=None,
              help="Compare this device (built-in name or device-file path) with your own measurements instead: "
                   "the raw tables of `warpspeed calibrate` beside its file, or --tables.")
@click.option("--tables", "tables_dir", type=click.Path(file_okay=False), default=None,
              help="With --device: the folder of measurement tables (default: the device file's .calibration folder).")
def validate(write_docs: bool, out_path: str | None, as_json: bool, wide: bool, device_name: str | None,
             tables_dir: str | None) -> None:
    """Run every stored measurement through the model: points, MAPE and worst case per dataset.

    First the real GPU: the 25-point stencil's 160 configurations timed on an H200 with every time
    model (MAPE, Spearman, the measured share of each model's best configuration), the volumes of
    its three Nsight Compute profiles and its board-power soaks (needs the pystencils workloads);
    then five more kernels timed on the same H200 with the overlap model, its two fitted constants
    in-sample and with each kernel left out of the fit, and two mechanism microbenchmarks.
    Then the public microbenchmarks: the A100 gpu-strides rows (L1 cycles and wavefront counters per
    warp load), the RX 6900 XT rows and the MI210 float rows (first-level cycles per load of 32
    threads), the gpu-stream sweeps (DRAM bandwidth against occupancy, per device) and the
    gpu-l2-cache sweeps (the device files' L2 bandwidth and effective capacity), the power families
    (gpu-roofline) and the time models on whole kernels (gpu-stream, gpu-roofline, gpu-small-kernels,
    FluidX3D's published D3Q19 throughput: MAPE per model and dataset). Exits with status 1 when a
    dataset exceeds its stated bound, 3 when the real GPU's section cannot be run.
    """
    if device_name is not None or tables_dir is not None:
        _validate_device(device_name, tables_dir, write_docs, out_path, as_json, wide)
        return
    from warpspeed.files.output import check_output_path
    from warpspeed.validation.public import public_accuracy
    from warpspeed.validation.public_report import DOCS_PATH, accuracy_markdown

    targets = [Path(out_path)] if out_path else []
    if write_docs:
        targets.append(check_output_path(DOCS_PATH, "accuracy page", create_parents=True))
    with stderr_status("validate: the real GPU's 160 configurations with every time model"):
        real = _real_gpu()
    with stderr_status("validate: five more kernels timed on the same GPU, fitted and left out"):
        kernels = _kernel_transfer()
    with stderr_status("validate: the public microbenchmark measurements"):
        datasets = public_accuracy()
    if targets:
        text = accuracy_markdown(datasets, real, kernels)
        for target in targets:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(target, text)
    if write_docs:
        targets += _write_figures(datasets, real, kernels)
    for target in targets:
        click.echo(f"wrote {target}", err=True)
    if as_json:
        click.echo(_validation_json(datasets, real, kernels))
    else:
        _print_validation(datasets, real, kernels, wide)
    if not all(ds.within_bounds for ds in datasets) or (real is not None and not real.within_criteria):
        sys.exit(EXIT_OUT_OF_BOUNDS)
    if real is None:
        click.echo("error: the real GPU's section was not run (see the note above); the report is incomplete",
                   err=True)
        sys.exit(EXIT_SECTION_SKIPPED)


def _validation_json(datasets, real, kernels) -> str:
    """``validate --json``: what each device was checked against, the real GPU's and the kernel
    transfer's documents, the instruction mix's origin and every dataset with its points."""
    from warpspeed.hardware.device import device_names
    from warpspeed.validation.kernel_transfer import transfer_document
    from warpspeed.validation.per_device import checked_by_device
    from warpspeed.validation.real_gpu import real_gpu_document

    checked = checked_by_device(datasets, device_names(), real.device if real is not None else None)
    return json_text({"checked_by_device": {k: list(v) for k, v in checked.items()},
                      "real_gpu": real_gpu_document(real) if real is not None else None,
                      "kernel_transfer": transfer_document(kernels) if kernels is not None else None,
                      "instructions": _mix_origin(), "datasets": [_dataset_document(ds) for ds in datasets]},
                     indent=2)


def _dataset_document(ds) -> dict:
    """One dataset of ``validate --json``: its errors and bounds, its sources and its points."""
    return {
        "group": ds.group, "dataset": ds.name, "unit": ds.unit, "points": len(ds.points),
        "mape_percent": ds.mape_percent, "worst_error_percent": ds.worst.error_percent,
        "worst_point": ds.worst.label, "mape_bound_percent": ds.mape_bound_percent,
        "worst_bound_percent": ds.worst_bound_percent, "within_bounds": ds.within_bounds,
        "sources": [{"repository": ds.repository, "path": p, "commit": c} for p, c in ds.sources],
        "values": [{"point": p.label, "model": p.predicted, "measured": p.measured} for p in ds.points],
    }


def _print_validation(datasets, real, kernels, wide: bool) -> None:
    """``validate``'s tables: the real GPU, the kernels the model was not fitted on, the public
    datasets, the time models on whole kernels and what each device was checked against."""
    from warpspeed.hardware.device import device_names
    from warpspeed.validation.kernel_transfer import transfer_caption, transfer_rows
    from warpspeed.validation.per_device import checked_by_device
    from warpspeed.validation.public_report import summary_rows, time_model_rows
    from warpspeed.validation.real_gpu import real_gpu_caption, real_gpu_rows

    out = make_console()
    if real is not None:
        table, _ = fitted_table(out, REAL_COLUMNS, real_gpu_rows(real), wide)
        print_fitted(out, table, f"Real GPU: {real.kernel} on an {real.device}, {len(real.models[0].points)} "
                     "timed configurations", [real_gpu_caption(real)])
        out.print(f"registers: {real.registers}; instruction mix: {_mix_origin()}", highlight=False)
    if kernels is not None:
        table, _ = fitted_table(out, TRANSFER_COLUMNS, transfer_rows(kernels), wide)
        print_fitted(out, table, f"Kernels the model was not fitted on ({kernels.device}): the overlap model",
                     [transfer_caption(kernels)])
    table, dropped = fitted_table(out, VALIDATE_COLUMNS, summary_rows(datasets), wide)
    caption = ["Errors: 100 (model - measured) / measured. Data: te42kyfo/gpu-benches, stored under "
               "fits/data/public/, and FluidX3D's published D3Q19 rates (docs/accuracy.md names each file and commit)."]
    if dropped:
        caption.append(f"Left out to fit the terminal: {', '.join(c.name for c in dropped)} (--wide shows them).")
    print_fitted(out, table, "The model against the stored public measurements", caption)
    pivot = time_model_rows(datasets)
    if pivot:
        models, _ = fitted_table(out, MODEL_COLUMNS, pivot, wide)
        print_fitted(out, models, "Time models on whole kernels: MAPE % per model and dataset",
                     ["—: no parameters for the device. Which model is closest on which kind of kernel: "
                      "docs/compare.md."])
    checked = checked_by_device(datasets, device_names(), real.device if real is not None else None)
    table, _ = fitted_table(out, CHECKED_COLUMNS, [[name, str(len(v)), "; ".join(v) or "nothing stored"]
                                                    for name, v in checked.items()], wide)
    print_fitted(out, table, "What each built-in device was checked against",
                 ["Every constant's source: warpspeed devices --provenance (docs/provenance.md)."])


def _write_figures(datasets, real, kernels) -> list[Path]:
    """``--write-docs``' other copies of the figures: the figures file every ``--help`` reads and
    the README's generated blocks (:mod:`warpspeed.validation.figures`), relative to the current
    directory (the repository root). Returns the paths written."""
    from warpspeed.files.output import check_output_path
    from warpspeed.validation.figures import GENERATED_PAGES, REPO_PATH, figures_document, figures_text, update_readme

    doc = figures_document(datasets, real, kernels)
    figures = check_output_path(REPO_PATH, "accuracy figures", create_parents=True)
    write_text_atomic(figures, figures_text(doc))
    written = [figures]
    for name in GENERATED_PAGES:
        page = Path(name)
        if page.is_file():
            text = page.read_text(encoding="utf-8")
            new = update_readme(text, doc)
            if new != text:
                write_text_atomic(page, new)
                written.append(page)
    return written


def _mix_origin() -> str:
    """Where the real GPU section's instruction mixes come from."""
    from warpspeed.sass.stream import sass_available

    return MIX_SASS if sass_available() else MIX_DERIVED


def _kernel_transfer():
    """The kernels the model was not fitted on, or ``None`` (with a note on stderr) without the
    pystencils workloads."""
    from warpspeed.errors import WarpspeedError
    from warpspeed.validation.kernel_transfer import kernel_transfer

    try:
        return kernel_transfer()
    except WarpspeedError as exc:
        click.echo(f"note: the kernels beyond the fitted one are not compared: {exc}", err=True)
        return None


def _validate_device(device_name: str | None, tables_dir: str | None, write_docs: bool, out_path: str | None,
                     as_json: bool, wide: bool) -> None:
    """``validate --device``: the device against the tables of its calibration (or ``--tables``)."""
    from warpspeed.measured.raw_tables import table_folder
    from warpspeed.errors import WarpspeedError
    from warpspeed.hardware.device import is_device_path, load_device
    from warpspeed.validation.own_tables import own_datasets
    from warpspeed.validation.public_report import summary_rows

    if device_name is None:
        raise WarpspeedError("--tables needs --device (the device whose predictions are compared)")
    if write_docs or out_path:
        raise WarpspeedError("--write-docs and --out write the public accuracy page; with --device use --json")
    device = load_device(device_name)
    if tables_dir is None:
        if not is_device_path(device_name):
            raise WarpspeedError(f"{device_name!r} is a built-in device: give the folder of your measurements "
                                 "with --tables DIR")
        tables_dir = str(table_folder(device_name))
    datasets, notes = own_datasets(device, tables_dir)
    if as_json:
        click.echo(json_text({"device": device.name, "tables": tables_dir, "notes": list(notes), "datasets": [{
            "group": ds.group, "dataset": ds.name, "unit": ds.unit, "points": len(ds.points),
            "mape_percent": ds.mape_percent, "worst_error_percent": ds.worst.error_percent,
            "worst_point": ds.worst.label, "mape_bound_percent": ds.mape_bound_percent,
            "worst_bound_percent": ds.worst_bound_percent, "within_bounds": ds.within_bounds,
            "values": [{"point": p.label, "model": p.predicted, "measured": p.measured} for p in ds.points],
        } for ds in datasets]}, indent=2))
    else:
        out = make_console()
        if datasets:
            table, _ = fitted_table(out, VALIDATE_COLUMNS, summary_rows(datasets), wide)
            print_fitted(out, table, f"{device.name} against the measurements in {tables_dir}",
                         ["Errors: 100 (model - measured) / measured."] + [f"Not compared: {n}" for n in notes])
        else:
            click.echo(f"no measurement in {tables_dir} to compare {device.name} with: " + "; ".join(notes))
    if not datasets:
        sys.exit(EXIT_OUT_OF_BOUNDS)
    if not all(ds.within_bounds for ds in datasets):
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
