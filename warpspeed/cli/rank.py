"""``warpspeed rank``: rank a configuration space by predicted performance."""

from __future__ import annotations

from typing import Sequence

import click

from warpspeed.calibration import calibration
from warpspeed.cli.common import (
    clock_check,
    clock_option,
    curves_option,
    dtype_option,
    kernel_options,
    model_option,
    rank_space,
    registers_text,
)
from warpspeed.cli.parse import JOBS
from warpspeed.cli.paths import OutputFile
from warpspeed.cli.render import (Column, DelayedProgress, caption_lines, console as make_console, fitted_table, fmt, glups,
                                   print_fitted)
from warpspeed.files.jsonsafe import json_safe, json_text
from warpspeed.files.records import csv_record, json_record
from warpspeed.files.rows import write_table_csv
from warpspeed.models import DEFAULT_TIME_MODEL, MODELS, OBJECTIVES, OWN_LIMITS
from warpspeed.units import MEGA


def _executor_arg(jobs: int | None):
    if jobs is None:
        return "auto"
    if jobs <= 1:
        return None
    from warpspeed.rank import process_pool

    return process_pool(jobs)


#: Columns of the ranking table. Priority 0 is always shown; the limits (1), the volumes (2)
#: and the occupancy (3) are added while they fit the terminal (all of them with --wide).
RANK_COLUMNS = (
    Column("#"), Column("block"), Column("fold"), Column("Glup/s"), Column("limiter", justify="left"),
    Column("FP", priority=1), Column("L1", priority=1), Column("L2", priority=1), Column("DRAM", priority=1),
    Column("L1\ncyc/lup", priority=2), Column("L2\nB/lup", priority=2), Column("DRAM\nB/lup", priority=2),
    Column("blk/\nSM", priority=3),
)


@click.command()
@kernel_options
@dtype_option
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="Threads per block of the candidate space, a power of two (default: 1024, or fewer when "
                   "the kernel's registers do not fit 1024).")
@click.option("--top", type=click.IntRange(min=0), default=15, show_default=True,
              help="Rows to show in the table and the plot; --top 0 shows all.")
@click.option("--jobs", type=JOBS, default=None,
              help="Worker processes (1: serial; default: automatic).")
@click.option("--wide", is_flag=True,
              help="Show every column even if the table is wider than the terminal (by default, columns "
                   "that do not fit are left out; numbers are never cut).")
@click.option("--json", "as_json", is_flag=True, help="Print the ranking as JSON.")
@click.option("--csv", "csv_path", type=OutputFile("CSV file"), default=None, help="Write all rows to a CSV file.")
@click.option("--plot", "plot_path", type=OutputFile("plot", plot=True), default=None,
              help="Write a bar chart colored by block shape, hatched by limiter "
                   "(format from the suffix: png, pdf, svg, ...).")
@curves_option
@model_option
@click.option("--exact-waves", is_flag=True,
              help="Average the DRAM volumes over every full wave of the grid (exact, slower) instead of "
                   "the representative wave classes.")
@click.option("--objective", type=click.Choice(list(OBJECTIVES)), default=OBJECTIVES[0], show_default=True,
              help="Rank by lattice updates per second (time), per joule (energy) or by the "
                   "energy-delay product (edp).")
@clock_option
@click.option("--traces", "traces_path", type=OutputFile("trace file"), default=None,
              help="Also write the trace of every configuration to this JSON Lines file (one "
                   "warpspeed-trace document per line, in ranking order).")
