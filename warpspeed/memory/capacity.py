"""Capacity-miss curves: evaluate, load from ``fits/``, refit (paper 001, section 4.5).

Only part of the *redundant* volume of a cache level (requests for data the level has seen
before) hits; the rest are capacity (and conflict) misses. Paper 001 (4.5, eqs. (3)-(5)) models
the miss rate of the redundant volume as a function of the oversubscription factor
``o = allocated volume / cache capacity`` with a sigmoid fitted to measurements, the Gompertz
function

    m(o) = a * exp(-b * exp(-c * o)),    h(o) = 1 - m(o),

where ``a`` is the miss rate for ``o -> infinity``, ``m(0) = a * exp(-b)``, and ``b, c`` set
where and how steeply the rate rises. The function is a fit, "not grounded in any real world
mechanism" (4.5). Separate curves exist for

* ``l1_load``: redundant L1 loads (L2 -> L1 capacity misses),
* ``x_layer``, ``y_layer``, ``z_layer``: hits in the layer-overlap volumes of the previous-neighbour
  thread sets (4.4.2); paper 001 fits y and z only, ``x_layer`` uses the y-layer parameters,
* ``l2_load``: redundant L2 loads (DRAM capacity misses),
* ``l2_store``: redundant (partial) L2 stores whose lines are evicted before completion.

Parameters live in ``fits/<family>.toml``, one file per device family, each with a provenance
table and the points it was fitted on. :func:`fit_curve` refits a curve with
``scipy.optimize.curve_fit``; :func:`read_points_csv` reads measured points;
:func:`write_fit_toml` writes a family file.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field as dc_field
from importlib import resources
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from warpspeed.hardware.device import Device
from warpspeed.errors import FitError
from warpspeed.files.toml import read_toml

#: Every curve a family file must define, in file order.
CURVE_NAMES: tuple[str, ...] = ("l1_load", "x_layer", "y_layer", "z_layer", "l2_load", "l2_store")

#: The device families with a file in ``fits/``.
FAMILIES: tuple[str, ...] = (
    "nvidia-volta", "nvidia-ampere", "nvidia-hopper", "nvidia-ada", "amd-cdna", "amd-rdna",
)

#: The family whose parameters were fitted in paper 001 (A100 measurements); the default.
DEFAULT_FAMILY = "nvidia-ampere"

#: (vendor, architecture prefix) -> family. ``Device.architecture`` such as "cdna2" or
#: "ada-lovelace" is matched by prefix.
ARCHITECTURE_FAMILIES: tuple[tuple[str, str, str], ...] = (
    ("nvidia", "volta", "nvidia-volta"),
    ("nvidia", "ampere", "nvidia-ampere"),
    ("nvidia", "hopper", "nvidia-hopper"),
    ("nvidia", "ada", "nvidia-ada"),
    ("amd", "cdna", "amd-cdna"),
    ("amd", "rdna", "amd-rdna"),
)

#: Published Gompertz parameters (a, b, c) of paper 001, section 4.5 / figures 16-18, as given
#: in DESIGN.md ("Capacity misses"): fitted on A100 measurements. ``x_layer`` is not fitted in
#: the paper; it uses the y-layer parameters. Used as the initial guess of :func:`fit_curve`.
PUBLISHED_PARAMETERS: dict[str, tuple[float, float, float]] = {
    "l1_load": (0.66, 6.77, 1.45),
    "x_layer": (1.0, 37.1, 3.2),
    "y_layer": (1.0, 37.1, 3.2),
    "z_layer": (1.0, 37.1, 3.2),
    "l2_load": (0.2, 7.56, 0.67),
    "l2_store": (0.38, 3.79, 0.55),
}

#: Bounds of the fit parameters. ``a`` is a miss rate limit, so within [0, 1]; ``b`` and ``c``
#: are positive; the upper limits exclude degenerate step functions (b = 1e3 puts m(0) at
#: exp(-1000); c = 100 makes the rise narrower than 1 % of the capacity).
PARAMETER_BOUNDS: dict[str, tuple[float, float]] = {
    "a": (0.0, 1.0),
    "b": (1e-6, 1e3),
    "c": (1e-6, 1e2),
}

#: Number of free parameters of the Gompertz function: the minimum number of points to fit.
GOMPERTZ_PARAMETERS = 3

#: Column names of a points CSV file (case-insensitive, surrounding spaces ignored).
CSV_COLUMNS: tuple[str, str] = ("oversubscription", "hit_rate")

Point = tuple[float, float]  # (oversubscription, hit rate)


@dataclass(frozen=True)
class GompertzCurve:
    """Miss rate ``m(o) = a * exp(-b * exp(-c * o))`` of a redundant volume (dimensionless)."""

    a: float
    b: float
    c: float

    def __post_init__(self) -> None:
        for name in ("a", "b", "c"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise FitError(f"Gompertz parameter {name}={value!r} must be a finite number")
            lo, hi = PARAMETER_BOUNDS[name]
            if not lo <= value <= hi:
                raise FitError(f"Gompertz parameter {name}={value!r} is outside the allowed range [{lo}, {hi}]")

    @property
    def parameters(self) -> tuple[float, float, float]:
        return (self.a, self.b, self.c)

    def miss_rate(self, oversubscription: float | np.ndarray) -> float | np.ndarray:
        """Miss rate of the redundant volume at oversubscription factor ``o`` (>= 0)."""
        result = gompertz(np.asarray(oversubscription, dtype=float), self.a, self.b, self.c)
        return float(result) if np.ndim(result) == 0 else result

    def hit_rate(self, oversubscription: float | np.ndarray) -> float | np.ndarray:
        """Hit rate ``1 - m(o)`` of the redundant volume."""
        result = 1.0 - np.asarray(self.miss_rate(oversubscription))
        return float(result) if np.ndim(result) == 0 else result


def gompertz(o: np.ndarray, a: float, b: float, c: float) -> np.ndarray:
    """The Gompertz miss-rate function ``a * exp(-b * exp(-c * o))`` (numpy, elementwise)."""
    return a * np.exp(-b * np.exp(-c * o))


@dataclass(frozen=True)
class Provenance:
    """Where a set of curve parameters comes from."""

    source: str  # publication, measurement campaign or tool run
    date: str  # ISO date (or year) of the fit
    device: str  # the GPU the data were measured on
    method: str  # how the parameters were obtained
    note: str = ""

    def as_dict(self) -> dict[str, str]:
        data = {"source": self.source, "date": self.date, "device": self.device, "method": self.method}
        if self.note:
            data["note"] = self.note
        return data


@dataclass(frozen=True)
class CapacityCurves:
    """All curves of one device family, with provenance and the points they were fitted on.

    ``points`` maps a curve name to its (oversubscription, hit rate) points (empty when the
    parameters are published values whose data are not here); ``notes`` maps a curve name to
    its note in the file.
    """

    family: str
    l1_load: GompertzCurve
    x_layer: GompertzCurve
    y_layer: GompertzCurve
    z_layer: GompertzCurve
    l2_load: GompertzCurve
    l2_store: GompertzCurve
    provenance: Provenance
    points: Mapping[str, tuple[Point, ...]] = dc_field(default_factory=dict, hash=False)
    notes: Mapping[str, str] = dc_field(default_factory=dict, hash=False)
    source: str = ""  # the file the curves were loaded from

    def curve(self, name: str) -> GompertzCurve:
        if name not in CURVE_NAMES:
            raise FitError(f"unknown curve {name!r}; curves: {', '.join(CURVE_NAMES)}")
        return getattr(self, name)

    def layer(self, dim: str) -> GompertzCurve:
        """The layer-overlap curve of dimension ``dim`` (x, y or z)."""
        if dim not in ("x", "y", "z"):
            raise FitError(f"unknown layer dimension {dim!r}; allowed: x, y, z")
        return getattr(self, f"{dim}_layer")


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


# --------------------------------------------------------------------------------------------
# families and files


def family_for_device(device: Device) -> str:
    """The curve family of ``device`` from its vendor and architecture."""
    vendor = device.vendor.lower()
    arch = device.architecture.lower()
    for v, prefix, family in ARCHITECTURE_FAMILIES:
        if vendor == v and arch.startswith(prefix):
            return family
    known = ", ".join(f"{v}/{p}*" for v, p, _ in ARCHITECTURE_FAMILIES)
    raise FitError(
        f"no capacity-curve family for device {device.name!r} (vendor {device.vendor!r}, "
        f"architecture {device.architecture!r}); known vendor/architecture: {known}"
    )


def fits_directory() -> Path:
    """The directory holding ``<family>.toml``: the package ``warpspeed.fits`` when installed,
    else the repository's top-level ``fits/`` next to the ``warpspeed`` package."""
    try:
        root = resources.files("warpspeed.fits")
        path = Path(str(root))
        if path.is_dir():
            return path
    except (ModuleNotFoundError, TypeError):
        pass
    return Path(__file__).resolve().parent.parent / "fits"


