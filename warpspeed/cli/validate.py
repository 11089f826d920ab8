"""Validation commands: ``warpspeed measure``, ``warpspeed accuracy``, ``warpspeed refit``.

Registered by :mod:`warpspeed.cli.main` (``for c in COMMANDS: main.add_command(c)``). Errors are
:class:`~warpspeed.errors.WarpspeedError` subclasses; the group prints them as one line.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import click
from rich.console import Console

from warpspeed.cli.common import DEFAULT_DEVICE, DEFAULT_KERNEL
from warpspeed.cli.parse import DOMAIN, NAME
from warpspeed.cli.render import Column, console as make_console, fitted_table, print_fitted
from warpspeed.files.jsonsafe import json_text

from warpspeed.cli.paths import InputTextFile, OutputFile
from warpspeed.errors import WarpspeedError
from warpspeed.files.output import check_output_path

#: Exit status of ``measure`` stopped by SIGINT (Ctrl-C, ``timeout --signal=INT``): 128 + 2, as a shell reports it.
EXIT_INTERRUPTED = 130


def _pct(value: float) -> str:
    return "—" if not math.isfinite(value) else f"{value:.1f} %"


#: Columns of the accuracy table (the metric's name may wrap; numbers never do).
ACCURACY_COLUMNS = (Column("metric", justify="left", wraps=True), Column("unit", justify="left"), Column("rows"),
                    Column("MAPE"), Column("worst"), Column("worst config", justify="left"))
#: Columns of the refit table (the status text may wrap; numbers never do; the old parameters
#: are left out when the terminal is too narrow for them).
REFIT_COLUMNS = (Column("curve", justify="left"), Column("old a, b, c", priority=1), Column("new a, b, c"),
                 Column("points"), Column("RMS\n(hit rate)"), Column("status", justify="left", wraps=True))


def _print_accuracy(console, report, title: str) -> None:
    rows = [[m.label, m.unit, str(m.n), _pct(m.mape_percent), _pct(m.max_ape_percent), m.worst_config]
            for m in report.metrics]
    table, _ = fitted_table(console, ACCURACY_COLUMNS, rows)
    print_fitted(console, table, title)


def _ranking_lines(report) -> list[str]:
    r = report.ranking
    if r is None:
        return ["ranking: fewer than 2 rows with measured and predicted performance"]
    return [f"ranking over {r.n} configurations: Spearman rho {r.spearman:.3f} (p = {r.spearman_p_value:.2g})",
            f"best predicted {r.best_predicted} runs at {100 * r.best_predicted_relative:.1f} % of the best measured "
            f"({r.best_measured})",
            f"measured top-{r.top_k} in predicted top-{r.top_k}: {r.top_k_overlap} of {r.top_k}"]


@click.command()
@click.option("--kernel", "kernel_name", default=DEFAULT_KERNEL, show_default=True,
              help="A pystencils workload (star3d-r4, star3d-r1, star2d-r1, d3q19-srt, d3q27-srt, allen-cahn).")
@click.option("--domain", type=DOMAIN, default=None,
              help="Iteration domain nx,ny[,nz] in cells (default: the kernel's).")
@click.option("--dtype", type=click.Choice(["double", "float"]), default="double", show_default=True,
              help="Element type of the generated kernel.")
@click.option("--device", "device_name", default=DEFAULT_DEVICE, show_default=True,
              help="Device model for the predictions: built-in name or TOML path (should match the GPU).")
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="Threads per block of the candidate space, a power of two (default: 1024, 512 for LBM kernels).")
@click.option("--configs", "config_list", default=None,
              help="Measure only these configurations: BLOCK[:FOLD],... e.g. 8x4x32:1x1x2,32x32x1 (no FOLD: 1x1x1).")
@click.option("--sample", type=click.IntRange(min=1), default=None,
              help="Measure a random subset of N configurations (of the space, or of --configs).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --sample (the same seed, the same subset).")
@click.option("--repeats", type=click.IntRange(min=1), default=20, show_default=True, help="Timed launches per configuration.")
@click.option("--warmup", type=click.IntRange(min=0), default=3, show_default=True, help="Untimed launches before timing.")
@click.option("--no-ncu", is_flag=True, help="Only time; do not collect Nsight Compute counters.")
@click.option("--chunk", type=click.IntRange(min=1), default=32, show_default=True,
              help="Configurations profiled by one ncu run (one child process launches them all).")
@click.option("--power", is_flag=True,
              help="Also sample board power and SM clock (nvidia-smi) while each configuration runs back to back.")
@click.option("--power-seconds", type=click.FloatRange(min=2.0), default=5.0, show_default=True,
              help="Seconds of back-to-back launches per configuration with --power (the first second is not sampled).")
@click.option("--resume", is_flag=True,
              help="Keep the rows of an existing output file measured without error; measure only the others.")
@click.option("--gpu", "gpu_id", type=click.IntRange(min=0), default=0, show_default=True,
              help="CUDA device index: timing, the ncu-profiled launches and the power samples use it.")
@click.option("--out", "out_path", type=OutputFile("measurement file", create_parents=True), default=None,
              help="Output CSV (default: fits/data/<device>/<kernel>.csv; missing directories are created).")
def measure(kernel_name: str, domain: tuple[int, ...] | None, dtype: str, device_name: str, threads: int | None,
            config_list: str | None, sample: int | None, seed: int, repeats: int, warmup: int, no_ncu: bool,
            chunk: int, power: bool, power_seconds: float, resume: bool, gpu_id: int, out_path: str | None) -> None:
    """Run the configurations on this machine's GPU; write measured values and predictions row by row."""
    from warpspeed.hardware.device import load_device
    from warpspeed.kernel.catalog import resolve_kernel
    from warpspeed.launch.space import configuration_space, default_threads
    from warpspeed.validation import ncu, power_sampling, runners
    from warpspeed.validation.measure import measure as run_measure
    from warpspeed.validation.measurement_csv import (
        MeasurementWriter,
        check_resumable,
        default_output_path,
        read_existing,
    )
    from warpspeed.validation.selection import parse_config_list, remaining_configs, sample_configs

    device = load_device(device_name)
    dom = domain
    configs = parse_config_list(config_list) if config_list else None
    if configs is None:
        kernel = resolve_kernel(kernel_name, dom, device=device, dtype=dtype)
        configs = configuration_space(kernel, threads or default_threads(kernel, device))
    if sample is not None:
        configs = sample_configs(configs, sample, seed)
    out = Path(out_path) if out_path else check_output_path(
        default_output_path(device.name, kernel_name, dtype=dtype), "measurement file", create_parents=True)
    existing = read_existing(out) if resume and out.exists() else None
    todo = remaining_configs(configs, existing.done()) if existing is not None else list(configs)
    if not todo:
        Console().print(f"{out}: all {len(configs)} configurations are measured; nothing to resume")
        return
    runner = runners.CupyRunner(gpu_id)
    profiler = None if no_ncu else ncu.NcuProfiler(device_id=gpu_id)
    sampler = power_sampling.PowerSampler(gpu_id) if power else None
    writer: list[MeasurementWriter] = []

    def on_metadata(metadata) -> None:
        kept: list[str] = []
        if existing is not None:
            check_resumable(existing, metadata, out)
            redo = set(todo)
            kept = [line for line, c, e in zip(existing.lines, existing.configs, existing.errors)
                    if not (e and c in redo)]
            metadata = {**existing.metadata, "resumed": metadata["date"]}
        writer.append(MeasurementWriter(out, metadata, kept))

    console = Console(stderr=True)
    try:
        with console.status(f"measuring {len(todo)} configurations of {kernel_name}") as status:
            def progress(done: int) -> None:
                status.update(f"measuring {kernel_name}: {done}/{len(todo)} configurations")

            table = run_measure(kernel_name, device, todo, runner, profiler, domain=dom, warmup=warmup,
                                repeats=repeats, progress=progress, dtype=dtype, chunk=chunk, power=sampler,
                                power_seconds=power_seconds, on_metadata=on_metadata,
                                on_row=lambda row: writer[0].write(row))
    except KeyboardInterrupt:
        done = writer[0].rows_written if writer else 0
        click.echo(f"interrupted: {done} rows written to {out}; --resume measures the rest", err=True)
        sys.exit(EXIT_INTERRUPTED)
    finally:
        for w in writer:
            w.close()
    failed = [r for r in table.rows if r["error"]]
    Console().print(f"wrote {len(table.rows)} rows to {out} ({table.metadata.get('gpu_name', '?')}, "
                    f"driver {table.metadata.get('driver', '?')}); {len(failed)} with errors")


