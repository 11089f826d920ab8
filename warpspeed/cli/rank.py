"""``warpspeed rank``: rank a configuration space by predicted performance."""

from __future__ import annotations

import json

import click
from rich.table import Table

from warpspeed.cli.common import kernel_options, parse_triple as _triple
from warpspeed.cli.paths import OutputFile
from warpspeed.files.jsonsafe import json_safe
from warpspeed.files.rows import RANK_COLUMNS, rank_row_record, write_table_csv
from warpspeed.cli.render import DelayedProgress, console as make_console, fmt, glups
from warpspeed.hardware.device import load_device
from warpspeed.kernel.builtin import BUILTIN_KERNELS, builtin_kernel
from warpspeed.kernel.catalog import require_workload
from warpspeed.launch.geometry import DEFAULT_REGISTERS_PER_THREAD


def _executor_arg(jobs: int | None):
    if jobs is None:
        return "auto"
    if jobs <= 1:
        return None
    from warpspeed.rank import process_pool

    return process_pool(jobs)


@click.command()
@kernel_options
@click.option("--threads", type=int, default=None,
              help="Threads per block of the candidate space (default: 1024, or the kernel's default).")
@click.option("--top", type=int, default=15, show_default=True, help="Rows to show (0: all).")
@click.option("--jobs", type=int, default=None, help="Worker processes (1: serial; default: automatic).")
@click.option("--json", "as_json", is_flag=True, help="Print the ranking as JSON.")
@click.option("--csv", "csv_path", type=OutputFile("CSV file"), default=None, help="Write all rows to a CSV file.")
@click.option("--plot", "plot_path", type=OutputFile("plot", plot=True), default=None,
              help="Write a bar chart colored by block shape, hatched by limiter "
                   "(format from the suffix: png, pdf, svg, ...).")
def rank(kernel_name: str, domain: str | None, device_name: str, threads: int | None, top: int, jobs: int | None,
         as_json: bool, csv_path: str | None, plot_path: str | None) -> None:
    """Rank the paper's launch configurations (blocks x foldings) by predicted performance.

    Built-in kernels fold as a launch parameter; pystencils workloads are generated, folded and
    register-counted by pystencils for every folding (real code for each row).
    """
    from warpspeed.launch.space import default_threads, paper_space
    from warpspeed.rank import rank as run_rank

    n_threads = threads or default_threads(kernel_name)
    space = paper_space(n_threads)
    device = load_device(device_name)
    dom = _triple(domain, "--domain") if domain else None
    progress = DelayedProgress(len(space), f"ranking {kernel_name}")
    executor = _executor_arg(jobs)
    try:
        if kernel_name in BUILTIN_KERNELS:
            kernel = builtin_kernel(kernel_name, dom)
            ranking = run_rank(kernel, device, space, executor=executor, progress=progress)
            registers_note = (f"registers: {kernel.registers} per thread (given)" if kernel.registers else
                              f"registers: {DEFAULT_REGISTERS_PER_THREAD} per thread assumed (no count for this kernel)")
        else:
            ps_rank = _pystencils_rank(kernel_name)
            result = ps_rank(kernel_name, device, domain=dom, threads=n_threads, executor=executor, progress=progress)
            ranking, kernel = result.ranking, next(iter(result.kernels.values())).kernel
            registers_note = "registers per folding: " + ", ".join(
                f"{'x'.join(map(str, f))}: {k.kernel.registers} ({k.registers_source})" for f, k in result.kernels.items())
    finally:
        progress.close()
        if executor not in (None, "auto"):
            executor.shutdown()
    rows = ranking.rows
    if csv_path:
        _write_rank_csv(ranking, csv_path)
    if plot_path:
        from warpspeed.plots import plot_ranking

        plot_ranking(ranking, plot_path)
    if as_json:
        click.echo(json.dumps({"kernel": ranking.kernel, "device": ranking.device,
                               "rows": [json_safe(r.as_dict()) for r in rows]}, indent=2))
        return
    table = Table(title=f"{ranking.kernel} on {ranking.device}, domain {tuple(kernel.domain)}: "
                        f"{len(rows)} configurations, best first")
    for col in ("#", "block", "fold", "Glup/s", "limiter", "FP", "L1", "L2", "DRAM", "L1 cyc/lup",
                "L2 B/lup", "DRAM B/lup", "blk/SM"):
        table.add_column(col, justify="right", no_wrap=True)
    shown = rows if top <= 0 else rows[:top]
    for i, r in enumerate(shown, 1):
        block_s, fold_s = "x".join(map(str, r.config.block)), "x".join(map(str, r.config.fold))
        if not r.ok:
            table.add_row(str(i), block_s, fold_s, "—", "error", *[""] * 7, str(r.error)[:40])
            continue
        lim = r.limits
        table.add_row(str(i), block_s, fold_s, glups(r.lups_per_s), r.limiter, glups(lim["fp"]),
                      glups(lim["l1"]), glups(lim["l2"]), glups(lim["dram"]), fmt(r.l1_cycles_per_lup),
                      fmt(r.l2_load_bytes_per_lup + r.l2_store_bytes_per_lup, 1),
                      fmt(r.dram_load_bytes_per_lup + r.dram_store_bytes_per_lup, 1), str(r.blocks_per_sm))
    table.caption = ("FP/L1/L2/DRAM: the limit each imposes (Glup/s); volumes are load + store bytes per "
                     "lattice update; --json or --csv for the split")
    console = make_console()
    console.print(table)
    if ranking.failed:
        console.print(f"[yellow]{len(ranking.failed)} configuration(s) could not be predicted (listed last).")
    best = ranking.best()
    console.print(f"best: block {best.config.block}, fold {best.config.fold}: {glups(best.lups_per_s)} Glup/s, "
                  f"limited by {best.limiter}; {registers_note}")


def _pystencils_rank(kernel_name: str):
    """The plugin's rank() for a pystencils workload name; clear errors for anything else."""
    require_workload(kernel_name)
    from pystencils_plugin.rank import rank as ps_rank

    return ps_rank


def _write_rank_csv(ranking, path: str) -> None:
    """All rows, best first, with their rank (columns: ``rank`` + :data:`warpspeed.files.rows.RANK_COLUMNS`)."""
    records = ({"rank": i, **rank_row_record(r)} for i, r in enumerate(ranking.rows, 1))
    write_table_csv(path, ("rank", *RANK_COLUMNS), records)
