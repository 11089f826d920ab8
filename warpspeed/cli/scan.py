"""``warpspeed scan-domain``: the layer-condition experiment over square planes."""

from __future__ import annotations

import math
import re

import click

from warpspeed.cli.common import DEFAULT_DEVICE, DEFAULT_KERNEL
from warpspeed.cli.parse import InputError, parse_triple as _triple
from warpspeed.cli.paths import OutputFile
from warpspeed.cli.render import Column, DelayedProgress, console, fitted_table, fmt, print_fitted
from warpspeed.files.jsonsafe import json_text
from warpspeed.hardware.device import load_device
from warpspeed.kernel.catalog import require_kernel, resolve_kernel
from warpspeed.kernel.limits import MAX_DOMAIN_CELLS


@click.command("scan-domain")
@click.option("--kernel", "kernel_name", default=DEFAULT_KERNEL, show_default=True,
              help="3D kernel to scan, as `warpspeed rank --kernel` takes it (built-in or generated).")
@click.option("--device", "device_name", default=DEFAULT_DEVICE, show_default=True,
              help="Built-in device name or path to a device TOML file.")
@click.option("--planes", default="64:1024:64", show_default=True,
              help="Plane edges: start:stop:step (inclusive stop) or a comma list.")
@click.option("--blocks", default=None,
              help="Blocks as x,y,z;x,y,z;... (default: the paper's six blocks of 1024 threads, 1 to 32 layers "
                   "deep; a kernel with many registers, such as the LBM kernels, needs smaller ones).")
@click.option("--json", "as_json", is_flag=True, help="Print the points as JSON.")
@click.option("--plot", "plot_path", type=OutputFile("plot", plot=True), default=None,
              help="Write a plot (format from the suffix: png, pdf, svg, ...).")
def scan_domain(kernel_name: str, device_name: str, planes: str, blocks: str | None, as_json: bool,
                plot_path: str | None) -> None:
    """Layer-condition scan (Ernst et al., JPDC 2023, 5.7): DRAM B/lup over square planes at constant cell count."""
    from warpspeed.studies.scan import SCAN_BLOCKS, scan_domain as run_scan

    edges = _parse_planes(planes)
    block_list = [_triple(b, "--blocks") for b in blocks.split(";")] if blocks is not None else list(SCAN_BLOCKS)
    if len(block_list) > MAX_SCAN_BLOCKS:
        raise InputError(f"--blocks lists too many blocks (got {len(block_list)}); at most {MAX_SCAN_BLOCKS}")
    require_kernel(kernel_name)
    device = load_device(device_name)
    progress = DelayedProgress(len(edges) * len(block_list), f"scanning {kernel_name}")
    try:
        points = run_scan(lambda d: resolve_kernel(kernel_name, d), device, edges, block_list,  # type: ignore[arg-type]
                          progress=progress)
    finally:
        progress.close()
    if plot_path:
        from warpspeed.plots import plot_scan

        plot_scan(points, plot_path, f"{kernel_name} on {device.name}: layer-condition scan")
    if as_json:
        click.echo(json_text([{"plane": p.plane, "domain": list(p.domain), "block": list(p.block),
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


#: Largest plane edge: a plane of MAX_PLANE_EDGE^2 cells and one layer is the largest domain
#: (:data:`warpspeed.kernel.limits.MAX_DOMAIN_CELLS`, 2^34 = (2^17)^2 cells).
MAX_PLANE_EDGE = math.isqrt(MAX_DOMAIN_CELLS)
#: Most planes and blocks of one scan: each pair is one prediction of a few tens of milliseconds
#: (the paper's scan, 64:1024:64, has 16 planes and 6 blocks).
MAX_SCAN_PLANES = 1024
MAX_SCAN_BLOCKS = 64
#: What --planes takes, for messages.
PLANES_ALLOWED = (f"start:stop:step or a comma list of plane edges, positive integers of at most {MAX_PLANE_EDGE}, "
                  f"at most {MAX_SCAN_PLANES} planes")


#: --planes: start:stop:step or a comma list of ASCII integers.
_PLANES = re.compile(r"\s*[0-9]+\s*(?:(?::\s*[0-9]+\s*){2}|(?:,\s*[0-9]+\s*)*)")


def _parse_planes(text: str) -> list[int]:
    shown = repr(text) if len(text) <= 100 else repr(text[:100]) + "..."
    if len(text) > 10 * MAX_SCAN_PLANES or not _PLANES.fullmatch(text):
        raise InputError(f"--planes is not a list of plane edges (got {shown}); allowed: {PLANES_ALLOWED}")
    if ":" in text:
        start, stop, step = (int(v) for v in text.split(":"))
        if step <= 0 or start <= 0 or stop < start:
            raise InputError(f"--planes is not an increasing range (got {shown}); allowed: {PLANES_ALLOWED}")
        count = (stop - start) // step + 1
        if count > MAX_SCAN_PLANES:
            raise InputError(f"--planes has too many planes (got {count}); allowed: {PLANES_ALLOWED}")
        values = list(range(start, stop + 1, step))
    else:
        values = [int(v) for v in text.split(",")]
    if any(not 0 < v <= MAX_PLANE_EDGE for v in values) or len(values) > MAX_SCAN_PLANES:
        raise InputError(f"--planes has an edge out of range (got {shown}); allowed: {PLANES_ALLOWED}")
    return values
