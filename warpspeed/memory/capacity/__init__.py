"""Capacity-miss curves (Ernst, Holzer, Hager, Knorr, Wellein: "Analytical Performance
Estimation during Code Generation on Modern GPUs", Journal of Parallel and Distributed
Computing, 2023, section 4.5).

* :mod:`~warpspeed.memory.capacity.curves`: the Gompertz curve and the curves of a family;
* :mod:`~warpspeed.memory.capacity.files`: reading and writing ``fits/<family>.toml`` files;
* fitting a curve to measured points and writing a family file: :mod:`warpspeed.calibration.capacity`.
"""

from warpspeed.memory.capacity.curves import (
    CURVE_NAMES,
    FORMS,
    GOMPERTZ_PARAMETERS,
    PARAMETER_BOUNDS,
    REFERENCE_FORMS,
    REFERENCE_PARAMETERS,
    CapacityCurves,
    GompertzCurve,
    Point,
    Provenance,
    gompertz,
    gompertz_hit,
    validate_points,
)
from warpspeed.memory.capacity.files import (
    DEFAULT_FAMILY,
    FAMILIES,
    base_reference,
    curves_for_device,
    family_for_device,
    fits_directory,
    load_curves,
)

__all__ = [
    "CURVE_NAMES", "DEFAULT_FAMILY", "FAMILIES", "FORMS", "GOMPERTZ_PARAMETERS", "PARAMETER_BOUNDS",
    "REFERENCE_FORMS", "REFERENCE_PARAMETERS", "CapacityCurves", "GompertzCurve", "Point", "Provenance",
    "base_reference", "curves_for_device", "family_for_device", "fits_directory", "gompertz", "gompertz_hit",
    "load_curves", "validate_points",
]
