"""Fitting a Gompertz capacity curve to measured (oversubscription, hit rate) points.

:func:`read_points_csv` reads points from a CSV file (checked by
:func:`~warpspeed.memory.capacity.curves.validate_points`), :func:`fit_curve` fits the miss rate
with ``scipy.optimize.curve_fit``, :func:`require_informative_fit` refuses a fit that explains
nothing (R² not above 0), :func:`write_fit_toml` writes a family file that
:func:`~warpspeed.memory.capacity.files.load_curves` reads back, and :func:`refit_curve` is
``warpspeed fit``: one curve of a family refitted, the others kept.
"""

from __future__ import annotations

import csv
import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from warpspeed.errors import FitError
from warpspeed.files.atomic import write_text_atomic
from warpspeed.memory.capacity.curves import (
    CURVE_NAMES,
    GOMPERTZ_PARAMETERS,
    FORMS,
    PARAMETER_BOUNDS,
    REFERENCE_FORMS,
    REFERENCE_PARAMETERS,
    GompertzCurve,
    Point,
    Provenance,
    gompertz,
    check_point,
    gompertz_hit,
    validate_points,
)
from warpspeed.memory.capacity.files import base_reference, check_curve_names, load_curves

#: Column names of a points CSV file (case-insensitive, surrounding spaces ignored).
CSV_COLUMNS: tuple[str, str] = ("oversubscription", "hit_rate")

#: Lines of a points CSV file whose first non-blank character is this are comments.
CSV_COMMENT = "#"


@dataclass(frozen=True)
class FitResult:
    """A fitted curve and its quality on the fitted points.

    ``rms_error`` is the root mean square of the hit-rate residuals (dimensionless);
    ``r_squared`` is ``1 - SS_res / SS_tot`` (NaN when all hit rates are equal).
    """

    curve_name: str
    curve: GompertzCurve
    rms_error: float
    r_squared: float
    points: tuple[Point, ...]


def read_points_csv(path: str | Path) -> tuple[Point, ...]:
    """Read (oversubscription, hit_rate) points from a CSV file with a header row.

    Lines starting with ``#`` (before or after the header) are comments. The columns are found
    by name (:data:`CSV_COLUMNS`, case-insensitive); other columns are ignored. Raises FitError
    for a missing file or column, an unparsable number (with its line number), NaN or infinite
    values, a hit rate outside [0, 1], a negative oversubscription, or fewer points than the
    curve's 3 parameters.
    """
    p = Path(path)
    if not p.is_file():
        raise FitError(f"points file {str(p)!r} does not exist")
    with p.open(newline="") as handle:
        lines = ((number, line) for number, line in enumerate(handle, 1)
                 if not line.lstrip().startswith(CSV_COMMENT))
        numbered = list(lines)
    reader = csv.reader(line for _, line in numbered)
    try:
        header = next(reader)
    except StopIteration:
        raise FitError(f"{str(p)!r}: empty file; expected a header with columns "
                       f"{', '.join(CSV_COLUMNS)}") from None
    names = [h.strip().lower() for h in header]
    missing = [c for c in CSV_COLUMNS if c not in names]
    if missing:
        raise FitError(f"{str(p)!r}: missing column(s) {', '.join(missing)}; found "
                       f"{', '.join(h.strip() for h in header) or '(none)'}; required: "
                       f"{', '.join(CSV_COLUMNS)}")
    cols = [names.index(c) for c in CSV_COLUMNS]
    points: list[Point] = []
    for row in reader:
        line = numbered[reader.line_num - 1][0]
        if not row or all(not cell.strip() for cell in row):
            continue
        values = []
        for col, cname in zip(cols, CSV_COLUMNS):
            text = row[col].strip() if col < len(row) else ""
            try:
                values.append(float(text))
            except ValueError:
                raise FitError(f"{str(p)!r} line {line}: cannot parse {cname} {text!r} as a "
                               "number") from None
        check_point(values[0], values[1], f"{str(p)!r} line {line}")
        points.append((values[0], values[1]))
    return validate_points(points, str(p))


def fit_curve(points: Sequence[Sequence[float]], curve_name: str, form: str | None = None) -> FitResult:
    """Fit a Gompertz curve to measured (oversubscription, hit rate) points.

    ``form`` (default: the reference curve's, :data:`~warpspeed.memory.capacity.curves.REFERENCE_FORMS`):
    least squares on ``m = 1 - h`` with the miss form, on ``h`` with the hit form, with
    ``scipy.optimize.curve_fit`` (trust-region reflective, bounded by
    :data:`~warpspeed.memory.capacity.curves.PARAMETER_BOUNDS`), starting from the reference
    parameters of ``curve_name``.
    """
    from scipy.optimize import OptimizeWarning, curve_fit

    if curve_name not in CURVE_NAMES:
        raise FitError(f"unknown curve {curve_name!r}; curves: {', '.join(CURVE_NAMES)}")
    shape = REFERENCE_FORMS[curve_name] if form is None else form
    if shape not in FORMS:
        raise FitError(f"Gompertz form {shape!r} is unknown; allowed: {', '.join(FORMS)}")
    pts = validate_points(points, f"fit of {curve_name!r}")
    o = np.array([p[0] for p in pts])
    h = np.array([p[1] for p in pts])
    lower = [PARAMETER_BOUNDS[k][0] for k in ("a", "b", "c")]
    upper = [PARAMETER_BOUNDS[k][1] for k in ("a", "b", "c")]
    start = REFERENCE_PARAMETERS[curve_name] if shape == REFERENCE_FORMS[curve_name] else None
    function, target = (gompertz_hit, h) if shape == "hit" else (gompertz, 1.0 - h)
    try:
        with warnings.catch_warnings():  # undetermined fits are refused by require_informative_fit
            warnings.simplefilter("ignore", OptimizeWarning)
            params, _ = curve_fit(function, o, target, p0=start,
                                  bounds=(lower, upper), method="trf", maxfev=20000)
    except (RuntimeError, ValueError) as exc:
        raise FitError(f"fit of {curve_name!r} did not converge on {len(pts)} points: {exc}") from None
    a, b, c = (float(min(max(v, lo), hi)) for v, lo, hi in zip(params, lower, upper))
    curve = GompertzCurve(a, b, c, shape)
    residual = h - curve.hit_rate(o)
    ss_res = float(np.sum(residual ** 2))
    ss_tot = float(np.sum((h - h.mean()) ** 2))
    r_squared = 1.0 - ss_res / ss_tot if ss_tot > 0 else float("nan")
    return FitResult(curve_name=curve_name, curve=curve, rms_error=math.sqrt(ss_res / len(pts)),
                     r_squared=r_squared, points=pts)