def rank(kernel_name: str, domain: tuple[int, ...] | None, device_name: str, dtype: str | None, threads: int | None,
         top: int, jobs: int | None, wide: bool, as_json: bool, csv_path: str | None, plot_path: str | None,
         curves_path: str | None, model: str, exact_waves: bool, objective: str, clock_mhz: float | None,
         traces_path: str | None) -> None:
    """Rank launch configurations (blocks x foldings) by predicted performance.

    The candidate space is every power-of-two block of --threads threads (z <= 64) times the
    foldings none, 2 in y and 2 in z, restricted to what the kernel's domain can use: a 2-D
    kernel gets z = 1 blocks and foldings, no block is more than twice as wide as the domain,
    and a generated kernel's folding whose factor does not divide the domain's extent along its
    axis is left out (the output says which). Every folding is ranked with the kernel the
    catalog resolves the name to for it: pystencils workloads are generated, folded and
    register-counted for every folding (real code for each row); built-in kernels fold as a
    launch parameter.
    """
    from warpspeed.launch.space import PAPER_FOLDINGS
    from warpspeed.memory.capacity import load_curves
    from warpspeed.models import time_model
    from warpspeed.rank import Scoring, rank_per_fold
    from warpspeed.sass.stream import instructions_origin

    if clock_mhz is not None and objective == "time":
        raise click.UsageError("--clock-mhz sets the power model's clock: add --objective energy or edp")
    curves = load_curves(path=curves_path) if curves_path else None
    space = rank_space(kernel_name, domain, device_name, dtype, threads, check=clock_check(clock_mhz))
    device, resolved, kernels, blocks = space.device, space.resolved, space.kernels, space.blocks

    progress = DelayedProgress(len(space.configs()), f"ranking {kernel_name}")
    executor = _executor_arg(jobs)
    try:
        ranking = rank_per_fold(kernels, device, blocks, executor=executor, progress=progress, curves=curves,
                                scoring=Scoring(model, objective, clock_mhz, exact_waves, traces=traces_path is not None))
    finally:
        progress.close()
        if executor not in (None, "auto"):
            executor.shutdown()
    kernel = kernels[PAPER_FOLDINGS[0]]
    registers_note = _registers_note(resolved)
    mix_source, mix_detail = instructions_origin(kernel, device)
    mix_used = time_model(model).about.reads_trace or objective != "time"
    if mix_used:
        registers_note += f"\ninstruction mix ({model} model, {objective} objective): {mix_detail}"
    rows = ranking.rows
    if csv_path:
        _write_rank_csv(ranking, csv_path)
        click.echo(f"wrote {csv_path} ({len(rows)} rows)", err=True)
    if traces_path:
        _write_traces(ranking, resolved, traces_path)
        click.echo(f"wrote {traces_path} (one trace per configuration)", err=True)
    if plot_path:
        from warpspeed.plots import plot_ranking

        plot_ranking(ranking, plot_path, top=top or None)
        click.echo(f"wrote {plot_path}", err=True)
    if as_json:
        doc = {"kernel": ranking.kernel, "device": ranking.device, "model": model, "objective": objective}
        if curves is not None:
            doc["capacity_curves"] = curves.label
        doc["calibration"] = calibration(device, curves).as_dict()
        doc["registers"] = [{"fold": list(f), "registers": _registers(r), "source": r.registers_source,
                             "detail": r.registers_detail} for f, r in resolved.items()]
        doc["left_out_foldings"] = space.left_out_records()
        doc["instructions"] = {"source": mix_source, "detail": mix_detail, "used": mix_used}
        doc["rows"] = [json_safe(json_record(r)) for r in rows]
        click.echo(json_text(doc, indent=2))
        return
    _print_ranking(ranking, tuple(kernel.domain), top, wide, registers_note,
                   curves.label if curves is not None else None, calibration(device, curves).line(), model, objective,
                   space.left_out_lines())


def model_columns(model: str) -> tuple[Column, ...]:
    """The ranking table's columns for a time model: the roofline's own, or, for another model,
    its rate and what dominates its time, then the roofline's limits labelled as the roofline's
    (they are not the other model's)."""
    if model in OWN_LIMITS:
        return RANK_COLUMNS
    return (Column("#"), Column("block"), Column("fold"), Column(f"{model}\nGlup/s"),
            Column("dominated by", justify="left", wraps=True),
            *(Column(f"roofline\n{name}", priority=1) for name in ("FP", "L1", "L2", "DRAM")),
            *RANK_COLUMNS[9:])


