"""Refit the capacity curves on measured data.

Method: Ernst, Holzer, Hager, Knorr, Wellein: "Analytical Performance Estimation during Code
Generation on Modern GPUs", Journal of Parallel and Distributed Computing, 2023, sections 4.5
and 5.6 (section numbers below refer to it).

From each row of a measurement CSV (:mod:`warpspeed.validation.measure`) the hit rate that a curve models
is derived from the measured volume, the compulsory volume and the redundant (or overlap)
volume, paired with the predicted oversubscription of that row:

``l1_load`` (L1 redundant loads, 4.5 eq. (5); measured ``lts__t_sectors_srcunit_tex_op_read``):
    ``m = (V_L2,meas - V_L2,compulsory) / (V_L1,load - V_L2,compulsory)``, ``o = o_L1``.
``x_layer``, ``y_layer``, ``z_layer`` (5.6: "deducting the minimal compulsive data volume
excluding the overlapping data volume from the measured data volume and dividing the difference
by the overlapping volume"; measured ``dram__bytes_read``):
    ``h_d = (V_DRAM,compulsory + C + P - sum_{d' != d} H_d' - V_DRAM,meas) / overlap_d``,
    ``o = o_d``, with the other terms at their predicted values: ``H_d'`` the predicted hits of
    the other dimensions, ``C`` the predicted capacity misses of redundant L2 loads and ``P`` the
    predicted partial-store reads.
``l2_load`` (redundant L2 loads):
    ``m = (V_DRAM,meas - V_DRAM,compulsory + sum_d H_d - P) / V_L2,redundant load``, ``o = o_L2``.
``l2_store`` (partial stores evicted before they are complete, written back to DRAM; measured
``dram__bytes_write``), as the article's figure 18 derives it from the measured DRAM stores:
    ``m = (V_DRAM,store,meas - V_DRAM,store,compulsory) / V_L2,redundant store``, ``o = o_L2``.

Hit rates ``h = 1 - m`` are clipped to [0, 1] (measurement noise can push them outside). A row
contributes to a curve only when the volume the rate is divided by is at least
:data:`MIN_TERM_FRACTION` of the measured volume; smaller volumes make the rate a ratio of noise.

Held-out evaluation: rows are split deterministically (every k-th row held out, in file order);
the curves are fitted on the rest with :func:`warpspeed.memory.capacity.fit_curve`, and the
held-out rows' L2 and DRAM volumes and performance are re-evaluated from their prediction
columns with the old and the new curves (:func:`reevaluate`), so "before" and "after" differ only
in the curves. The re-evaluation calls the predictor's own equations
(:mod:`warpspeed.memory.capacity.terms`, :func:`warpspeed.memory.dram.field_dram_volumes`) on
the row's totals over fields, since the CSV holds no per-field columns: it reproduces the
predictor exactly unless some fields' L2 load is below their compulsory DRAM load while
others' is above (the predictor applies ``max(0, ·)`` to each field, the re-evaluation to the
total). The L2 limit of the roofline is rescaled by the old over the new volume. The DRAM limit
is the predictor's, ``achievable bandwidth / DRAM volume``, with the bandwidth recomputed at the
new volume by :func:`warpspeed.memory.dram_bandwidth.launch_dram_bandwidth` (the bytes in
flight of a launch at low occupancy grow with its DRAM volume per lup): the row's limit is
multiplied by ``(old volume / new volume) x (bandwidth at the new volume / bandwidth at the old
volume)``, from the row's resident threads (``pred_dram_resident_threads``), registers
(``pred_registers``) and folding. Rows written before those columns existed, or re-evaluated
without a device, keep the bandwidth of the row (the DRAM limit rescaled by the volume only).
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from warpspeed.errors import DeviceError, FitError
from warpspeed.hardware.device import Device, load_device
from warpspeed.calibration.capacity import FitResult, fit_curve, write_fit_toml
from warpspeed.memory.capacity import (
    CURVE_NAMES,
    GOMPERTZ_PARAMETERS,
    CapacityCurves,
    GompertzCurve,
    Point,
    Provenance,
    base_reference,
    load_curves,
)
from warpspeed.memory.capacity.terms import l2_load_bytes_per_lup
from warpspeed.memory.dram import dram_rates, field_dram_volumes
from warpspeed.memory.wave import DIMENSIONS, PerDim
from warpspeed.validation.accuracy import AccuracyReport, accuracy_report, row_dram_bandwidth
from warpspeed.validation.measure import MeasurementTable

#: A row contributes to a curve only if the volume its rate is divided by is at least this
#: fraction of the measured volume (a chosen threshold: an error of 1 % of the measured volume
#: then changes the derived rate by at most 0.5).
MIN_TERM_FRACTION = 0.02

#: Every k-th row (in file order) is held out of the fit: 25 % held out.
DEFAULT_HOLDOUT_EVERY = 4


def _v(row: Mapping[str, Any], column: str, default: float = math.nan) -> float:
    value = row.get(column, default)
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def _clip01(value: float) -> float:
    return min(1.0, max(0.0, value))


def _predicted_hits(row: Mapping[str, Any], skip: str | None = None) -> float:
    """Predicted layer hits (B/lup) of every dimension except ``skip``."""
    total = 0.0
    for d in DIMENSIONS:
        if d == skip:
            continue
        overlap = _v(row, f"pred_{d}_overlap_bytes_per_lup", 0.0)
        if overlap > 0:
            total += overlap * _v(row, f"pred_{d}_hit_rate")
    return total


def derive_point(row: Mapping[str, Any], curve: str,
                 min_fraction: float = MIN_TERM_FRACTION) -> tuple[float, float] | None:
    """(oversubscription, hit rate) of ``curve`` from one row, or None if the row says nothing
    about it (missing measurement, too small a redundant or overlap volume). See the module
    docstring for the formulas."""
    if curve not in CURVE_NAMES:
        raise FitError(f"unknown curve {curve!r}; curves: {', '.join(CURVE_NAMES)}")
    if curve == "l1_load":
        measured = _v(row, "meas_l2_load_bytes_per_lup")
        compulsory = _v(row, "pred_l2_load_compulsory_bytes_per_lup")
        volume = _v(row, "pred_l1_load_bytes_per_lup") - compulsory
        o = _v(row, "pred_l1_oversubscription")
        hit = None if not volume > 0 else 1.0 - (measured - compulsory) / volume
    elif curve == "l2_store":
        measured = _v(row, "meas_dram_store_bytes_per_lup")
        volume = _v(row, "pred_l2_redundant_store_bytes_per_lup", 0.0)
        o = _v(row, "pred_l2_oversubscription")
        hit = None if not volume > 0 else (
            1.0 - (measured - _v(row, "pred_dram_store_compulsory_bytes_per_lup")) / volume)
    else:
        measured = _v(row, "meas_dram_load_bytes_per_lup")
        compulsory = _v(row, "pred_dram_load_compulsory_bytes_per_lup")
        capacity = _v(row, "pred_dram_capacity_miss_bytes_per_lup", 0.0)
        partial = _v(row, "pred_dram_partial_store_read_bytes_per_lup", 0.0)
        if curve.endswith("_layer"):
            d = curve[0]
            volume = _v(row, f"pred_{d}_overlap_bytes_per_lup", 0.0)
            o = _v(row, f"pred_{d}_oversubscription")
            hit = None if not volume > 0 else (
                (compulsory + capacity + partial - _predicted_hits(row, skip=d) - measured) / volume)
        else:  # l2_load
            volume = _v(row, "pred_l2_redundant_load_bytes_per_lup", 0.0)
            o = _v(row, "pred_l2_oversubscription")
            hit = None if not volume > 0 else (
                1.0 - (measured - compulsory + _predicted_hits(row) - partial) / volume)
    if hit is None or not all(math.isfinite(v) for v in (measured, hit, o)) or o < 0:
        return None
    if measured <= 0 or volume < min_fraction * measured:
        return None
    return (o, _clip01(hit))


def derive_points(rows: Sequence[Mapping[str, Any]], curve: str,
                  min_fraction: float = MIN_TERM_FRACTION) -> tuple[Point, ...]:
    """:func:`derive_point` of every usable row (errors rows skipped)."""
    points = []
    for row in rows:
        if str(row.get("error", "") or "").strip():
            continue
        p = derive_point(row, curve, min_fraction)
        if p is not None:
            points.append(p)
    return tuple(points)


def split_rows(rows: Sequence[Mapping[str, Any]], holdout_every: int = DEFAULT_HOLDOUT_EVERY
               ) -> tuple[tuple[Mapping[str, Any], ...], tuple[Mapping[str, Any], ...]]:
    """(fit rows, held-out rows): row i (0-based, file order) is held out when
    ``i % holdout_every == holdout_every - 1``."""
    if not isinstance(holdout_every, int) or holdout_every < 2:
        raise FitError(f"holdout_every must be an integer >= 2 (every k-th row held out), got {holdout_every!r}")
    fit = tuple(r for i, r in enumerate(rows) if i % holdout_every != holdout_every - 1)
    held = tuple(r for i, r in enumerate(rows) if i % holdout_every == holdout_every - 1)
    return fit, held


def _bandwidth_ratio(row: Mapping[str, Any], device: Device | None, old_bytes: float, new_bytes: float) -> float:
    """Achievable DRAM bandwidth at ``new_bytes`` over that at ``old_bytes`` per lup for the
    row's launch (:func:`warpspeed.validation.accuracy.row_dram_bandwidth`, the predictor's
    bandwidth); 1 without a device or without the row's launch columns."""
    if device is None:
        return 1.0
    old, new = row_dram_bandwidth(row, device, old_bytes), row_dram_bandwidth(row, device, new_bytes)
    return 1.0 if old is None or new is None else new / old


