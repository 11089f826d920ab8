"""Capacity-miss curves (Ernst, Holzer, Hager, Knorr, Wellein: "Analytical Performance
Estimation during Code Generation on Modern GPUs", Journal of Parallel and Distributed
Computing, 2023, section 4.5).

* :mod:`~warpspeed.memory.capacity.curves`: the Gompertz curve and the curves of a family;
* :mod:`~warpspeed.memory.capacity.files`: reading and writing ``fits/<family>.toml`` files;
* :mod:`~warpspeed.memory.capacity.fitting`: fitting a curve to measured points.
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
)
from warpspeed.memory.capacity.files import (
    DEFAULT_FAMILY,
    FAMILIES,
    base_reference,
    curves_for_device,
    family_for_device,
    fits_directory,
    load_curves,
    write_fit_toml,
)
#: The fitting's names, imported on first use (PEP 562): predictions do not need them.
_FITTING = ("CSV_COLUMNS", "FitResult", "fit_curve", "read_points_csv", "require_informative_fit", "validate_points")

__all__ = [
    "CSV_COLUMNS", "CURVE_NAMES", "DEFAULT_FAMILY", "FAMILIES", "FORMS", "GOMPERTZ_PARAMETERS", "PARAMETER_BOUNDS",
    "REFERENCE_FORMS", "REFERENCE_PARAMETERS", "CapacityCurves", "FitResult", "GompertzCurve", "Point", "Provenance",
    "base_reference", "curves_for_device", "family_for_device", "fit_curve", "fits_directory", "gompertz", "gompertz_hit", "load_curves",
    "read_points_csv", "require_informative_fit", "validate_points", "write_fit_toml",
]


def __getattr__(name: str):
    if name in _FITTING:
        from warpspeed.memory.capacity import fitting

        value = getattr(fitting, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_FITTING})