def require_informative_fit(result: FitResult) -> FitResult:
    """``result`` if its R² is above 0; otherwise FitError saying why the points determine no
    curve (all hit rates equal, or a fit no better than their mean)."""
    if math.isnan(result.r_squared):
        rates = sorted({h for _, h in result.points})
        raise FitError(f"fit of {result.curve_name!r} is undetermined: all {len(result.points)} hit rates "
                       f"are equal ({rates[0]:g}), so R² is undefined; measure points over a range of "
                       "oversubscriptions where the hit rate changes")
    if not result.r_squared > 0.0:
        raise FitError(f"fit of {result.curve_name!r} explains nothing: R² = {result.r_squared:.3g} "
                       f"on {len(result.points)} points (no better than their mean hit rate); "
                       "check the points (oversubscription, hit_rate columns)")
    return result


def write_fit_toml(path: str | Path, family: str,
                   curves: Mapping[str, GompertzCurve | FitResult],
                   provenance: Provenance,
                   points: Mapping[str, Sequence[Point]] | None = None,
                   notes: Mapping[str, str] | None = None) -> Path:
    """Write a family file that :func:`load_curves` reads back.

    ``curves`` must hold every name of :data:`CURVE_NAMES` (refit one curve by loading the
    family, replacing that curve, and writing all). A :class:`FitResult` contributes its
    parameters, points, RMS error and R²; ``points`` (per curve) overrides or adds points.
    Missing parent directories are created.
    """
    import tomli_w  # a declared dependency; imported here so reading needs no writer

    check_curve_names(curves, "write_fit_toml")
    table: dict[str, dict] = {}
    for name in CURVE_NAMES:
        value = curves[name]
        entry: dict[str, object] = {}
        pts: Sequence[Point] = ()
        curve = value.curve if isinstance(value, FitResult) else value
        if not isinstance(curve, GompertzCurve):
            raise FitError(f"write_fit_toml: curve {name!r} must be a GompertzCurve or FitResult")
        entry.update(a=float(curve.a), b=float(curve.b), c=float(curve.c))
        if curve.form != "miss":
            entry["form"] = curve.form
        if isinstance(value, FitResult):
            pts = value.points
            entry["rms_error"] = float(value.rms_error)
            if math.isfinite(value.r_squared):
                entry["r_squared"] = float(value.r_squared)
        if points is not None and name in points:
            pts = tuple(points[name])
        if pts:
            validate_points(pts, f"write_fit_toml: curve {name!r}", minimum=0)
        if notes is not None and notes.get(name):
            entry["note"] = notes[name]
        entry["points"] = [[float(o), float(h)] for o, h in pts]
        table[name] = entry
    doc = {"family": family, "provenance": provenance.as_dict(), "curves": table}
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(p, tomli_w.dumps(doc))
    except OSError as exc:
        raise FitError(f"cannot write the curve file {str(p)!r}: {exc.strerror or exc}") from None
    return p


@dataclass(frozen=True)
class Refit:
    """What :func:`refit_curve` did: the curve's fit, its previous parameters, the points fitted
    and the file written."""

    curve: str
    result: FitResult
    previous: GompertzCurve
    points: int
    path: Path


def refit_curve(data: str | Path, curve: str, out_path: str | Path, family: str | None = None,
                device_label: str = "", date: str | None = None) -> Refit:
    """Refit ``curve`` of ``family`` (default: the default family) to the points of the CSV file
    ``data`` and write the whole family to ``out_path`` (the other curves copied, with their
    points and notes). ``device_label``: the GPU the data were measured on (provenance);
    ``date``: ISO date of the provenance (default: today). Refuses a fit that explains nothing."""
    if curve not in CURVE_NAMES:
        raise FitError(f"unknown curve {curve!r}; curves: {', '.join(CURVE_NAMES)}")
    base = load_curves(family)
    points = read_points_csv(data)
    result = require_informative_fit(fit_curve(points, curve))
    curves: dict[str, GompertzCurve | FitResult] = {name: base.curve(name) for name in CURVE_NAMES}
    curves[curve] = result
    if date is None:
        import datetime

        date = datetime.date.today().isoformat()
    provenance = Provenance(
        source=f"{curve} refit from {Path(data).name} ({len(points)} points); other curves from "
               f"{base_reference(base, out_path)}",
        date=date, device=device_label or "unspecified",
        method="scipy.optimize.curve_fit of the Gompertz miss rate m(o) = a exp(-b exp(-c o)) (warpspeed fit)",
    )
    path = write_fit_toml(out_path, base.family, curves, provenance,
                          points={n: base.points.get(n, ()) for n in CURVE_NAMES if n != curve},
                          notes={n: base.notes.get(n, "") for n in CURVE_NAMES if n != curve})
    return Refit(curve, result, base.curve(curve), len(points), path)
