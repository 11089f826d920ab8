"""``warpspeed scan-domain``: the layer-condition experiment over square planes."""

from __future__ import annotations

import json

import click

from warpspeed.cli.common import DEFAULT_DEVICE, DEFAULT_KERNEL, parse_triple as _triple
from warpspeed.cli.paths import OutputFile
from warpspeed.cli.render import Column, console, fitted_table, fmt, print_fitted
from warpspeed.hardware.device import load_device
from warpspeed.kernel.catalog import resolve_kernel


@click.command("scan-domain")
@click.option("--kernel", "kernel_name", default=DEFAULT_KERNEL, show_default=True,
              help="Built-in 3D kernel to scan.")
@click.option("--device", "device_name", default=DEFAULT_DEVICE, show_default=True)
@click.option("--planes", default="64:1024:64", show_default=True,
              help="Plane edges: start:stop:step (inclusive stop) or a comma list.")
@click.option("--blocks", default=None, help="Blocks as x,y,z;x,y,z;... (default: 1 to 32 layers deep).")
@click.option("--json", "as_json", is_flag=True)
@click.option("--plot", "plot_path", type=OutputFile("plot", plot=True), default=None,
              help="Write a plot (format from the suffix: png, pdf, svg, ...).")
def scan_domain(kernel_name: str, device_name: str, planes: str, blocks: str | None, as_json: bool,
                plot_path: str | None) -> None:
    """Layer-condition scan (Ernst et al., JPDC 2023, 5.7): DRAM B/lup over square planes at constant cell count."""
    from warpspeed.studies.scan import SCAN_BLOCKS, scan_domain as run_scan

    device = load_device(device_name)
    edges = _parse_planes(planes)
    block_list = [_triple(b, "--blocks") for b in blocks.split(";")] if blocks else list(SCAN_BLOCKS)
    points = run_scan(lambda d: resolve_kernel(kernel_name, d), device, edges, block_list)  # type: ignore[arg-type]
    if plot_path:
        from warpspeed.plots import plot_scan

        plot_scan(points, plot_path, f"{kernel_name} on {device.name}: layer-condition scan")
    if as_json:
        click.echo(json.dumps([{"plane": p.plane, "domain": list(p.domain), "block": list(p.block),
                                "dram_bytes_per_lup": p.dram_bytes_per_lup,
                                "dram_compulsory_bytes_per_lup": p.dram_compulsory_bytes_per_lup,
                                "z_oversubscription": p.z_oversubscription} for p in points], indent=2))
        return
    blocks_seen = list(dict.fromkeys(p.block for p in points))
    columns = [Column("plane n"), Column("domain"), *(Column("x".join(map(str, b))) for b in blocks_seen)]
    rows = []
    for n in edges:
        row = [p for p in points if p.plane == n]
        rows.append([str(n), "x".join(map(str, row[0].domain)), *[fmt(p.dram_bytes_per_lup, 1) for p in row]])
    out = console()
    table, _ = fitted_table(out, columns, rows)
    print_fitted(out, table, f"predicted DRAM volume (load + store), B/lup, {kernel_name} on {device.name}",
                 ["Columns: thread blocks (x, y, z)."])


def _parse_planes(text: str) -> list[int]:
    try:
        if ":" in text:
            start, stop, step = (int(v) for v in text.split(":"))
            if step <= 0 or start <= 0 or stop < start:
                raise ValueError
            return list(range(start, stop + 1, step))
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise click.BadParameter(f"--planes must be start:stop:step with positive step or a comma list, got {text!r}") from None
    if any(v <= 0 for v in values):
        raise click.BadParameter("--planes values must be positive")
    return values
