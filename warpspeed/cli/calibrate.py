"""``warpspeed calibrate``: a device file from the user's own GPU (microbenchmarks, then the fit).

Registered by :mod:`warpspeed.cli.main`. The benchmarks are
:func:`warpspeed.calibration.microbench.suite.run_suite` on a
:class:`~warpspeed.calibration.microbench.cupy_runner.CupyRunner`; the fit and the file are
:func:`warpspeed.calibration.calibrate.write_device_file` (no GPU needed: ``--fit-only``). This
module imports neither sympy nor islpy nor pystencils, so the command runs where only numpy,
scipy, click, rich and cupy are installed.
"""

from __future__ import annotations

from pathlib import Path

import click

from warpspeed.cli.parse import NAME
from warpspeed.cli.paths import OutputFile

#: The base device when none is given.
DEFAULT_BASE = "H100-SXM5-80GB"


def _benchmarks(text: str | None) -> tuple[str, ...] | None:
    from warpspeed.measured.raw_tables import TABLES
    from warpspeed.errors import WarpspeedError

    if text is None:
        return None
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in TABLES]
    if unknown or not names:
        raise WarpspeedError(f"--only: unknown benchmark(s) {', '.join(unknown) or '(none given)'}; "
                             f"allowed: a comma-separated list of {', '.join(TABLES)}")
    return names


@click.command()
@click.option("--out", "out_path", type=OutputFile("device file", create_parents=True), required=True,
              help="The device file to write (TOML); the raw tables go beside it, into OUT without .toml "
                   "+ '.calibration/'.")
@click.option("--base", default=DEFAULT_BASE, show_default=True,
              help="Device every number not measured is taken from, as --device takes it: a built-in name, "
                   "a unique prefix or an architecture family, or a device-file path (it holds a '/' or ends in "
                   ".toml); pick the closest part: same vendor and architecture, same memory type.")
@click.option("--name", "device_name", type=NAME, default=None,
              help="Name of the calibrated device (default: the file name of --out without .toml, with every "
                   "character a name may not hold made '-': 'my gpu.toml' -> 'my-gpu').")
@click.option("--budget", type=click.FloatRange(min=10.0, max=3600.0), default=150.0, show_default=True,
              help="Seconds the benchmarks may take in all; each sweep stops at its share and keeps what it "
                   "measured.")
@click.option("--quick", is_flag=True, help="Half the points of every sweep (about half the time).")
@click.option("--only", "only", default=None,
              help="Run only these benchmarks (comma-separated: gpu-stream, gpu-l2-cache, gpu-cache, gpu-latency, "
                   "gpu-small-kernels, gpu-strides, gpu-roofline); the others' tables are used where present.")
@click.option("--fit-only", is_flag=True,
              help="Measure nothing: fit the raw tables already in --tables (no GPU needed).")
@click.option("--tables", "tables_dir", type=click.Path(file_okay=False), default=None,
              help="Folder of the raw tables (default: beside --out, OUT without .toml + '.calibration').")
@click.option("--gpu", "gpu_index", type=click.IntRange(min=0), default=0, show_default=True,
              help="CUDA device index to measure.")
def calibrate(out_path: str, base: str, device_name: str | None, budget: float, quick: bool, only: str | None,
              fit_only: bool, tables_dir: str | None, gpu_index: int) -> None:
    """Measure this GPU with microbenchmarks and write a device file for it.

    Runs DRAM bandwidth by occupancy and read/write mix, L2 bandwidth by data set, L1 capacity,
    pointer-chase latency, launch overhead, first-level cycles by stride and block width, and board
    power and SM clock against arithmetic intensity (nvidia-smi), writing each raw table beside
    the device file as soon as it is measured. A run started again keeps the tables that verify
    and measures the rest. Every number of the device file names the table and rule it comes
    from, or the --base file it was taken from. Needs an NVIDIA GPU and cupy, except --fit-only.
    See docs/calibrate.md.
    """
    from warpspeed.calibration.calibrate import check_device_name, write_device_file
    from warpspeed.measured.raw_tables import table_folder
    from warpspeed.hardware.device import load_device

    out = Path(out_path)
    folder = Path(tables_dir) if tables_dir else table_folder(out)
    check_device_name(device_name)  # a bad --name or --base fails before any measurement or fit
    base_device = load_device(base, "--base")
    selected = _benchmarks(only)
    if not fit_only:
        from warpspeed.calibration.microbench.cupy_runner import CupyRunner
        from warpspeed.calibration.microbench.suite import run_suite

        runner = CupyRunner(gpu_index)
        info = runner.device_info()
        click.echo(f"calibrate: {info.name} ({info.sms} SMs, compute capability {info.compute_capability}) -> "
                   f"{folder}/, budget {budget:g} s{', quick sweeps' if quick else ''}", err=True)
        report = run_suite(runner, folder, base_device, budget, quick,
                           progress=lambda line: click.echo(f"calibrate: {line}", err=True), only=selected)
        failed = [o.name for o in report.outcomes if o.status == "failed"]
        if failed:
            click.echo(f"calibrate: failed: {', '.join(failed)} (reasons in {folder}/<benchmark>.failed); their "
                       f"figures come from {base_device.name}", err=True)
    result = write_device_file(folder, base, out, device_name, strict=fit_only)
    figures = result.figures
    click.echo(f"wrote {out} ({result.device.name}): {len(figures.figures)} numbers measured, the rest from "
               f"{base_device.name}")
    for fig in figures.figures:
        value = fig.value if isinstance(fig.value, int) else f"{fig.value:g}"
        click.echo(f"  {fig.key} = {value}  ({fig.table})")
    for missing in figures.missing:
        click.echo(f"  from {base_device.name}: {missing.what} ({missing.reason})")
    for note in figures.notes:
        click.echo(f"  note: {note}")


COMMANDS = (calibrate,)
