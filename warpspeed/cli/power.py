"""``warpspeed power-fit`` and ``warpspeed dvfs``: calibrating and using the power model."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from warpspeed.cli.common import (
    block_option,
    block_or_default,
    dtype_option,
    kernel_options,
    model_option,
    setup_kernel_and_device,
)
from warpspeed.cli.parse import FOLD, NAME
from warpspeed.cli.paths import InputTextFile, OutputFile
from warpspeed.cli.render import Column, console as make_console, fitted_table, print_fitted
from warpspeed.files.jsonsafe import json_text
from warpspeed.units import GIGA, MEGA

if TYPE_CHECKING:
    from warpspeed.power.dvfs import Optimum


@click.command("power-fit")
@click.argument("data", type=InputTextFile("runs file"))
@click.option("--device", "device_name", required=True, help="Device the measurements were taken on.")
@click.option("--family", type=NAME, required=True,
              help="Name of the family (letters, digits, '-', '_', '.'; not a path: --out is the path).")
@click.option("--out", "out_path", type=OutputFile("family file"), default=None,
              help="Where to write it (default: FAMILY.toml in the current directory).")
def power_fit(data: str, device_name: str, family: str, out_path: str | None) -> None:
    """Fit a power family to measured board power (CSV with its, clock_mhz, watts and optionally
    gflop_s per run of the gpu-roofline streaming kernel)."""
    from warpspeed.files.output import check_output_path
    from warpspeed.hardware.device import load_device
    from warpspeed.calibration.power import fit_family, read_runs, write_family

    out = out_path or str(check_output_path(f"{family}.toml", "family file"))
    device = load_device(device_name)
    result = fit_family(device, read_runs(data), data)
    path = write_family(result, out, family)
    d = result.family["dynamic"]
    click.echo(f"{path}: {len(result.runs)} runs, mean |error| {100 * result.mape:.2f} %, largest "
               f"{100 * result.max_error:.2f} %; {d['fp32_lane_j'] * 1e12:.2f} pJ per FP32 FMA lane, "
               f"{d['dram_sector_j'] * GIGA:.2f} nJ per DRAM sector")


DVFS_COLUMNS = (Column("MHz"), Column("Glup/s"), Column("W"), Column("Mlup/J"), Column("pJ/lup"), Column("note", justify="left"))


@click.command()
@kernel_options
@dtype_option
@block_option
@click.option("--fold", type=FOLD, default="1,1,1", show_default=True,
              help="Cells per thread x,y,z; at most 64 in all.")
@model_option
@click.option("--plot", "plot_path", type=OutputFile("plot", plot=True), default=None,
              help="Plot lups/s and lups/J against the clock (format from the suffix).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def dvfs(kernel_name: str, domain: tuple[int, ...] | None, device_name: str, dtype: str | None,
         block: tuple[int, ...] | None, fold: tuple[int, ...], model: str, plot_path: str | None, as_json: bool) -> None:
    """Sweep the SM clock for one configuration: power, lups/s and lups per joule, and the
    energy-optimal clock. Memory-bound kernels keep their rate at lower clocks while the core's
    power falls, so they save energy there."""
    from warpspeed.models import estimate_time
    from warpspeed.power.dvfs import sweep, sweep_figure
    from warpspeed.predict import Predictor

    from warpspeed.power import power_params

    resolved, device = setup_kernel_and_device(kernel_name, domain, device_name, fold, dtype, check=power_params)
    prediction = Predictor(resolved.kernel, device).predict(block_or_default(block, resolved, device), fold)
    result = sweep(prediction, estimate_time(model, prediction))
    opt = result.optimum
    if plot_path:
        from warpspeed.files.figure import save_figure

        label = f"{'x'.join(map(str, prediction.launch.launch.block))} fold {'x'.join(map(str, fold))}"
        save_figure(sweep_figure({label: result}, f"{prediction.kernel_name} on {device.name} ({model})"), plot_path)
    if as_json:
        click.echo(json_text({"kernel": prediction.kernel_name, "device": device.name, "model": model,
                               "optimum": opt.as_dict(), "points_v_min_rel": result.v_min_rel,
                               "points": [{"requested_mhz": asked, "clock_mhz": p.clock_mhz, "lups_per_s": p.lups_per_s,
                                           "watts": p.watts, "lups_per_joule": p.lups_per_joule, "throttled": p.throttled}
                                          for p, asked in zip(result.points, result.requested_mhz)]}, indent=2))
        return
    console = make_console()
    low, high = opt.clock_mhz
    rows = [[f"{p.clock_mhz:.0f}", f"{p.lups_per_s / GIGA:.2f}", f"{p.watts:.0f}", f"{p.lups_per_joule / MEGA:.1f}",
             f"{1e12 / p.lups_per_joule:.0f}",
             ("optimal range " if low <= p.clock_mhz <= high else "")
             + (f"throttled from {asked:.0f}" if p.throttled else "")]
            for p, asked in zip(result.points, result.requested_mhz)]
    table, _ = fitted_table(console, DVFS_COLUMNS, rows)
    print_fitted(console, table, f"{prediction.kernel_name} on {device.name}: clock sweep ({model} model, voltage floor "
                                 f"{result.v_min_rel:g})", optimum_lines(opt))


def optimum_lines(opt: "Optimum") -> list[str]:
    """The optimum as text: a range over the voltage floors, or one clock where the floor is known."""
    (f_lo, f_hi), (e_lo, e_hi), (v_lo, v_hi) = opt.clock_mhz, opt.lups_per_joule, opt.v_min_rel
    if opt.v_min_status == "assumed":
        return [f"most lattice updates per joule between {f_lo:.0f} and {f_hi:.0f} MHz, {e_lo / MEGA:.1f}-"
                f"{e_hi / MEGA:.1f} Mlup/J, over voltage floors {v_lo:.2f}-{v_hi:.2f} of the reference voltage "
                "(assumed: the public measurements do not determine the floor)"]
    where = f"at {f_lo:.0f} MHz" if f_lo == f_hi else f"from {f_lo:.0f} to {f_hi:.0f} MHz (equal)"
    return [f"most lattice updates per joule {where}: {e_hi / MEGA:.1f} Mlup/J (voltage floor {v_lo:.3g}, "
            f"{opt.v_min_status})"]


COMMANDS = (power_fit, dvfs)