@click.command()
@click.argument("csv_path", type=InputTextFile("measurement file"))
@click.option("--plot", "plot_path", type=OutputFile("plot", plot=True), default=None,
              help="Write predicted-vs-measured scatter plots (format from the suffix: png, pdf, svg, ...).")
@click.option("--top", "top_k", type=click.IntRange(min=1), default=5, show_default=True,
              help="Size of the top group compared between predicted and measured ranking.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--device", "device_name", default=None,
              help="Device of the phenomenological variant (the roofline fed with the measured volumes): "
                   "built-in name or TOML path (default: the file's device_model).")
def accuracy(csv_path: str, plot_path: str | None, top_k: int, as_json: bool, device_name: str | None) -> None:
    """Prediction errors (MAPE per metric) and ranking quality of a measurement CSV.

    When the rows have measured L1 wavefronts, L2 and DRAM volumes, the report also gives the
    phenomenological variant: the same roofline fed with the measured volumes instead of the
    predicted ones (Ernst et al. 2023, section 5.8)."""
    from warpspeed.validation.accuracy import plot_accuracy, table_accuracy
    from warpspeed.validation.measure import PREDICTION_MODEL
    from warpspeed.validation.measurement_csv import read_measurement_columns

    table = read_measurement_columns(csv_path)
    report = table_accuracy(table, top_k, device_name)
    if report.rows == 0:
        raise WarpspeedError(f"{csv_path!r} has no usable rows (every row has an error); allowed: rows of "
                             "configurations that ran (measure again)")
    if not any(m.n for m in report.metrics):
        raise WarpspeedError(f"{csv_path!r} has no row with a measured and a predicted value; allowed: rows "
                             "with meas_* and pred_* values (as warpspeed measure writes them)")
    if plot_path:
        plot_accuracy(table.table().rows, plot_path, f"{table.kernel} on {table.metadata.get('gpu_name', table.device)}")
    model = table.metadata.get("prediction_model", PREDICTION_MODEL)
    version = table.metadata.get("warpspeed_version", "?")
    if as_json:
        click.echo(json_text({**report.to_dict(), "prediction_model": model, "predicted_by": f"warpspeed {version}"},
                             indent=2))
        return
    console = make_console()
    _print_accuracy(console, report, f"{report.kernel} on {report.device}: {report.rows} configurations, "
                                     f"predicted by the {model} model")
    console.print(f"predictions: the file's pred_* columns, the {model} model of warpspeed {version} when it was "
                  "measured (`warpspeed validate` predicts the stored H200 timings with every current model)",
                  highlight=False)
    for line in _ranking_lines(report):
        console.print(line)
    for line in _phenomenological_lines(report):
        console.print(line)