def reevaluate(row: Mapping[str, Any], curves: CapacityCurves, device: Device | None = None) -> dict[str, float]:
    """The row's L2 load, DRAM load and performance predicted with ``curves`` from its
    prediction columns (see the module docstring). Returns ``pred_*`` columns.

    The model's equations are those of the predictor (:mod:`warpspeed.memory.capacity.terms`,
    :func:`warpspeed.memory.dram.field_dram_volumes`,
    :func:`warpspeed.memory.dram_bandwidth.launch_dram_bandwidth` on ``device``), applied to
    the row's totals over fields.
    """
    l1_miss = float(curves.l1_load.miss_rate(_v(row, "pred_l1_oversubscription")))
    l2_load = l2_load_bytes_per_lup(_v(row, "pred_l2_load_compulsory_bytes_per_lup"),
                                    _v(row, "pred_l1_load_bytes_per_lup"), l1_miss)
    l2_store = _v(row, "pred_l2_store_bytes_per_lup")
    rates = dram_rates(curves, PerDim(*(_v(row, f"pred_{d}_oversubscription", 0.0) for d in DIMENSIONS)),
                       _v(row, "pred_l2_oversubscription"))
    dram = field_dram_volumes(
        "total", _v(row, "pred_dram_load_compulsory_bytes_per_lup"),
        _v(row, "pred_dram_store_compulsory_bytes_per_lup", _v(row, "pred_dram_store_bytes_per_lup")),
        PerDim(*(_v(row, f"pred_{d}_overlap_bytes_per_lup", 0.0) for d in DIMENSIONS)),
        l2_load, l2_store, rates)
    old_l2 = _v(row, "pred_l2_load_bytes_per_lup") + l2_store
    old_dram = _v(row, "pred_dram_load_bytes_per_lup") + _v(row, "pred_dram_store_bytes_per_lup")
    limits = [_v(row, "pred_fp_lups_per_s", math.inf), _v(row, "pred_l1_lups_per_s", math.inf)]
    new_dram = dram.total_bytes_per_lup
    bandwidth = _bandwidth_ratio(row, device, old_dram, new_dram) if old_dram > 0 and new_dram > 0 else 1.0
    for lim_col, old, new, ratio in (("pred_l2_lups_per_s", old_l2, l2_load + l2_store, 1.0),
                                     ("pred_dram_lups_per_s", old_dram, new_dram, bandwidth)):
        lim = _v(row, lim_col, math.inf)
        limits.append(lim if not math.isfinite(lim) or new <= 0 else lim * old / new * ratio)
    return {"pred_l2_load_bytes_per_lup": l2_load, "pred_dram_load_bytes_per_lup": dram.load_bytes_per_lup,
            "pred_lups_per_s": min(limits)}


