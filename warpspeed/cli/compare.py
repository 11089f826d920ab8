"""``warpspeed compare``: the roofline, interval and pipeline rates of every configuration side by side."""

from __future__ import annotations

import math

import click

from warpspeed.cli.common import curves_option, dtype_option, kernel_options, models_help, rank_space
from warpspeed.cli.parse import InputError
from warpspeed.cli.paths import OutputFile
from warpspeed.cli.render import Column, DelayedProgress, console as make_console, fitted_table, glups, print_fitted
from warpspeed.files.jsonsafe import json_text
from warpspeed.models import TIME_MODELS

#: What each model is and how accurate it is (the models' own help; docs/accuracy.md), for --help.
MODELS_HELP = (f"Time models to compare, comma-separated, at least two of {', '.join(TIME_MODELS)} (default: all "
               f"of them). {models_help()}")


def _parse_models(text: str) -> tuple[str, ...]:
    from warpspeed.compare import require_models

    names = [m.strip() for m in text.split(",")]
    if text.strip() and not all(names):
        raise InputError(f"--models has an empty entry (got {text!r}); allowed: model names separated by commas, "
                         "such as roofline,interval")
    return require_models([m for m in names if m])


def _ratio(value: float, digits: int = 2) -> str:
    return "—" if math.isnan(value) else f"{value:.{digits}f}"


def _columns(models: tuple[str, ...]) -> tuple[Column, ...]:
    cols = [Column("#"), Column("block"), Column("fold")]
    for m in models:
        cols.append(Column(f"{m}\nGlup/s"))
    for m in models[1:]:
        cols.append(Column(f"{m}/\n{models[0]}", priority=1))
    for m in models:
        cols.append(Column(f"{m}:\nexplanation", justify="left", wraps=True, priority=2))
    return tuple(cols)


def _cells(index: int, row, models: tuple[str, ...]) -> list[str]:
    rates = [row.rate(m) for m in models]
    return ([str(index), "x".join(map(str, row.config.block)), "x".join(map(str, row.config.fold))]
            + [glups(r.lups_per_s) if r.ok else "error" for r in rates]
            + [_ratio(row.ratio(m, models[0])) for m in models[1:]]
            + [r.explanation if r.ok else "—" for r in rates])


def _csv(comparison, path: str) -> None:
    from warpspeed.files.rows import write_table_csv

    models = comparison.models
    columns = ["rank", "block", "fold"]
    columns += [f"{m}_lups_per_s" for m in models] + [f"{m}_explanation" for m in models]
    columns += [f"{m}_to_{models[0]}" for m in models[1:]] + ["error"]
    records = []
    for i, row in enumerate(comparison.rows, 1):
        rec = {"rank": i, "block": "x".join(map(str, row.config.block)), "fold": "x".join(map(str, row.config.fold)),
               "error": "; ".join(f"{r.model}: {r.error}" for r in row.rates if not r.ok)}
        for r in row.rates:
            rec[f"{r.model}_lups_per_s"] = r.lups_per_s
            rec[f"{r.model}_explanation"] = r.explanation
        for m in models[1:]:
            rec[f"{m}_to_{models[0]}"] = row.ratio(m, models[0])
        records.append(rec)
    write_table_csv(path, columns, records)


def _document(comparison, left_out: list[dict]) -> dict:
    return {
        "kernel": comparison.kernel, "device": comparison.device, "models": list(comparison.models),
        "not_compared": dict(comparison.dropped), "left_out_foldings": left_out,
        "summary": {
            "models": [{"model": s.model, "ratio_to_reference": [s.ratio_min, s.ratio_max],
                        "best": {"block": list(s.best.block), "fold": list(s.best.fold),
                                 "lups_per_s": s.best_lups_per_s, "explanation": s.best_explanation}}
                       for s in comparison.summaries],
            "reference": comparison.models[0],
            "spearman": [{"models": list(pair), "rho": rho} for pair, rho in comparison.spearman.items()],
        },
        "rows": [row.as_dict() for row in comparison.rows],
    }


@click.command()
@kernel_options
@dtype_option
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="Threads per block of the candidate space, a power of two (default: as for rank).")
@click.option("--models", "models_text", default=",".join(TIME_MODELS), show_default=True, help=MODELS_HELP)
@click.option("--top", type=click.IntRange(min=0), default=15, show_default=True,
              help="Rows to show in the table and the plot; --top 0 shows all.")
