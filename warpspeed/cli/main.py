"""The ``warpspeed`` command group: it registers the commands, each in its own module.

Rendering lives in the command modules; the library never prints.
"""

from __future__ import annotations

import json
import sys

import click

from warpspeed.cli.render import Column, console, fitted_table, print_fitted
from warpspeed.errors import WarpspeedError
from warpspeed.hardware.device import Device, all_devices


class _Group(click.Group):
    """Turn WarpspeedError into a one-line message and exit code 2, never a traceback."""

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except WarpspeedError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)


@click.group(cls=_Group)
@click.version_option(package_name="warpspeed")
def main() -> None:
    """warpspeed: predict GPU kernel performance from address expressions, before compiling."""


#: Columns of the device table: priority 0 always, then L2 (1), L1 (2), architecture and FP16 (3)
#: while they fit the terminal.
DEVICE_COLUMNS = (
    Column("device", justify="left"), Column("arch", justify="left", priority=3), Column("SMs/\nCUs"),
    Column("GHz"), Column("L1\nKiB", priority=2), Column("L2 MiB\n(eff.)", priority=1),
    Column("L2\nGB/s", priority=1), Column("DRAM\nGB/s"), Column("FP64\nTFLOP/s"), Column("FP32\nTFLOP/s"),
    Column("FP16\nTFLOP/s", priority=3),
)


def _mib(nbytes: int) -> str:
    """MiB, whole where whole, else to one decimal."""
    mib = nbytes / 2**20
    return f"{mib:.0f}" if mib == round(mib) else f"{mib:.1f}"


def _tflops(device: Device, lanes: int) -> str:
    """Peak TFLOP/s: SMs x clock x results per clock and SM x 2 (an FMA is two flops)."""
    return f"{device.sms * device.clock_ghz * lanes * 2 / 1000:.1f}"


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the database as JSON.")
@click.option("--wide", is_flag=True, help="Show every column even if the table is wider than the terminal.")
def devices(as_json: bool, wide: bool) -> None:
    """The built-in device database."""
    devs = all_devices()
    if as_json:
        from dataclasses import asdict

        click.echo(json.dumps([asdict(d) for d in devs], indent=2))
        return
    rows = [[d.name, d.architecture, str(d.sms), f"{d.clock_ghz:.2f}", f"{d.l1_bytes / 1024:.0f}",
             f"{d.l2_bytes / 2**20:.0f} ({_mib(d.l2_effective_bytes)})", f"{d.l2_bandwidth_gb_s:.0f}",
             f"{d.dram_bandwidth_gb_s:.0f}", _tflops(d, d.fp64_lanes_per_sm), _tflops(d, d.fp32_lanes_per_sm),
             _tflops(d, d.fp16_lanes_per_sm)] for d in devs]
    out = console()
    table, dropped = fitted_table(out, DEVICE_COLUMNS, rows, wide)
    caption = ["Peak TFLOP/s = SMs x GHz x results per clock and SM x 2 (an FMA is two flops).",
               "L2 and DRAM GB/s and the effective L2 are what the hardware sustains at full occupancy "
               "(microbenchmark measurements, or a rule from the nearest measured device); predictions "
               "lower the DRAM bandwidth for launches with few bytes in flight."]
    if dropped:
        caption.append(f"Left out to fit the terminal: {', '.join(c.name for c in dropped)} (--wide shows them).")
    print_fitted(out, table, "Built-in devices; every number's source is in warpspeed/hardware/devices/*.toml",
                 caption)


def _register_commands() -> None:
    """Add the commands of the command modules to the group."""
    from warpspeed.cli.fit import fit
    from warpspeed.cli.predict import predict
    from warpspeed.cli.rank import rank
    from warpspeed.cli.scan import scan_domain
    from warpspeed.cli.study import COMMANDS as STUDY_COMMANDS
    from warpspeed.cli.validate import COMMANDS as VALIDATE_COMMANDS

    for command in (predict, rank, scan_domain, fit, *VALIDATE_COMMANDS, *STUDY_COMMANDS):
        main.add_command(command)


_register_commands()
