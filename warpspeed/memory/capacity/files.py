"""Capacity-curve files: one TOML file per device family, with provenance and data points.

The package's files live in ``fits/`` (installed as ``warpspeed.fits``); a user's file (for
example written by ``warpspeed fit`` or ``warpspeed refit``) has the same format::

    family = "nvidia-ampere"
    [provenance]            # source, date, device, method, optional note
    [curves.<name>]         # a, b, c; optional form ("miss", the default, or "hit"), note,
                            # rms_error, r_squared; points = [[o, h], ...]

with one ``[curves.<name>]`` table per name of
:data:`~warpspeed.memory.capacity.curves.CURVE_NAMES`.
"""

from __future__ import annotations

import math
import os
from dataclasses import replace
from pathlib import Path
from typing import Mapping, Sequence

from warpspeed.errors import FitError
from warpspeed.files.names import check_name
from warpspeed.files.stored import fits_directory
from warpspeed.files.toml import read_toml
from warpspeed.hardware.device import Device
from warpspeed.memory.capacity.curves import (
    CURVE_NAMES,
    FORMS,
    CapacityCurves,
    GompertzCurve,
    Point,
    Provenance,
    validate_points,
)

#: The device families with a file in ``fits/``.
FAMILIES: tuple[str, ...] = (
    "nvidia-volta", "nvidia-ampere", "nvidia-hopper", "nvidia-ada", "amd-cdna", "amd-rdna",
)

#: The family whose parameters come from A100 measurements; the default.
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

#: The keys a ``[provenance]`` table must hold (strings).
PROVENANCE_KEYS: tuple[str, ...] = ("source", "date", "device", "method")


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


def load_curves(family: str | None = None, path: str | Path | None = None) -> CapacityCurves:
    """Load a family's curves.

    Args:
        family: family name (see :data:`FAMILIES`); default :data:`DEFAULT_FAMILY`.
        path: a ``.toml`` file, or a directory holding ``<family>.toml``; default
            :func:`fits_directory`.
    """
    fam = DEFAULT_FAMILY if family is None else check_name(family, "curve family", FitError)
    p = fits_directory() if path is None else Path(path)
    if p.is_dir():
        p = p / f"{fam}.toml"
        if not p.is_file():
            raise FitError(f"no curve file for family {fam!r} in {str(p.parent)!r}; "
                           f"known families: {', '.join(FAMILIES)}")
    curves = _parse_curves(read_toml(p, "curve file", FitError), str(p))
    if family is not None and curves.family != family:
        raise FitError(f"curve file {str(p)!r} holds family {curves.family!r}, not {family!r}")
    return replace(curves, packaged=_same_file(p, fits_directory() / f"{curves.family}.toml"))


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def base_reference(curves: CapacityCurves, written_to: str | Path) -> str:
    """How a file written to ``written_to`` names the curves it copies from ``curves``: the
    packaged file as ``fits/<family>.toml``, a user's file by its path relative to the written
    file's directory (its name alone when there is no relative path), curves built in memory
    by their family."""
    if curves.packaged:
        return f"fits/{curves.family}.toml"
    if not curves.source:
        return f"{curves.family} (built in memory)"
    source = Path(curves.source).resolve()
    try:
        return os.path.relpath(source, Path(written_to).resolve().parent)
    except ValueError:  # another drive (Windows)
        return source.name


def curves_for_device(device: Device, path: str | Path | None = None) -> CapacityCurves:
    """The curves of ``device``'s family (from ``path`` or the package's ``fits/``)."""
    return load_curves(family_for_device(device), path)


def _parse_curves(data: dict, origin: str) -> CapacityCurves:
    family = data.get("family")
    if not isinstance(family, str) or not family:
        raise FitError(f"{origin}: missing 'family' (a string such as {DEFAULT_FAMILY!r})")
    check_name(family, f"{origin}: family", FitError)
    prov = data.get("provenance")
    if not isinstance(prov, dict):
        raise FitError(f"{origin}: missing [provenance] table ({', '.join(PROVENANCE_KEYS)})")
    missing = [k for k in PROVENANCE_KEYS if not isinstance(prov.get(k), str)]
    if missing:
        raise FitError(f"{origin}: [provenance] lacks string key(s) {', '.join(missing)}")
    provenance = Provenance(source=prov["source"], date=prov["date"], device=prov["device"],
                            method=prov["method"], note=str(prov.get("note", "")))
    table = data.get("curves")
    if not isinstance(table, dict):
        raise FitError(f"{origin}: missing [curves.<name>] tables; curves: {', '.join(CURVE_NAMES)}")
    check_curve_names(table, origin)
    curves: dict[str, GompertzCurve] = {}
    points: dict[str, tuple[Point, ...]] = {}
    notes: dict[str, str] = {}
    for name in CURVE_NAMES:
        entry = table[name]
        if not isinstance(entry, dict) or any(k not in entry for k in ("a", "b", "c")):
            raise FitError(f"{origin}: curve {name!r} needs numbers a, b, c")
        form = entry.get("form", "miss")
        if form not in FORMS:
            raise FitError(f"{origin}: curve {name!r}: form {form!r} is unknown; allowed: {', '.join(FORMS)}")
        try:
            curves[name] = GompertzCurve(entry["a"], entry["b"], entry["c"], form)
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


def check_curve_names(names: Mapping[str, object], origin: str) -> None:
    """Every curve of :data:`CURVE_NAMES` must be present, and nothing else."""
    missing = [n for n in CURVE_NAMES if n not in names]
    if missing:
        raise FitError(f"{origin}: missing curve(s) {', '.join(missing)}; a family defines all of "
                       f"{', '.join(CURVE_NAMES)}")
    unknown = sorted(set(names) - set(CURVE_NAMES))
    if unknown:
        raise FitError(f"{origin}: unknown curve(s) {', '.join(unknown)}; allowed: {', '.join(CURVE_NAMES)}")
