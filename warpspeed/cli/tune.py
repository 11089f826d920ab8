"""``warpspeed tune``: measure configurations through Kernel Tuner in the model's order, or replay a cache."""

from __future__ import annotations

import math

import click

from warpspeed.cli.common import dtype_option, kernel_options, model_option
from warpspeed.cli.paths import OutputFile
from warpspeed.cli.render import console as make_console, glups
from warpspeed.files.jsonsafe import json_safe, json_text


@click.command()
@kernel_options
@dtype_option
@click.option("--budget", type=click.IntRange(min=1), default=None,
              help="Measure at most this many configurations (default: until --patience runs bring no better time).")
@click.option("--patience", type=click.IntRange(min=0), default=None,
              help="Stop after this many measurements in a row without a better time (default 5; 0: never, "
                   "measure until --budget or the whole space).")
@click.option("--simulate", "simulate_path", type=str, default=None, metavar="CACHE.json",
              help="Replay this Kernel Tuner cache through Kernel Tuner's simulation mode instead of measuring "
                   "(no GPU needed).")
@click.option("--cache", "cache_path", type=OutputFile("Kernel Tuner cache"), default=None,
              help="Kernel Tuner cache to write while measuring, and to resume from (default: "
                   "<kernel>.kerneltuner.json).")
@click.option("--csv", "csv_path", type=OutputFile("measurement CSV"), default=None,
              help="Also write the measured configurations as a measurement CSV (docs/validation.md).")
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="Threads per block of the space measured on the GPU (default: as warpspeed rank).")
@model_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def tune(kernel_name: str, domain: tuple[int, ...] | None, device_name: str, dtype: str | None, budget: int | None,
         patience: int | None, simulate_path: str | None, cache_path: str | None, csv_path: str | None,
         threads: int | None, model: str, as_json: bool) -> None:
    """Find the fastest configuration in a handful of runs: Kernel Tuner measures in warpspeed's order.

    On a machine with an NVIDIA GPU and cupy, the kernel's configurations (blocks x foldings,
    the space of `warpspeed rank`) are ranked, then measured by Kernel Tuner (cupy backend, the
    code pystencils generates for each folding) best predicted first, until --budget runs or
    --patience runs without a better time. Kernel Tuner's cache (--cache) is written as it
    measures and resumed from. With --simulate CACHE.json a Kernel Tuner cache is replayed
    through Kernel Tuner's simulation mode instead (no GPU); --domain defaults to the cache's
    problem size. Times are Kernel Tuner's: ms per launch.
    """
    from warpspeed.rank import Scoring

    scoring = Scoring(model)
    use_patience = patience != 0
    patience_runs = patience if patience else None
    if simulate_path is not None:
        if cache_path or csv_path or threads:
            raise click.UsageError("--simulate replays a cache: --cache, --csv and --threads apply to measuring on a GPU")
        from warpspeed.tune.replay import simulate

        result = simulate(simulate_path, kernel_name, device_name, domain, budget=budget, patience=patience_runs,
                          dtype=dtype, scoring=scoring, use_patience=use_patience)
        source = f"replayed from {simulate_path} by Kernel Tuner's simulation mode"
    else:
        from warpspeed.tune.gpu import require_gpu, tune_on_gpu, write_measurements

        cache = cache_path or f"{kernel_name}.kerneltuner.json"
        if not cache.endswith(".json"):
            raise click.UsageError(f"--cache {cache!r} must end in .json (Kernel Tuner adds .json to a cache name "
                                   "without it)")
        require_gpu()
        result, raw = tune_on_gpu(kernel_name, device_name, domain, dtype=dtype, budget=budget,
                                  patience=patience_runs, use_patience=use_patience, cache_path=cache,
                                  scoring=scoring, threads=threads)
        if csv_path:
            write_measurements(result, raw, csv_path, kernel_name, result.device, dtype)
        source = f"measured by Kernel Tuner on this GPU; cache {cache}" + (f", CSV {csv_path}" if csv_path else "")
    if as_json:
        click.echo(json_text(json_safe({**result.as_dict(), "source": source}), indent=2))
        return
    _print(result, source)


def _ms(value: float | None) -> str:
    return "failed" if value is None else f"{value:.4f}"


def _print(result, source: str) -> None:  # type: ignore[no-untyped-def]
    from rich.table import Table

    out = make_console()
    table = Table(title=f"{result.kernel} on {result.device}, domain {'x'.join(map(str, result.domain))}: "
                        f"{len(result.runs)} of {result.space} configurations {source}", title_justify="left")
    for header in ("run", "block", "fold", "predicted\nGlup/s", "predicted\nplace", "measured\nms",
                   "measured\nGlup/s", "best so far\nms"):
        table.add_column(header, justify="right")
    best_so_far = math.inf
    for run in result.runs:
        if run.time_ms is not None:
            best_so_far = min(best_so_far, run.time_ms)
        block = "x".join(map(str, run.config.block)) if run.config else "—"
        fold = "x".join(map(str, run.config.fold)) if run.config else "—"
        table.add_row(str(run.number), block, fold, glups(run.predicted_lups_per_s) if run.config else "—",
                      str(run.predicted_place) if run.predicted_place else "—", _ms(run.time_ms),
                      glups(result.rate(run)) if run.time_ms else "—",
                      f"{best_so_far:.4f}" if math.isfinite(best_so_far) else "—")
    out.print(table)
    stops = {"budget": "the budget was spent", "patience": "the best time did not improve for the last runs",
             "space": "every configuration was measured"}
    out.print(f"stopped: {stops.get(result.stopped, result.stopped)}", highlight=False)
    best, first = result.best(), result.first_choice()
    if best is None:
        out.print("best found: none (every measured configuration failed)", highlight=False)
        return
    out.print(f"best found: run {best.number}, block {'x'.join(map(str, best.config.block))} fold "
              f"{'x'.join(map(str, best.config.fold))}: {best.time_ms:.4f} ms ({glups(result.rate(best))} Glup/s; "
              f"predicted place {best.predicted_place or '—'})", highlight=False)
    if first is not None and first.time_ms is not None:
        gap = (first.time_ms / best.time_ms - 1) * 100
        out.print(f"best predicted (run {first.number}): {first.time_ms:.4f} ms; the best found is {gap:.1f} % "
                  "faster" if gap > 0 else f"best predicted (run {first.number}): {first.time_ms:.4f} ms, the best "
                  "found", highlight=False)
    if result.known_best_ms is not None:
        reached = ", ".join(f"{f * 100:g} % at run {n}" if (n := result.runs_to(f)) else f"{f * 100:g} % not reached"
                            for f in (0.97, 0.99, 1.0))
        out.print(f"best in the cache: {result.known_best_ms:.4f} ms; the best found is "
                  f"{result.known_best_ms / best.time_ms * 100:.1f} % of it; {reached}", highlight=False)
    out.print(f"model: {result.model_seconds:.2f} s to predict the {result.space} configurations", highlight=False)
    for note in result.notes:
        out.print(f"note: {note}", highlight=False)