def load_curves(family: str | None = None, path: str | Path | None = None) -> CapacityCurves:
    """Load a family's curves.

    Args:
        family: family name (see :data:`FAMILIES`); default :data:`DEFAULT_FAMILY`.
        path: a ``.toml`` file, or a directory holding ``<family>.toml``; default
            :func:`fits_directory`.
    """
    fam = DEFAULT_FAMILY if family is None else family
    p = fits_directory() if path is None else Path(path)
    if p.is_dir():
        p = p / f"{fam}.toml"
        if not p.is_file():
            raise FitError(f"no curve file for family {fam!r} in {str(p.parent)!r}; "
                           f"known families: {', '.join(FAMILIES)}")
    curves = _parse_curves(read_toml(p, "curve file", FitError), str(p))
    if family is not None and curves.family != family:
        raise FitError(f"curve file {str(p)!r} holds family {curves.family!r}, not {family!r}")
    return curves


def curves_for_device(device: Device, path: str | Path | None = None) -> CapacityCurves:
    """The curves of ``device``'s family (from ``path`` or the package's ``fits/``)."""
    return load_curves(family_for_device(device), path)


def _parse_curves(data: dict, origin: str) -> CapacityCurves:
    family = data.get("family")
    if not isinstance(family, str) or not family:
        raise FitError(f"{origin}: missing 'family' (a string such as {DEFAULT_FAMILY!r})")
    prov = data.get("provenance")
    if not isinstance(prov, dict):
        raise FitError(f"{origin}: missing [provenance] table (source, date, device, method)")
    missing = [k for k in ("source", "date", "device", "method") if not isinstance(prov.get(k), str)]
    if missing:
        raise FitError(f"{origin}: [provenance] lacks string key(s) {', '.join(missing)}")
    provenance = Provenance(source=prov["source"], date=prov["date"], device=prov["device"],
                            method=prov["method"], note=str(prov.get("note", "")))
    table = data.get("curves")
    if not isinstance(table, dict):
        raise FitError(f"{origin}: missing [curves.<name>] tables; curves: {', '.join(CURVE_NAMES)}")
    _check_curve_names(table, origin)
    curves: dict[str, GompertzCurve] = {}
    points: dict[str, tuple[Point, ...]] = {}
    notes: dict[str, str] = {}
    for name in CURVE_NAMES:
        entry = table[name]
        if not isinstance(entry, dict) or any(k not in entry for k in ("a", "b", "c")):
            raise FitError(f"{origin}: curve {name!r} needs numbers a, b, c")
        try:
            curves[name] = GompertzCurve(entry["a"], entry["b"], entry["c"])
        except FitError as exc:
            raise FitError(f"{origin}: curve {name!r}: {exc}") from None
        raw = entry.get("points", [])
        if not isinstance(raw, list) or any(not isinstance(p, list) or len(p) != 2 for p in raw):
            raise FitError(f"{origin}: curve {name!r}: points must be a list of "
                           "[oversubscription, hit_rate] pairs")
        pts = tuple((float(o), float(h)) for o, h in raw)
        if pts:
            validate_points(pts, f"{origin}: curve {name!r}", minimum=0)
        points[name] = pts
        notes[name] = str(entry.get("note", ""))
    return CapacityCurves(family=family, provenance=provenance, points=points, notes=notes,
                          source=origin, **curves)