def _with_curves(rows: Sequence[Mapping[str, Any]], curves: CapacityCurves,
                 device: Device | None) -> list[dict[str, Any]]:
    return [{**row, **reevaluate(row, curves, device)} for row in rows]


def _table_device(table: MeasurementTable) -> Device | None:
    """The device the table's predictions were made for (its ``device_model``, a built-in device
    name or a device file); None when no row has the launch columns of the DRAM bandwidth (then
    no device is needed) or none is named."""
    needed = any(math.isfinite(_v(r, "pred_dram_resident_threads")) for r in table.rows)
    if not (needed and table.device):
        return None
    try:
        return load_device(table.device)
    except DeviceError as exc:
        raise FitError(f"the re-evaluation of the DRAM limit needs the device the rows were predicted for "
                       f"(device_model {table.device!r}); pass it to refit(device=...): {exc}") from None


@dataclass(frozen=True)
class RefitResult:
    """Refitted curves and their effect on held-out rows.

    ``fitted``: the curves that were refitted (with RMS error and R² on their points);
    ``skipped``: curve -> why it kept its old parameters; ``curves``: the complete new family;
    ``before`` / ``after``: accuracy of the held-out rows re-evaluated with the old / new curves.
    """

    family: str
    curves: CapacityCurves
    base: CapacityCurves
    fitted: Mapping[str, FitResult]
    skipped: Mapping[str, str]
    fit_rows: int
    held_out_rows: int
    holdout_every: int
    before: AccuracyReport
    after: AccuracyReport


