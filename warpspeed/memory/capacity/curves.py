"""Gompertz capacity-miss curves and the set of curves of one device family.

Only part of the *redundant* volume of a cache level (requests for data the level has seen
before) hits; the rest are capacity (and conflict) misses. Ernst et al. 2023 (section 4.5,
eqs. (3)-(5)) model the miss rate of the redundant volume as a function of the oversubscription
factor ``o = allocated volume / cache capacity`` (each curve at its own definition of ``o``,
:mod:`warpspeed.memory.capacity.terms`) with a sigmoid fitted to measurements, the Gompertz
function

    m(o) = a * exp(-b * exp(-c * o)),    h(o) = 1 - m(o),

where ``a`` is the miss rate for ``o -> infinity``, ``m(0) = a * exp(-b)``, and ``b, c`` set
where and how steeply the rate rises. The function is a fit, "not grounded in any real world
mechanism" (section 4.5). Some curves of the article's reference implementation are Gompertz
functions of the *hit* rate instead (form ``"hit"``),

    h(o) = a * exp(-b * exp(c * o)),     m(o) = 1 - h(o),

which start at ``h(0) = a * exp(-b)`` and fall to 0 as ``o`` grows (for the y layer curve the
article's section 5.6 describes a loose dependence on ``o``: a slow fall from below 1). The
form is part of a curve (``GompertzCurve.form``, ``form = "hit"`` in a file; default
``"miss"``). A family has one curve per redundant volume, :data:`CURVE_NAMES`:

* ``l1_load``: redundant L1 loads (L2 -> L1 capacity misses),
* ``x_layer``, ``y_layer``, ``z_layer``: hits in the layer-overlap volumes of the previous-neighbour
  thread sets (section 4.4.2),
* ``l2_load``: redundant L2 loads (DRAM capacity misses),
* ``l2_store``: redundant (partial) L2 stores whose lines are evicted before completion.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field as dc_field
from typing import Mapping, Sequence

import numpy as np

from warpspeed.errors import FitError

#: Every curve a family file must define, in file order.
CURVE_NAMES: tuple[str, ...] = ("l1_load", "x_layer", "y_layer", "z_layer", "l2_load", "l2_store")

#: The forms of a Gompertz curve: ``"miss"``, ``m(o) = a exp(-b exp(-c o))``, and ``"hit"``,
#: ``h(o) = a exp(-b exp(c o))`` (module docstring).
FORMS: tuple[str, ...] = ("miss", "hit")

#: The y layer hit rate of the reference implementation of Ernst et al. 2023 as of 2022:
#: ``h_y(o) = 1.0 * exp(-0.078 * exp(1.03 * (o - 0.2)))`` (repository te42kyfo/warpspeed, file
#: predict_metrics.py, DerivedMetrics.rover0, commit c21407491a5aee94fc51ed3bbf3161c9dbd38e59
#: of 2022-11-30; the same from b09c005 of 2022-04-20 to b7134bd of 2024-11-09, replaced by
#: popt_WaveOverlapRover0 in 47696fe of 2024-11-18): its a, its factor 0.078, its slope 1.03
#: and its shift 0.2 of ``o``.
Y_LAYER_2022_A = 1.0
Y_LAYER_2022_FACTOR = 0.078
Y_LAYER_2022_SLOPE = 1.03
Y_LAYER_2022_SHIFT = 0.2

#: The same curve in the ``"hit"`` form: the shift folded into ``b``,
#: ``0.078 * exp(1.03 * (o - 0.2)) = (0.078 * exp(-1.03 * 0.2)) * exp(1.03 * o)``.
Y_LAYER_2022 = (Y_LAYER_2022_A, Y_LAYER_2022_FACTOR * math.exp(-Y_LAYER_2022_SLOPE * Y_LAYER_2022_SHIFT),
                Y_LAYER_2022_SLOPE)

#: Gompertz parameters (a, b, c) of the reference implementation of Ernst et al. 2023: repository
#: te42kyfo/warpspeed, file warpspeed/predict_metrics.py, class DerivedMetrics, commit
#: 2ad0722c3f6c5a1657ac495d09bbc86d6c7983ec (2025-03-10): popt_L1Rover, popt_WaveOverlapRover1
#: (z window), popt_L2Rover, popt_L2StoreRover, fitted on A100 measurements; and for the x and
#: y overlaps the separate y curve of the same code as of 2022 (:data:`Y_LAYER_2022`, a
#: ``"hit"`` curve; at commit 2ad0722 the first layer curve, popt_WaveOverlapRover0, has the z
#: curve's parameters, contrary to the article's section 5.6, which calls the y hit rate only
#: loosely tied to the oversubscription and the z curve steep). The x overlaps take the y curve,
#: as in every version of that code. Each curve holds only at the oversubscription definition
#: of its source (:mod:`warpspeed.memory.capacity.terms`). The contents of
#: ``fits/nvidia-ampere.toml``, and the starting point of
#: :func:`warpspeed.calibration.capacity.fit_curve`.
REFERENCE_PARAMETERS: dict[str, tuple[float, float, float]] = {
    "l1_load": (0.66, 6.77, 1.45),
    "x_layer": Y_LAYER_2022,
    "y_layer": Y_LAYER_2022,
    "z_layer": (1.0, 37.1, 3.2),
    "l2_load": (0.2, 7.56, 0.67),
    "l2_store": (0.38, 3.79, 0.55),
}

#: The form of each reference curve (:data:`FORMS`).
REFERENCE_FORMS: dict[str, str] = {name: "hit" if name in ("x_layer", "y_layer") else "miss"
                                   for name in CURVE_NAMES}

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

Point = tuple[float, float]  # (oversubscription, hit rate)


def gompertz(o: np.ndarray, a: float, b: float, c: float) -> np.ndarray:
    """The Gompertz miss-rate function ``a * exp(-b * exp(-c * o))`` (numpy, elementwise)."""
    return a * np.exp(-b * np.exp(-c * o))


def gompertz_hit(o: np.ndarray, a: float, b: float, c: float) -> np.ndarray:
    """The Gompertz hit-rate function ``a * exp(-b * exp(c * o))`` (numpy, elementwise)."""
    return a * np.exp(-b * np.exp(c * o))


@dataclass(frozen=True)
class GompertzCurve:
    """Miss rate of a redundant volume (dimensionless): ``m(o) = a * exp(-b * exp(-c * o))``
    (``form="miss"``) or ``m(o) = 1 - a * exp(-b * exp(c * o))`` (``form="hit"``)."""

    a: float
    b: float
    c: float
    form: str = "miss"

    def __post_init__(self) -> None:
        if self.form not in FORMS:
            raise FitError(f"Gompertz form {self.form!r} is unknown; allowed: {', '.join(FORMS)}")
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
        o = np.asarray(oversubscription, dtype=float)
        if self.form == "hit":
            result = 1.0 - gompertz_hit(o, self.a, self.b, self.c)
        else:
            result = gompertz(o, self.a, self.b, self.c)
        return float(result) if np.ndim(result) == 0 else result

    def hit_rate(self, oversubscription: float | np.ndarray) -> float | np.ndarray:
        """Hit rate ``1 - m(o)`` of the redundant volume."""
        result = 1.0 - np.asarray(self.miss_rate(oversubscription))
        return float(result) if np.ndim(result) == 0 else result


@dataclass(frozen=True)
class Provenance:
    """Where a set of curve parameters comes from."""

    source: str  # publication, code, measurement campaign or tool run
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
    parameters were taken over without their data); ``notes`` maps a curve name to its note in
    the file; ``source`` is the file the curves were read from ("" when built in memory) and
    ``packaged`` says whether that file is the family's file shipped with warpspeed
    (``fits/<family>.toml``), as opposed to a user's file. ``dataclasses.replace`` keeps both:
    pass ``source=""`` and ``packaged=False`` when it changes a curve, so that predictions do not
    name the changed curves after the packaged file.
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
    source: str = ""
    packaged: bool = False

    def curve(self, name: str) -> GompertzCurve:
        if name not in CURVE_NAMES:
            raise FitError(f"unknown curve {name!r}; curves: {', '.join(CURVE_NAMES)}")
        return getattr(self, name)

    def layer(self, dim: str) -> GompertzCurve:
        """The layer-overlap curve of dimension ``dim`` (x, y or z)."""
        if dim not in ("x", "y", "z"):
            raise FitError(f"unknown layer dimension {dim!r}; allowed: x, y, z")
        return getattr(self, f"{dim}_layer")

    @property
    def label(self) -> str:
        """How predictions name these curves: the family for the packaged file, the file path
        for a user's file, ``"<family> (modified)"`` for curves built in memory."""
        if self.packaged:
            return self.family
        return self.source or f"{self.family} (modified)"


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
        check_point(o, h, f"{origin}: point {i}")
        result.append((o, h))
    if len(result) < minimum:
        raise FitError(f"{origin}: {len(result)} point(s) are fewer than the {minimum} parameters "
                       "of the Gompertz curve; give at least that many")
    return tuple(result)


def check_point(o: float, h: float, where: str) -> None:
    """One (oversubscription, hit rate) point: finite, oversubscription 0 to :data:`MAX_OVERSUBSCRIPTION`,
    hit rate in [0, 1]; a :class:`~warpspeed.errors.FitError` naming ``where`` otherwise."""
    if not (math.isfinite(o) and math.isfinite(h)):
        raise FitError(f"{where}: NaN or infinite value (oversubscription={o}, hit_rate={h}); "
                       "only finite numbers are allowed")
    if o < 0:
        raise FitError(f"{where}: negative oversubscription {o}; it must be >= 0")
    if o > MAX_OVERSUBSCRIPTION:
        raise FitError(f"{where}: oversubscription is too large (got {o}); allowed: 0 to {MAX_OVERSUBSCRIPTION:g}")
    if not 0.0 <= h <= 1.0:
        raise FitError(f"{where}: hit rate {h} outside [0, 1]")
