"""``warpspeed rank``: rank a configuration space by predicted performance."""

from __future__ import annotations

import json
import math

import click
from rich.table import Table

from warpspeed.cli.common import dtype_option, kernel_options, parse_triple as _triple, registers_text
from warpspeed.cli.render import DelayedProgress, console as make_console, fmt, glups
from warpspeed.hardware.device import load_device
from warpspeed.kernel.catalog import require_kernel, resolve


def _executor_arg(jobs: int | None):
    if jobs is None:
        return "auto"
    if jobs <= 1:
        return None
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=jobs)


@click.command()
@kernel_options
@dtype_option
@click.option("--threads", type=int, default=None,
              help="Threads per block of the candidate space (default: 1024, or fewer when the kernel's "
                   "registers do not fit 1024).")
@click.option("--top", type=int, default=15, show_default=True, help="Rows to show (0: all).")
@click.option("--jobs", type=int, default=None, help="Worker processes (1: serial; default: automatic).")
@click.option("--json", "as_json", is_flag=True, help="Print the ranking as JSON.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), default=None, help="Write all rows to a CSV file.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), default=None,
              help="Write a bar chart (PNG) colored by block shape, hatched by limiter.")
def rank(kernel_name: str, domain: str | None, device_name: str, dtype: str | None, threads: int | None, top: int,
         jobs: int | None, as_json: bool, csv_path: str | None, plot_path: str | None) -> None:
    """Rank the paper's launch configurations (blocks x foldings) by predicted performance.

    Every folding is ranked with the kernel the catalog resolves the name to for it:
    pystencils workloads are generated, folded and register-counted for every folding (real
    code for each row); built-in kernels fold as a launch parameter.
    """
    from warpspeed.launch.space import MAX_BLOCK_Z, PAPER_FOLDINGS, block_sizes, default_threads
    from warpspeed.rank import rank_per_fold

    require_kernel(kernel_name)
    device = load_device(device_name)
    dom = _triple(domain, "--domain") if domain else None
    resolved = {f: resolve(kernel_name, dom, fold=f, device=device, dtype=dtype) for f in PAPER_FOLDINGS}
    kernels = {f: r.kernel for f, r in resolved.items()}

    def blocks(kernel):
        return block_sizes(threads or default_threads(kernel, device), MAX_BLOCK_Z)

    n_configs = sum(len(blocks(k)) for k in kernels.values())
    progress = DelayedProgress(n_configs, f"ranking {kernel_name}")
    executor = _executor_arg(jobs)
    try:
        ranking = rank_per_fold(kernels, device, blocks, executor=executor, progress=progress)
    finally:
        progress.close()
        if executor not in (None, "auto"):
            executor.shutdown()
    kernel = kernels[PAPER_FOLDINGS[0]]
    registers_note = _registers_note(resolved)
    rows = ranking.rows
    if csv_path:
        _write_rank_csv(ranking, csv_path)
    if plot_path:
        from warpspeed.plots import plot_ranking

        plot_ranking(ranking, plot_path)
    if as_json:
        click.echo(json.dumps({"kernel": ranking.kernel, "device": ranking.device,
                               "rows": [_json_row(r.as_dict()) for r in rows]}, indent=2))
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


def _registers_note(resolved) -> str:
    """Where the register counts come from, per folding when they differ."""
    first = next(iter(resolved.values()))
    if all(r.kernel.registers == first.kernel.registers and r.registers_source == first.registers_source
           for r in resolved.values()):
        return registers_text(_registers(first), first.registers_source)
    return "registers per thread by folding: " + ", ".join(
        f"{'x'.join(map(str, f))}: {_registers(r)} ({r.registers_source})" for f, r in resolved.items())


def _registers(resolved) -> int:
    """The kernel's registers per thread, or the count the occupancy calculation assumes."""
    from warpspeed.launch.geometry import DEFAULT_REGISTERS_PER_THREAD

    return resolved.kernel.registers if resolved.kernel.registers is not None else DEFAULT_REGISTERS_PER_THREAD


def _json_row(d: dict) -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, float) and not math.isfinite(v):
            out[k] = None
        elif isinstance(v, dict):
            out[k] = _json_row(v)
        else:
            out[k] = v
    return out


def _write_rank_csv(ranking, path: str) -> None:
    import csv

    fields = ["rank", "block_x", "block_y", "block_z", "fold_x", "fold_y", "fold_z", "lups_per_s", "limiter",
              "fp_lups_per_s", "l1_lups_per_s", "l2_lups_per_s", "dram_lups_per_s", "l1_cycles_per_lup",
              "l2_load_bytes_per_lup", "l2_store_bytes_per_lup", "dram_load_bytes_per_lup",
              "dram_store_bytes_per_lup", "blocks_per_sm", "occupancy_limiter", "registers", "error"]
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(fields)
        for i, r in enumerate(ranking.rows, 1):
            lim = r.limits
            w.writerow([i, *r.config.block, *r.config.fold, r.lups_per_s, r.limiter,
                        lim.get("fp", ""), lim.get("l1", ""), lim.get("l2", ""), lim.get("dram", ""),
                        r.l1_cycles_per_lup, r.l2_load_bytes_per_lup, r.l2_store_bytes_per_lup,
                        r.dram_load_bytes_per_lup, r.dram_store_bytes_per_lup, r.blocks_per_sm,
                        r.occupancy_limiter, r.registers, r.error or ""])
