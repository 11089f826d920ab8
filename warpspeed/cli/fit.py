"""``warpspeed fit``: refit one capacity curve from measured points
(:func:`warpspeed.calibration.capacity.refit_curve`)."""

from __future__ import annotations

import click

from warpspeed.cli.parse import NAME
from warpspeed.cli.paths import InputTextFile, OutputFile


@click.command()
@click.argument("data", type=InputTextFile("data file"))
@click.option("--curve", required=True, help="Curve to refit: l1_load, x_layer, y_layer, z_layer, l2_load, l2_store.")
@click.option("--out", "out_path", required=True, type=OutputFile("family file", create_parents=True),
              help="Family file to write (all curves; the others are copied from --family).")
@click.option("--family", type=NAME, default=None, help="Family whose other curves are kept (default: nvidia-ampere).")
@click.option("--device", "device_label", default="", help="GPU the data were measured on (provenance).")
def fit(data: str, curve: str, out_path: str, family: str | None, device_label: str) -> None:
    """Refit one capacity curve from a CSV of (oversubscription, hit_rate) points.

    DATA has a header row naming the columns oversubscription and hit_rate; lines starting with
    # are comments. Refuses to write the file when the points determine no curve (R² undefined
    or not above 0).
    """
    from warpspeed.calibration.capacity import refit_curve

    done = refit_curve(data, curve, out_path, family, device_label)
    c, old = done.result.curve, done.previous
    click.echo(f"{curve}: a={c.a:.4g} b={c.b:.4g} c={c.c:.4g} (was a={old.a:.4g} b={old.b:.4g} c={old.c:.4g}); "
               f"RMS error {done.result.rms_error:.4f}, R² {done.result.r_squared:.4f} on {done.points} points -> "
               f"{out_path}")