def _check_curve_names(names: Mapping[str, object], origin: str) -> None:
    """Every curve of :data:`CURVE_NAMES` must be present, and nothing else."""
    missing = [n for n in CURVE_NAMES if n not in names]
    if missing:
        raise FitError(f"{origin}: missing curve(s) {', '.join(missing)}; a family defines all of "
                       f"{', '.join(CURVE_NAMES)}")
    unknown = sorted(set(names) - set(CURVE_NAMES))
    if unknown:
        raise FitError(f"{origin}: unknown curve(s) {', '.join(unknown)}; allowed: {', '.join(CURVE_NAMES)}")


def write_fit_toml(path: str | Path, family: str,
                   curves: Mapping[str, GompertzCurve | FitResult],
                   provenance: Provenance,
                   points: Mapping[str, Sequence[Point]] | None = None,
                   notes: Mapping[str, str] | None = None) -> Path:
    """Write a family file that :func:`load_curves` reads back.

    ``curves`` must hold every name of :data:`CURVE_NAMES` (refit one curve by loading the
    family, replacing that curve, and writing all). A :class:`FitResult` contributes its
    parameters, points, RMS error and R²; ``points`` (per curve) overrides or adds points.
    """
    import tomli_w  # a declared dependency; imported here so reading needs no writer

    _check_curve_names(curves, "write_fit_toml")
    table: dict[str, dict] = {}
    for name in CURVE_NAMES:
        value = curves[name]
        entry: dict[str, object] = {}
        pts: Sequence[Point] = ()
        curve = value.curve if isinstance(value, FitResult) else value
        if not isinstance(curve, GompertzCurve):
            raise FitError(f"write_fit_toml: curve {name!r} must be a GompertzCurve or FitResult")
        entry.update(a=float(curve.a), b=float(curve.b), c=float(curve.c))
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
    p.write_text(tomli_w.dumps(doc))
    return p