#: The columns an energy or EDP ranking adds after the rate: board power and lattice updates per joule.
ENERGY_COLUMNS = (Column("W"), Column("Mlup/J"))
#: What each objective sorts by, as the table's title says it.
OBJECTIVE_ORDER = {"time": "Glup/s", "energy": "lattice updates per joule (Mlup/J)",
                   "edp": "energy-delay product (Glup/s x Mlup/J)"}


def objective_columns(columns: tuple[Column, ...], objective: str) -> tuple[Column, ...]:
    """``columns`` with, for an energy or EDP objective, the watts and lups per joule after the rate."""
    if objective == "time":
        return columns
    return (*columns[:4], *ENERGY_COLUMNS, *columns[4:])


def _rank_cells(index: int, r, model: str = DEFAULT_TIME_MODEL, objective: str = "time") -> list[str]:
    """One table row; an error row has dashes for its numbers (its message is printed below)."""
    block_s, fold_s = "x".join(map(str, r.config.block)), "x".join(map(str, r.config.fold))
    energy = [] if objective == "time" else ["—", "—"]
    if not r.ok:
        return [str(index), block_s, fold_s, "—", *energy, "error", *["—"] * 8]
    if energy:
        energy = [fmt(r.watts, 0), fmt(r.lups_per_joule / MEGA, 1)]
    lim = r.limits
    why = r.limiter if model in OWN_LIMITS else r.explanation
    return [str(index), block_s, fold_s, glups(r.lups_per_s), *energy, why, glups(lim["fp"]), glups(lim["l1"]),
            glups(lim["l2"]), glups(lim["dram"]), fmt(r.l1_cycles_per_lup),
            fmt(r.l2_load_bytes_per_lup + r.l2_store_bytes_per_lup, 1),
            fmt(r.dram_load_bytes_per_lup + r.dram_store_bytes_per_lup, 1), str(r.blocks_per_sm)]


def _print_ranking(ranking, domain: tuple[int, ...], top: int, wide: bool, registers_note: str,
                   curves_label: str | None = None, calibration_line: str = "", model: str = DEFAULT_TIME_MODEL,
                   objective: str = "time", left_out: Sequence[str] = ()) -> None:
    rows = ranking.rows
    shown = rows if top == 0 else rows[:top]
    console = make_console()
    columns = objective_columns(model_columns(model), objective)
    table, dropped = fitted_table(console, columns, [_rank_cells(i, r, model, objective) for i, r in enumerate(shown, 1)],
                                  wide)
    headers = {c.header for c in columns} - {c.header for c in dropped}
    if model in OWN_LIMITS:
        limits_note = MODELS[model].about.limits_note if "FP" in headers else ""
    else:
        limits_note = f"{model} Glup/s: the {model} model's rate; dominated by: the largest part of its time." + (
            " roofline FP, L1, L2, DRAM: the four-limiter roofline's limits, Glup/s, for comparison."
            if "roofline\nFP" in headers else "")
    caption = [
        "" if objective == "time" else
        "W: board power by the power model at the row's rate; Mlup/J: million lattice updates per joule.",
        limits_note,
        "Volumes: load + store bytes per lattice update (--json or --csv for the split)."
        if "L2\nB/lup" in headers else "",
        "blk/SM: resident blocks per SM." if "blk/\nSM" in headers else "",
        f"Left out to fit the terminal: {', '.join(c.name for c in dropped)} (--wide shows them)."
        if dropped else "",
        f"Best {len(shown)} of {len(rows)} shown; --top 0 shows all." if len(shown) < len(rows) else
        f"All {len(rows)} rows shown.",
        *left_out,
    ]
    title = (f"{ranking.kernel} on {ranking.device}, domain {'x'.join(map(str, domain))}: "
             f"{len(rows)} configurations, {model} model, objective {objective}: sorted by "
             f"{OBJECTIVE_ORDER.get(objective, objective)}, best first")
    print_fitted(console, table, title, caption)
    if curves_label is not None:
        console.print(f"capacity curves: {curves_label} (--curves)")
    if ranking.failed:
        console.print(f"[yellow]{len(ranking.failed)} configuration(s) could not be predicted (listed last):")
        messages: dict[str, list[str]] = {}
        for r in ranking.failed:
            messages.setdefault(str(r.error), []).append(r.config.label)
        for message, labels in messages.items():
            console.print(f"  {', '.join(labels)}: {message}", highlight=False)
    best = ranking.best()
    if objective != "time" and best.ok:
        console.print(f"best by {objective}: block {best.config.block}, fold {best.config.fold}: "
                      f"{fmt(best.lups_per_joule / MEGA, 1)} Mlup/J at {fmt(best.watts, 0)} W, "
                      f"{glups(best.lups_per_s)} Glup/s by the {model} model", highlight=False)
    else:
        console.print(f"best: block {best.config.block}, fold {best.config.fold}: {glups(best.lups_per_s)} Glup/s "
                      f"by the {model} model, dominated by {best.explanation}", highlight=False)
    console.print(caption_lines(registers_note.splitlines(), console.width), highlight=False, markup=False)
    if calibration_line:
        console.print(calibration_line, highlight=False)


