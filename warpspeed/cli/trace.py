"""``warpspeed trace``: the per-kernel trace of one launch configuration as JSON."""

from __future__ import annotations

import click

from warpspeed.cli.common import block_option, block_or_default, dtype_option, kernel_options, setup_kernel_and_device
from warpspeed.cli.parse import FOLD
from warpspeed.cli.paths import OutputFile
from warpspeed.files.atomic import write_text_atomic
from warpspeed.files.jsonsafe import json_text


@click.command()
@kernel_options
@dtype_option
@block_option
@click.option("--fold", type=FOLD, default="1,1,1", show_default=True,
              help="Cells per thread (thread folding) x,y,z; at most 64 in all.")
@click.option("--out", "out_path", type=OutputFile("trace file"), default=None,
              help="Write the trace to this JSON file (default: print it).")
def trace(kernel_name: str, domain: tuple[int, ...] | None, device_name: str, dtype: str | None,
          block: tuple[int, ...] | None, fold: tuple[int, ...], out_path: str | None) -> None:
    """Write the per-kernel trace (format warpspeed-trace, version 1): launch geometry, the
    representative warp's instructions (SASS when nvcc is installed, else derived from the
    kernel description), memory activity per level and field, the roofline result. The trace
    is checked against the JSON Schema shipped with warpspeed before it is written."""
    from warpspeed.predict import Predictor
    from warpspeed.trace.build import build_trace
    from warpspeed.trace.schema import validate_trace

    resolved, device = setup_kernel_and_device(kernel_name, domain, device_name, fold, dtype)
    prediction = Predictor(resolved.kernel, device).predict(block_or_default(block, resolved, device), fold)
    document = build_trace(prediction, registers_source=resolved.registers_source).as_json()
    validate_trace(document)
    text = json_text(document, indent=1)
    if out_path is None:
        click.echo(text)
        return
    write_text_atomic(out_path, text + "\n")
    click.echo(f"trace of {document['kernel']['name']} on {document['device']['name']} "
               f"({document['instructions']['source']} instructions) written to {out_path}")