# --------------------------------------------------------------------------------------------
# data and fitting


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
    if not 0.0 <= h <= 1.0:
        raise FitError(f"{where}: hit rate {h} outside [0, 1]")


def read_points_csv(path: str | Path) -> tuple[Point, ...]:
    """Read (oversubscription, hit_rate) points from a CSV file with a header row.

    The columns are found by name (:data:`CSV_COLUMNS`, case-insensitive); other columns are
    ignored. Raises FitError for a missing file or column, an unparsable number (with its line
    number), NaN or infinite values, a hit rate outside [0, 1], a negative oversubscription, or
    fewer points than the curve's 3 parameters.
    """
    p = Path(path)
    if not p.is_file():
        raise FitError(f"points file {str(p)!r} does not exist")
    with p.open(newline="") as handle:
        reader = csv.reader(handle)
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
            line = reader.line_num
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


def fit_curve(points: Sequence[Sequence[float]], curve_name: str) -> FitResult:
    """Fit the Gompertz miss rate to measured (oversubscription, hit rate) points.

    Least squares on ``m = 1 - h`` with ``scipy.optimize.curve_fit`` (trust-region reflective,
    bounded by :data:`PARAMETER_BOUNDS`), starting from the published parameters of
    ``curve_name``.
    """
    from scipy.optimize import curve_fit

    if curve_name not in CURVE_NAMES:
        raise FitError(f"unknown curve {curve_name!r}; curves: {', '.join(CURVE_NAMES)}")
    pts = validate_points(points, f"fit of {curve_name!r}")
    o = np.array([p[0] for p in pts])
    h = np.array([p[1] for p in pts])
    lower = [PARAMETER_BOUNDS[k][0] for k in ("a", "b", "c")]
    upper = [PARAMETER_BOUNDS[k][1] for k in ("a", "b", "c")]
    try:
        params, _ = curve_fit(gompertz, o, 1.0 - h, p0=PUBLISHED_PARAMETERS[curve_name],
                              bounds=(lower, upper), method="trf", maxfev=20000)
    except (RuntimeError, ValueError) as exc:
        raise FitError(f"fit of {curve_name!r} did not converge on {len(pts)} points: {exc}") from None
    a, b, c = (float(min(max(v, lo), hi)) for v, lo, hi in zip(params, lower, upper))
    curve = GompertzCurve(a, b, c)
    residual = h - (1.0 - gompertz(o, a, b, c))
    ss_res = float(np.sum(residual ** 2))
    ss_tot = float(np.sum((h - h.mean()) ** 2))
    r_squared = 1.0 - ss_res / ss_tot if ss_tot > 0 else float("nan")
    return FitResult(curve_name=curve_name, curve=curve, rms_error=math.sqrt(ss_res / len(pts)),
                     r_squared=r_squared, points=pts)