def _phenomenological_lines(report) -> list[str]:
    p = report.phenomenological
    if p is None:
        return []
    perf = p.performance
    limiters = ", ".join(f"{name} {count}" for name, count in p.limiters)
    lines = ["phenomenological (the same roofline fed with the measured L1 wavefronts, L2 and DRAM volumes):",
             f"  performance MAPE {_pct(perf.mape_percent)} over {p.n} configurations (worst {_pct(perf.max_ape_percent)}, "
             f"{perf.worst_config}); limiters: {limiters}"]
    r = p.ranking
    if r is not None:
        lines += [f"  Spearman rho {r.spearman:.3f}; best {r.best_predicted} runs at "
                  f"{100 * r.best_predicted_relative:.1f} % of the best measured ({r.best_measured}); "
                  f"measured top-{r.top_k} in its top-{r.top_k}: {r.top_k_overlap} of {r.top_k}"]
    return lines


@click.command()
@click.argument("csv_path", type=InputTextFile("measurement file"))
@click.option("--family", type=NAME, required=True,
              help="Curve family to refit (e.g. nvidia-ampere); its fits/ file is the start.")
@click.option("--out", "out_path", required=True, type=OutputFile("curve file"), help="Output TOML file.")
@click.option("--holdout-every", type=click.IntRange(min=2), default=4, show_default=True,
              help="Hold every k-th row out of the fit and report accuracy on those rows.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def refit(csv_path: str, family: str, out_path: str, holdout_every: int, as_json: bool) -> None:
    """Refit the capacity curves on measured data; write them with provenance."""
    from warpspeed.memory.capacity import CURVE_NAMES
    from warpspeed.validation.measurement_csv import read_measurement_csv
    from warpspeed.validation.refit import refit as run_refit, write_refit

    table = read_measurement_csv(csv_path)
    result = run_refit(table, family, holdout_every=holdout_every)
    write_refit(result, out_path, source=str(csv_path), device=table.metadata.get("gpu_name", table.device))
    if as_json:
        click.echo(json_text({
            "family": result.family, "out": out_path, "fit_rows": result.fit_rows,
            "held_out_rows": result.held_out_rows,
            "fitted": {n: {"a": r.curve.a, "b": r.curve.b, "c": r.curve.c, "points": len(r.points),
                           "rms_error": r.rms_error} for n, r in result.fitted.items()},
            "skipped": dict(result.skipped), "before": result.before.to_dict(), "after": result.after.to_dict()},
            indent=2))
        return
    console = make_console()
    rows = []
    for name in CURVE_NAMES:
        old = result.base.curve(name)
        fit = result.fitted.get(name)
        new = fit.curve if fit else old
        rows.append([name, f"{old.a:.3g}, {old.b:.3g}, {old.c:.3g}", f"{new.a:.3g}, {new.b:.3g}, {new.c:.3g}",
                     str(len(fit.points)) if fit else "", f"{fit.rms_error:.3f}" if fit else "",
                     "refitted" if fit else f"kept: {result.skipped[name]}"])
    table, dropped = fitted_table(console, REFIT_COLUMNS, rows)
    left_out = [f"Left out to fit the terminal: {', '.join(c.name for c in dropped)} (--json has them)."] if dropped else []
    print_fitted(console, table, f"{family}: Gompertz miss-rate curves m(o) = a·exp(−b·exp(−c·o))", left_out)
    _print_accuracy(console, result.before, f"held-out rows ({result.held_out_rows}), old curves")
    _print_accuracy(console, result.after, f"held-out rows ({result.held_out_rows}), refitted curves")
    console.print(f"wrote {out_path}")


COMMANDS = [measure, accuracy, refit]