def _registers_note(resolved) -> str:
    """Where the register counts come from, per folding when they differ, and how the first
    folding's was obtained."""
    first = next(iter(resolved.values()))
    note = _registers_counts(resolved)
    return f"{note}\n  counted by: {first.registers_detail}" if first.registers_detail else note


def _registers_counts(resolved) -> str:
    """The register counts and their sources, per folding when they differ."""
    first = next(iter(resolved.values()))
    if all(r.kernel.registers == first.kernel.registers and r.registers_source == first.registers_source
           for r in resolved.values()):
        return registers_text(_registers(first), first.registers_source)
    sources = {r.registers_source for r in resolved.values()}
    if len(sources) == 1:
        return f"registers per thread by folding ({first.registers_source}): " + ", ".join(
            f"{'x'.join(map(str, f))}: {_registers(r)}" for f, r in resolved.items())
    return "registers per thread by folding: " + ", ".join(
        f"{'x'.join(map(str, f))}: {_registers(r)} ({r.registers_source})" for f, r in resolved.items())


def _registers(resolved) -> int:
    """The kernel's registers per thread, or the count the occupancy calculation assumes."""
    from warpspeed.launch.geometry import DEFAULT_REGISTERS_PER_THREAD

    return resolved.kernel.registers if resolved.kernel.registers is not None else DEFAULT_REGISTERS_PER_THREAD


def _write_rank_csv(ranking, path: str) -> None:
    """All rows, best first, with their rank (columns: ``rank`` + :data:`warpspeed.rank.RANK_COLUMNS`)."""
    from warpspeed.rank import RANK_COLUMNS as CSV_COLUMNS

    records = ({"rank": i, **csv_record(r)} for i, r in enumerate(ranking.rows, 1))
    write_table_csv(path, ("rank", *CSV_COLUMNS), records)


def _write_traces(ranking, resolved, path: str) -> None:
    """The trace of every successfully predicted row (built from the prediction it was ranked on),
    in ranking order, as JSON Lines; ``resolved``: the kernel of each folding, for where its
    registers come from."""
    from warpspeed.files.atomic import atomic_output

    with atomic_output(path, "w") as handle:
        for row in ranking.rows:
            if row.trace is None:
                continue
            trace = row.trace.with_registers_source(resolved[tuple(row.config.fold)].registers_source)
            handle.write(json_text(trace.as_json(), indent=None) + "\n")
