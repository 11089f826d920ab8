"""``warpspeed fit``: refit one capacity curve from measured points."""

from __future__ import annotations

from pathlib import Path

import click

from warpspeed.cli.parse import NAME
from warpspeed.cli.paths import InputTextFile, OutputFile
from warpspeed.errors import WarpspeedError


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
    import datetime

    from warpspeed.memory.capacity import (
        CURVE_NAMES,
        Provenance,
        base_reference,
        fit_curve,
        load_curves,
        read_points_csv,
        require_informative_fit,
        write_fit_toml,
    )

    if curve not in CURVE_NAMES:
        raise WarpspeedError(f"unknown curve {curve!r}; curves: {', '.join(CURVE_NAMES)}")
    base = load_curves(family)
    points = read_points_csv(data)
    result = require_informative_fit(fit_curve(points, curve))
    old = base.curve(curve)
    curves = {name: base.curve(name) for name in CURVE_NAMES}
    curves[curve] = result  # type: ignore[assignment]
    provenance = Provenance(
        source=f"{curve} refit from {Path(data).name} ({len(points)} points); other curves from "
               f"{base_reference(base, out_path)}",
        date=datetime.date.today().isoformat(), device=device_label or "unspecified",
        method="scipy.optimize.curve_fit of the Gompertz miss rate m(o) = a exp(-b exp(-c o)) (warpspeed fit)",
    )
    write_fit_toml(out_path, base.family, curves, provenance,
                   points={n: base.points.get(n, ()) for n in CURVE_NAMES if n != curve},
                   notes={n: base.notes.get(n, "") for n in CURVE_NAMES if n != curve})
    c = result.curve
    click.echo(f"{curve}: a={c.a:.4g} b={c.b:.4g} c={c.c:.4g} (was a={old.a:.4g} b={old.b:.4g} c={old.c:.4g}); "
               f"RMS error {result.rms_error:.4f}, R² {result.r_squared:.4f} on {len(points)} points -> {out_path}")