def refit(table: MeasurementTable, family: str, base: CapacityCurves | None = None,
          curves: Sequence[str] = CURVE_NAMES, holdout_every: int = DEFAULT_HOLDOUT_EVERY,
          min_fraction: float = MIN_TERM_FRACTION, device: Device | None = None) -> RefitResult:
    """Refit ``curves`` of ``family`` on the fit rows of ``table``; evaluate on the held-out rows.

    A curve with fewer than 3 usable points keeps its ``base`` parameters (listed in
    ``skipped``); when no curve has them, :class:`~warpspeed.errors.FitError` (nothing is fitted,
    so nothing is to be written). ``base`` defaults to the family's file in ``fits/``. ``device``: the device
    of the DRAM bandwidth in the re-evaluation (:func:`reevaluate`); default the table's
    ``device_model``.
    """
    unknown = [c for c in curves if c not in CURVE_NAMES]
    if unknown:
        raise FitError(f"unknown curve(s) {', '.join(unknown)}; curves: {', '.join(CURVE_NAMES)}")
    old = base if base is not None else load_curves(family)
    rows = [r for r in table.rows if not str(r.get("error", "") or "").strip()]
    if not rows:
        raise FitError("no usable rows (every row has an error); measure again")
    fit_rows, held = split_rows(rows, holdout_every)
    fitted: dict[str, FitResult] = {}
    skipped: dict[str, str] = {}
    for name in curves:
        points = derive_points(fit_rows, name, min_fraction)
        if len(points) < GOMPERTZ_PARAMETERS:
            skipped[name] = (f"{len(points)} usable point(s) in {len(fit_rows)} fit rows; "
                             f"at least {GOMPERTZ_PARAMETERS} needed")
            continue
        fitted[name] = fit_curve(points, name)
    if not fitted:
        counts = ", ".join(f"{name} {len(derive_points(fit_rows, name, min_fraction))}" for name in curves)
        raise FitError(f"nothing to fit: no curve has {GOMPERTZ_PARAMETERS} usable points in the {len(fit_rows)} "
                       f"fit rows ({counts}); allowed: rows with measured L2 and DRAM volumes (Nsight Compute "
                       "counters: measure without --no-ncu)")
    for name in CURVE_NAMES:
        if name not in curves:
            skipped[name] = "not requested"
    new = replace(old, family=family, source="", packaged=False, **{n: r.curve for n, r in fitted.items()})
    spec = device if device is not None else _table_device(table)
    kernel, name = table.kernel, table.device
    return RefitResult(family=family, curves=new, base=old, fitted=fitted, skipped=skipped,
                       fit_rows=len(fit_rows), held_out_rows=len(held), holdout_every=holdout_every,
                       before=accuracy_report(_with_curves(held, old, spec), kernel, name),
                       after=accuracy_report(_with_curves(held, new, spec), kernel, name))


def write_refit(result: RefitResult, path: str | Path, source: str, device: str = "",
                date: str | None = None) -> Path:
    """Write the refitted family with provenance (``source``: the measurement file)."""
    method = (f"scipy.optimize.curve_fit (trf) of the Gompertz miss rate on hit rates derived from measured "
              f"L2 and DRAM volumes (Ernst et al., J. Parallel Distrib. Comput. 2023, sections 4.5 and 5.6; "
              f"warpspeed.validation.refit); {result.fit_rows} fit rows, every "
              f"{result.holdout_every}th row held out ({result.held_out_rows} rows)")
    refitted = ", ".join(result.fitted) or "none"
    provenance = Provenance(source=source, date=date or _dt.date.today().isoformat(),
                            device=device or result.before.device or "unknown", method=method,
                            note=f"refitted: {refitted}; others from {base_reference(result.base, path)}")
    values: dict[str, GompertzCurve | FitResult] = {}
    points: dict[str, Sequence[Point]] = {}
    notes: dict[str, str] = {}
    for name in CURVE_NAMES:
        if name in result.fitted:
            values[name] = result.fitted[name]
            notes[name] = f"refitted on {len(result.fitted[name].points)} points from {source}"
        else:
            values[name] = result.base.curve(name)
            points[name] = tuple(result.base.points.get(name, ()))
            old_note = result.base.notes.get(name, "")
            notes[name] = f"kept ({result.skipped.get(name, 'not refitted')})" + (f"; {old_note}" if old_note else "")
    return write_fit_toml(path, result.family, values, provenance, points=points, notes=notes)