@click.option("--wide", is_flag=True, help="Show every column even if the table is wider than the terminal.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison (every row and the summary) as JSON.")
@click.option("--csv", "csv_path", type=OutputFile("CSV file"), default=None, help="Write all rows to a CSV file.")
@click.option("--plot", "plot_path", type=OutputFile("plot", plot=True), default=None,
              help="Write one figure of every model's rate per configuration, sorted by the first model "
                   "(format from the suffix: png, pdf, svg, ...).")
@curves_option
def compare(kernel_name: str, domain: tuple[int, ...] | None, device_name: str, dtype: str | None, threads: int | None,
            models_text: str, top: int, wide: bool, as_json: bool, csv_path: str | None, plot_path: str | None,
            curves_path: str | None) -> None:
    """Time models side by side: every configuration of rank's space under the overlap model, the
    roofline, the interval and the pipeline model, each with what dominates its time, the ratios to
    the first model, the Spearman rank correlation between the models and each model's best
    configuration.

    The rates are those of `warpspeed rank --model ...` (one prediction per configuration, scored by
    each model). Rows are sorted by the first model's rate (the default model's, when compared).
    """
    from warpspeed.compare import compare_configs
    from warpspeed.memory.capacity import load_curves

    models = _parse_models(models_text)
    models = tuple(sorted(models, key=TIME_MODELS.index))  # the default model (the reference) first
    curves = load_curves(path=curves_path) if curves_path else None
    space = rank_space(kernel_name, domain, device_name, dtype, threads)
    progress = DelayedProgress(len(space.configs()), f"comparing {kernel_name}")
    try:
        comparison = compare_configs(space.kernels, space.device, space.blocks, models, curves, progress)
    finally:
        progress.close()
    if csv_path:
        _csv(comparison, csv_path)
    if plot_path:
        from warpspeed.plots import plot_comparison

        plot_comparison(comparison, plot_path, top=top or None)
    if as_json:
        click.echo(json_text(_document(comparison, space.left_out_records())))
        return
    _print(comparison, tuple(space.kernels.values())[0].domain, top, wide, space.left_out_lines())


def _print(comparison, domain, top: int, wide: bool, left_out: list[str]) -> None:
    models = comparison.models
    rows = comparison.rows
    shown = rows if top == 0 else rows[:top]
    console = make_console()
    table, dropped = fitted_table(console, _columns(models), [_cells(i, r, models) for i, r in enumerate(shown, 1)],
                                  wide)
    caption = [f"Sorted by the {models[0]} rate, best first. Ratios: each model's rate / the {models[0]}'s.",
               f"Best {len(shown)} of {len(rows)} shown; --top 0 shows all." if len(shown) < len(rows)
               else f"All {len(rows)} rows shown."]
    if dropped:
        caption.append(f"Left out to fit the terminal: {', '.join(c.name for c in dropped)} (--wide shows them).")
    caption += left_out
    title = (f"{comparison.kernel} on {comparison.device}, domain {'x'.join(map(str, domain))}: "
             f"{len(rows)} configurations, {', '.join(models)}")
    print_fitted(console, table, title, caption)
    for s in comparison.summaries:
        ratio = (f"; {s.model}/{models[0]} {_ratio(s.ratio_min, 3)} to {_ratio(s.ratio_max, 3)}"
                 if s.model != models[0] else "")
        console.print(f"{s.model}: best block {s.best.block}, fold {s.best.fold}: {glups(s.best_lups_per_s)} Glup/s "
                      f"({s.best_explanation}){ratio}", highlight=False)
    for (a, b), rho in comparison.spearman.items():
        console.print(f"Spearman rank correlation {a} vs {b}: {'undefined' if math.isnan(rho) else f'{rho:.3f}'}",
                      highlight=False)
    for model, reason in comparison.dropped.items():
        console.print(f"{model}: not compared: {reason}", highlight=False, markup=False)
    if comparison.failed:
        console.print(f"[yellow]{len(comparison.failed)} configuration(s) not predicted by every model (listed last):")
        messages: dict[str, list[str]] = {}
        for row in comparison.failed:
            for r in row.rates:
                if not r.ok:
                    messages.setdefault(f"{r.model}: {r.error}", []).append(row.config.label)
        for message, labels in messages.items():
            console.print(f"  {', '.join(labels)}: {message}", highlight=False, markup=False)
