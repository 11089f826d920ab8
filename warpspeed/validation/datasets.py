"""One compared dataset of public measurements: its points, their errors and its bounds.

The datasets of :mod:`warpspeed.validation.public` and its companions (``public_l1``,
``public_models``, ``public_power``, ``public_rdna``) are :class:`DatasetAccuracy` records made
by :func:`dataset`; :func:`source_of` reads the (file, commit) of a stored measurement file's
header.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from warpspeed.errors import FitError
from warpspeed.measured.device_figures import MEASURED_AS
from warpspeed.validation.percent import mape
from warpspeed.validation.strides import StrideRow

#: Repository of the public measurements (GitHub owner/name): D. Ernst's GPU microbenchmarks.
SOURCE_REPOSITORY = "te42kyfo/gpu-benches"

_SOURCE_FILE = re.compile(r"file (\S+?),? commit ([0-9a-f]{40})")
#: The GitHub repository a header line names (``https://github.com/<owner>/<name>``).
_REPOSITORY = re.compile(r"github\.com/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?=[\s),;]|$)")


@dataclass(frozen=True)
class PointError:
    """One compared point: ``label`` names it (row, device, occupancy)."""

    label: str
    predicted: float
    measured: float

    @property
    def error_percent(self) -> float:
        """Signed error ``100 (predicted - measured) / measured`` [%]."""
        return 100.0 * (self.predicted - self.measured) / self.measured


@dataclass(frozen=True)
class DatasetAccuracy:
    """The model against one stored dataset.

    group: "L1", "L1 bandwidth", "DRAM", "L2", "Latency", "Power" or "Time models"; name: what is compared; unit: unit of the compared values;
    sources: (path, commit) of each file of ``repository`` behind the dataset; note: what the points are;
    mape_bound_percent / worst_bound_percent: the stated bounds [%].
    """

    group: str
    name: str
    unit: str
    points: tuple[PointError, ...]
    sources: tuple[tuple[str, str], ...]
    note: str
    mape_bound_percent: float
    worst_bound_percent: float
    #: Repository the measurements come from (GitHub owner/name).
    repository: str = SOURCE_REPOSITORY

    @property
    def mape_percent(self) -> float:
        """Mean absolute percentage error over the points [%]."""
        return mape([p.predicted for p in self.points], [p.measured for p in self.points])

    @property
    def worst(self) -> PointError:
        """The point with the largest absolute error."""
        return max(self.points, key=lambda p: abs(p.error_percent))

    @property
    def within_bounds(self) -> bool:
        """Whether the MAPE and the worst point stay within the stated bounds."""
        return (self.mape_percent <= self.mape_bound_percent
                and abs(self.worst.error_percent) <= self.worst_bound_percent)


def repository_of(text: str) -> str:
    """The GitHub owner/name of the first repository a header line names (:data:`SOURCE_REPOSITORY` if none)."""
    m = _REPOSITORY.search(text)
    return m.group(1) if m else SOURCE_REPOSITORY


def source_of(text: str) -> tuple[str, str]:
    """(path, commit) of a gpu-benches file named in a header line ``... file P, commit C ...``."""
    m = _SOURCE_FILE.search(text)
    if m is None:
        raise FitError(f"no 'file <path>, commit <40 hex digits>' in source line {text[:120]!r}")
    return m.group(1), m.group(2)


def dataset(group: str, name: str, unit: str, points: list[PointError], sources: list[tuple[str, str]],
            note: str, bounds: tuple[float, float]) -> DatasetAccuracy:
    """A dataset of ``points`` (at least one) with its sources (repeats dropped) and its
    (MAPE, worst point) bounds [%]."""
    if not points:
        raise FitError(f"{name}: no points to compare")
    return DatasetAccuracy(group, name, unit, tuple(points), tuple(dict.fromkeys(sources)), note, *bounds)


def row_label(row: StrideRow) -> str:
    """The label of a gpu-strides row: precision and stride, or block shape and pitch."""
    if row.kind == "stride":
        return f"{row.precision}, stride {row.arg}"
    return f"{row.precision}, block {row.arg} x {1024 // row.arg}, pitch {row.pitch}"


def device_of_part(part: str) -> str:
    """The first built-in device that takes ``part``'s measured figures unchanged."""
    for name, measured in MEASURED_AS.items():
        if measured == part:
            return name
    raise FitError(f"no built-in device takes the figures of measured part {part!r}")
