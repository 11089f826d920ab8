"""Fitting a Gompertz capacity curve to measured (oversubscription, hit rate) points.

:func:`read_points_csv` reads points from a CSV file, :func:`validate_points` checks them,
:func:`fit_curve` fits the miss rate with ``scipy.optimize.curve_fit``, and
:func:`require_informative_fit` refuses a fit that explains nothing (R² not above 0).
"""

from __future__ import annotations

import csv
import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from warpspeed.errors import FitError
from warpspeed.memory.capacity.curves import (
    CURVE_NAMES,
    GOMPERTZ_PARAMETERS,
    FORMS,
    PARAMETER_BOUNDS,
    REFERENCE_FORMS,
    REFERENCE_PARAMETERS,
    GompertzCurve,
    Point,
    gompertz,
    gompertz_hit,
)

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


#: Largest oversubscription of a point: a volume a million times the cache. The exponent c x o of
#: the Gompertz function then stays at most 1e8 (c <= 1e2,
#: :data:`~warpspeed.memory.capacity.curves.PARAMETER_BOUNDS`), far from floating-point overflow.
MAX_OVERSUBSCRIPTION = 1e6


def validate_points(points: Sequence[Sequence[float]], origin: str = "points",
                    minimum: int = GOMPERTZ_PARAMETERS) -> tuple[Point, ...]:
    """Check (oversubscription, hit rate) pairs; raise FitError naming the first problem."""
    result = []
    for i, pair in enumerate(points):
        if len(pair) != 2:
            raise FitError(f"{origin}: point {i} has {len(pair)} values; expected "
                           "(oversubscription, hit_rate)")
        o, h = float(pair[0]), float(pair[1])
        _check_point(o, h, f"{origin}: point {i}")
        result.append((o, h))
    if len(result) < minimum:
        raise FitError(f"{origin}: {len(result)} point(s) are fewer than the {minimum} parameters "
                       "of the Gompertz curve; give at least that many")
    return tuple(result)


def _check_point(o: float, h: float, where: str) -> None:
    if not (math.isfinite(o) and math.isfinite(h)):
        raise FitError(f"{where}: NaN or infinite value (oversubscription={o}, hit_rate={h}); "
                       "only finite numbers are allowed")
    if o < 0:
        raise FitError(f"{where}: negative oversubscription {o}; it must be >= 0")
    if o > MAX_OVERSUBSCRIPTION:
        raise FitError(f"{where}: oversubscription is too large (got {o}); allowed: 0 to {MAX_OVERSUBSCRIPTION:g}")
    if not 0.0 <= h <= 1.0:
        raise FitError(f"{where}: hit rate {h} outside [0, 1]")


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
        _check_point(values[0], values[1], f"{str(p)!r} line {line}")
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
