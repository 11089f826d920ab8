"""Prediction accuracy against measurements (Ernst et al., JPDC 2023, sections 5.4-5.8).

Input: the rows of a measurement CSV
(:func:`warpspeed.validation.measurement_csv.read_measurement_csv`), each with
measured (``meas_*``) and predicted (``pred_*``) columns. Output, as frozen dataclasses:

* per metric (L1 wavefronts, L2 -> L1 load, L1 -> L2 store, DRAM load, DRAM store,
  performance) the mean absolute percentage error
  ``MAPE = 100 / n * sum |predicted - measured| / measured`` over the rows where both values are
  finite and the measured value is positive (rows without ncu counters are skipped per metric);
* ranking quality: Spearman's rank correlation between predicted and measured performance
  (``scipy.stats.spearmanr``, ties as average ranks), the measured performance of the
  best-predicted configuration relative to the best measured one, and how many of the measured
  top-k (k = 5) are among the predicted top-k;
* the phenomenological variant (section 5.8: "a phenomenological prediction that uses the same
  performance model but measured data volumes"): the four-limiter roofline
  (:func:`warpspeed.levels.four_limiter`) fed with the row's measured L1 wavefronts per
  lup (as the L1 cycles), L2 load plus store and DRAM load plus store volumes, with the DRAM
  bandwidth the launch achieves at the measured DRAM volume
  (:func:`warpspeed.memory.dram_bandwidth.launch_dram_bandwidth`, from the row's resident
  threads, registers and folding; the device's sustained bandwidth when the row lacks them) and
  the predicted FP limit (the measurement counts no FP work; the authors' code takes its
  predicted FP limit into the phenomenological minimum too: te42kyfo/warpspeed,
  warpspeed/predict_metrics.py, ``perfPheno``, commit 2ad0722c). It is evaluated on the rows
  that have all three measured values, with its MAPE against the measured performance, its
  limiters and its ranking quality, next to the prediction's; it separates the error of the
  volume estimates from that of the performance model.

:func:`plot_accuracy` draws predicted against measured values per metric (small multiples, log
axes, colored by block shape as in Ernst et al. 2023, section 5.1;
:func:`warpspeed.plots.block_color`).
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from warpspeed.errors import DeviceError
from warpspeed.files.jsonsafe import json_safe
from warpspeed.hardware.device import Device, load_device
from warpspeed.memory.dram_bandwidth import launch_dram_bandwidth
from warpspeed.launch.space import CONFIG_COLUMNS
from warpspeed.levels import LIMITERS, Roofline, four_limiter
from warpspeed.plots import BLOCK_SHAPE_LEGEND, block_color, new_figure, save_figure
from warpspeed.units import NANO
from warpspeed.validation.measurement_csv import MeasurementColumns, read_measurement_columns
from warpspeed.validation.percent import AccuracyError, mape
from warpspeed.validation.schema import COMPARED_METRICS, MeasurementTable

#: Size of the top group compared between predicted and measured ranking (``--top`` changes it).
DEFAULT_TOP_K = 5

#: Human-readable names of the compared metrics.
METRIC_LABELS: dict[str, str] = {
    "l1_wavefronts": "L1 wavefronts",
    "l2_load": "L2→L1 load",
    "l2_store": "L1→L2 store",
    "dram_load": "DRAM load",
    "dram_store": "DRAM store",
    "performance": "performance",
}


@dataclass(frozen=True)
class MetricAccuracy:
    """Error of one metric over ``n`` rows. Percentages in percent (0-100+)."""

    metric: str
    label: str
    unit: str
    n: int
    mape_percent: float  # mean absolute percentage error; NaN when n == 0
    max_ape_percent: float  # worst row
    worst_config: str  # the row with the largest error


@dataclass(frozen=True)
class RankingQuality:
    """How well predicted performance ranks the configurations (``n`` rows with both values)."""

    n: int
    spearman: float  # Spearman's rho, -1..1
    spearman_p_value: float
    best_predicted: str  # configuration with the highest predicted performance
    best_measured: str  # configuration with the highest measured performance
    best_predicted_relative: float  # measured perf of best_predicted / measured perf of best_measured
    top_k: int
    top_k_overlap: int  # measured top-k configurations that are also in the predicted top-k


#: Column of the phenomenological rate (lup/s) in the rows :func:`with_phenomenological` returns.
PHENOMENOLOGICAL_COLUMN = "pheno_lups_per_s"
#: Column of the phenomenological limiter in those rows.
PHENOMENOLOGICAL_LIMITER_COLUMN = "pheno_limiter"
#: Label of the phenomenological performance in reports.
PHENOMENOLOGICAL_LABEL = "performance, measured volumes"


@dataclass(frozen=True)
class PhenomenologicalAccuracy:
    """The roofline fed with the measured volumes (module docstring), over ``n`` rows.

    ``performance``: its error against the measured performance; ``limiters``: (limiter, rows)
    in the roofline's order; ``ranking``: its ranking quality (None with fewer than 2 rows)."""

    n: int
    performance: MetricAccuracy
    limiters: tuple[tuple[str, int], ...]
    ranking: RankingQuality | None


@dataclass(frozen=True)
class AccuracyReport:
    """Accuracy of one measurement table."""

    kernel: str
    device: str
    rows: int
    metrics: tuple[MetricAccuracy, ...]
    ranking: RankingQuality | None  # None with fewer than 2 rows having both performances
    #: The phenomenological variant; None without a device or without rows having measured
    #: L1 wavefronts, L2 and DRAM volumes.
    phenomenological: PhenomenologicalAccuracy | None = None

    def metric(self, name: str) -> MetricAccuracy:
        for m in self.metrics:
            if m.metric == name:
                return m
        raise AccuracyError(f"no metric {name!r}; metrics: {', '.join(m.metric for m in self.metrics)}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (NaN becomes None)."""
        return json_safe(asdict(self))


def _value(row: Mapping[str, Any], column: str) -> float:
    v = row.get(column, math.nan)
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def row_label(row: Mapping[str, Any]) -> str:
    """``BXxBYxBZ`` plus `` fold FXxFYxFZ`` when folded (as :attr:`Config.label`)."""
    return config_label(int(row["block_x"]), int(row["block_y"]), int(row["block_z"]), int(row.get("fold_x", 1)),
                        int(row.get("fold_y", 1)), int(row.get("fold_z", 1)))


def config_label(bx: int, by: int, bz: int, fx: int, fy: int, fz: int) -> str:
    """:func:`row_label` of a block and a folding."""
    block = f"{bx}x{by}x{bz}"
    return block if fx == fy == fz == 1 else f"{block} fold {fx}x{fy}x{fz}"


def _pairs(rows: Sequence[Mapping[str, Any]], measured: str, predicted: str) -> list[tuple[str, float, float]]:
    out = []
    for row in rows:
        m, p = _value(row, measured), _value(row, predicted)
        if math.isfinite(m) and math.isfinite(p) and m > 0:
            out.append((row_label(row), p, m))
    return out


def metric_accuracy(rows: Sequence[Mapping[str, Any]], metric: str) -> MetricAccuracy:
    """MAPE of one of :data:`warpspeed.validation.schema.COMPARED_METRICS` over ``rows``."""
    spec = {name: (m, p, u) for name, m, p, u in COMPARED_METRICS}
    if metric not in spec:
        raise AccuracyError(f"unknown metric {metric!r}; metrics: {', '.join(spec)}")
    measured_col, predicted_col, unit = spec[metric]
    return _column_accuracy(rows, metric, METRIC_LABELS[metric], unit, measured_col, predicted_col)


def _column_accuracy(rows: Sequence[Mapping[str, Any]], metric: str, label: str, unit: str,
                     measured_col: str, predicted_col: str) -> MetricAccuracy:
    pairs = _pairs(rows, measured_col, predicted_col)
    if not pairs:
        return MetricAccuracy(metric, label, unit, 0, math.nan, math.nan, "")
    apes = [100.0 * abs(p - m) / m for _, p, m in pairs]
    worst = apes.index(max(apes))  # the first of the largest, as max over the indices gives
    return MetricAccuracy(metric, label, unit, len(pairs),
                          mape([p for _, p, _ in pairs], [m for _, _, m in pairs]), apes[worst], pairs[worst][0])


def _top(pairs: Sequence[tuple[str, float, float]], index: int, k: int) -> list[str]:
    """Labels of the k largest values (ties broken by label, so the result is deterministic)."""
    return [label for label, *_ in heapq.nsmallest(k, pairs, key=lambda t: (-t[index], t[0]))]


#: Duplicate configurations an error names (the rest are counted).
SHOWN_DUPLICATES = 10


def ranking_quality(rows: Sequence[Mapping[str, Any]], top_k: int = DEFAULT_TOP_K,
                    predicted: str = "pred_lups_per_s") -> RankingQuality | None:
    """Spearman rho, best-predicted relative performance and top-k overlap of the predicted
    performance column ``predicted`` (default: the prediction's) against the measured one."""
    from scipy.stats import spearmanr

    if top_k < 1:
        raise AccuracyError(f"top_k must be >= 1, got {top_k}")
    pairs = _pairs(rows, "meas_lups_per_s", predicted)
    if len(pairs) < 2:
        return None
    counts = Counter(lab for lab, *_ in pairs)
    if len(counts) != len(pairs):
        repeated = sorted(lab for lab, n in counts.items() if n > 1)
        shown = ", ".join(repeated[:SHOWN_DUPLICATES]) + (f" and {len(repeated) - SHOWN_DUPLICATES} more"
                                                          if len(repeated) > SHOWN_DUPLICATES else "")
        raise AccuracyError(f"ranking needs one row per configuration; duplicate configuration(s): {shown}")
    predicted, measured_values = [p for _, p, _ in pairs], [m for _, _, m in pairs]
    if len(set(predicted)) == 1 or len(set(measured_values)) == 1:
        rho = p_value = math.nan  # a constant ranking has no rank correlation
    else:
        result = spearmanr(predicted, measured_values)
        rho, p_value = float(result.statistic), float(result.pvalue)
    measured = {lab: m for lab, _, m in pairs}
    best_pred = _top(pairs, 1, 1)[0]
    best_meas = _top(pairs, 2, 1)[0]
    k = min(top_k, len(pairs))
    overlap = len(set(_top(pairs, 1, k)) & set(_top(pairs, 2, k)))
    return RankingQuality(n=len(pairs), spearman=rho, spearman_p_value=p_value, best_predicted=best_pred,
                          best_measured=best_meas, best_predicted_relative=measured[best_pred] / measured[best_meas],
                          top_k=k, top_k_overlap=overlap)


def row_dram_bandwidth(row: Mapping[str, Any], device: Device, dram_bytes_per_lup: float) -> float | None:
    """The DRAM bandwidth [GB/s] the row's launch achieves at ``dram_bytes_per_lup``
    (:func:`warpspeed.memory.dram_bandwidth.launch_dram_bandwidth`, the predictor's), from
    its resident threads (``pred_dram_resident_threads``), registers (``pred_registers``) and
    folding; None when the row lacks them."""
    threads, registers = _value(row, "pred_dram_resident_threads"), _value(row, "pred_registers")
    folds = [_value(row, c) for c in CONFIG_COLUMNS if c.startswith("fold_")]
    if not all(math.isfinite(v) and v >= 1 for v in (threads, registers, *folds)) or dram_bytes_per_lup < 0:
        return None
    return launch_dram_bandwidth(device, threads, dram_bytes_per_lup, int(math.prod(folds)),
                                 int(registers)).achievable_gb_s


def phenomenological_roofline(row: Mapping[str, Any], device: Device) -> Roofline | None:
    """The four-limiter roofline with the row's measured L1 wavefronts (as L1 cycles), L2 load +
    store and DRAM load + store volumes per lup, the DRAM bandwidth of :func:`row_dram_bandwidth`
    at the measured DRAM volume, and the row's predicted FP limit (infinite when the row has
    none); None when a measured value is missing or negative (module docstring)."""
    l1 = _value(row, "meas_l1_wavefronts_per_lup")
    l2 = _value(row, "meas_l2_load_bytes_per_lup") + _value(row, "meas_l2_store_bytes_per_lup")
    dram = _value(row, "meas_dram_load_bytes_per_lup") + _value(row, "meas_dram_store_bytes_per_lup")
    if not all(math.isfinite(v) and v >= 0 for v in (l1, l2, dram)):
        return None
    # no FP demand here: the FP limit is the prediction's, set below
    roofline = four_limiter(device, "float64", 0.0, 0.0, l1, l2, dram, row_dram_bandwidth(row, device, dram))
    fp = _value(row, "pred_fp_lups_per_s")
    return replace(roofline, fp_lups_per_s=fp) if math.isfinite(fp) and fp > 0 else roofline


def with_phenomenological(rows: Sequence[Mapping[str, Any]], device: Device) -> list[dict[str, Any]]:
    """The rows with :data:`PHENOMENOLOGICAL_COLUMN` (lup/s, NaN where
    :func:`phenomenological_roofline` is None) and :data:`PHENOMENOLOGICAL_LIMITER_COLUMN`."""
    out = []
    for row in rows:
        roof = phenomenological_roofline(row, device)
        out.append({**row, PHENOMENOLOGICAL_COLUMN: math.nan if roof is None else roof.lups_per_s,
                    PHENOMENOLOGICAL_LIMITER_COLUMN: "" if roof is None else roof.limiter})
    return out


def phenomenological_accuracy(rows: Sequence[Mapping[str, Any]], device: Device,
                              top_k: int = DEFAULT_TOP_K) -> PhenomenologicalAccuracy | None:
    """The phenomenological variant over the rows without an error (None when no row has all
    three measured values)."""
    ok = [r for r in with_phenomenological(rows, device) if not str(r.get("error", "") or "").strip()]
    used = [r for r in ok if math.isfinite(_value(r, PHENOMENOLOGICAL_COLUMN))]
    if not used:
        return None
    counts = {}
    for r in used:
        counts[r[PHENOMENOLOGICAL_LIMITER_COLUMN]] = counts.get(r[PHENOMENOLOGICAL_LIMITER_COLUMN], 0) + 1
    limiters = tuple(sorted(counts.items(), key=lambda kv: (LIMITERS.index(kv[0]) if kv[0] in LIMITERS
                                                            else len(LIMITERS), kv[0])))
    performance = _column_accuracy(used, "performance_phenomenological", PHENOMENOLOGICAL_LABEL, "lup/s",
                                   "meas_lups_per_s", PHENOMENOLOGICAL_COLUMN)
    return PhenomenologicalAccuracy(n=len(used), performance=performance, limiters=limiters,
                                    ranking=ranking_quality(used, top_k, PHENOMENOLOGICAL_COLUMN))


def accuracy_report(rows: Sequence[Mapping[str, Any]], kernel: str = "", device: str = "",
                    top_k: int = DEFAULT_TOP_K, device_spec: Device | None = None) -> AccuracyReport:
    """Every metric's MAPE and the ranking quality of ``rows``; with ``device_spec`` also the
    phenomenological variant (module docstring)."""
    ok = [r for r in rows if not str(r.get("error", "") or "").strip()]
    return AccuracyReport(kernel=kernel, device=device, rows=len(ok),
                          metrics=tuple(metric_accuracy(ok, name) for name, *_ in COMPARED_METRICS),
                          ranking=ranking_quality(ok, top_k),
                          phenomenological=None if device_spec is None else phenomenological_accuracy(
                              ok, device_spec, top_k))


def has_measured_volumes(rows: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any row has the measured L1 wavefronts, L2 and DRAM values the phenomenological
    variant needs."""
    columns = ("meas_l1_wavefronts_per_lup", "meas_l2_load_bytes_per_lup", "meas_l2_store_bytes_per_lup",
               "meas_dram_load_bytes_per_lup", "meas_dram_store_bytes_per_lup")
    return any(all(math.isfinite(_value(r, c)) for c in columns) for r in rows)


def table_device(table: MeasurementTable, device: Device | str | None = None) -> Device | None:
    """The device of the phenomenological variant: ``device`` (a Device, or a built-in name or
    file), else the table's ``device_model``; None when the table has no measured volumes.
    Raises AccuracyError when the device cannot be loaded."""
    if not has_measured_volumes(table.rows):
        return None
    return _load_table_device(table.device, device)


def _load_table_device(table_device_name: str, device: Device | str | None) -> Device:
    """``device`` (a Device, a built-in name or a file), else the table's ``device_model``."""
    if isinstance(device, Device):
        return device
    name = device or table_device_name
    if not name:
        raise AccuracyError("the measurement file names no device_model; the phenomenological variant needs "
                            "the device the rows were measured on: pass --device NAME_OR_FILE")
    try:
        return load_device(name)
    except DeviceError as exc:
        raise AccuracyError(f"cannot load the device {name!r} of the phenomenological variant ({exc}); "
                            "pass --device NAME_OR_FILE") from None


def table_accuracy(table: MeasurementTable | MeasurementColumns, top_k: int = DEFAULT_TOP_K,
                   device: Device | str | None = None) -> AccuracyReport:
    """:func:`accuracy_report` of a measurement table, with the phenomenological variant on
    ``device`` (default: the table's ``device_model``) when the table has measured volumes.
    A :class:`~warpspeed.validation.measurement_csv.MeasurementColumns` is evaluated on its
    columns (:func:`columns_accuracy`), with the same result."""
    if isinstance(table, MeasurementColumns):
        return columns_accuracy(table, top_k, device)
    return accuracy_report(table.rows, table.kernel, table.device, top_k, table_device(table, device))


def load_accuracy(path: str | Path, top_k: int = DEFAULT_TOP_K, device: Device | str | None = None) -> AccuracyReport:
    """:func:`accuracy_report` of a measurement CSV file (:func:`table_accuracy`)."""
    return table_accuracy(read_measurement_columns(path), top_k, device)


class _Columns:
    """The rows of a :class:`MeasurementColumns` selected by ``index``, read as float columns
    (NaN for a column the file lacks), with row labels as :func:`row_label` writes them."""

    def __init__(self, table: MeasurementColumns, index: np.ndarray) -> None:
        self.table, self.index = table, index
        self._labels: dict[int, str] = {}
        self._all: list[str] | None = None

    def __len__(self) -> int:
        return len(self.index)

    def column(self, name: str) -> np.ndarray:
        values = self.table.columns.get(name)
        if values is None or isinstance(values, tuple):
            return np.full(len(self.index), math.nan)
        return values[self.index].astype(np.float64)

    def subset(self, keep: np.ndarray) -> "_Columns":
        return _Columns(self.table, self.index[keep])

    def configs(self) -> np.ndarray:
        return np.stack([self.table.columns[c][self.index] for c in CONFIG_COLUMNS], axis=1)

    def label(self, i: int) -> str:
        return self.labels([i])[0]

    def labels(self, positions: Sequence[int]) -> list[str]:
        """The labels of the selected rows at ``positions`` (computed once each)."""
        if self._all is None and len(positions) > len(self.index) // 8:  # many: all at once, in a list
            extents = [self.table.columns[f"{kind}_{d}"][self.index].tolist() for kind in ("block", "fold") for d in "xyz"]
            self._all = list(map(config_label, *extents))
        if self._all is not None:
            return [self._all[i] for i in positions]
        missing = [i for i in positions if i not in self._labels]
        if missing:
            rows = self.index[missing]
            extents = [self.table.columns[f"{kind}_{d}"][rows].tolist() for kind in ("block", "fold") for d in "xyz"]
            self._labels.update(zip(missing, map(config_label, *extents)))
        return [self._labels[i] for i in positions]


def _column_pairs(cols: _Columns, measured: str, predicted: str) -> tuple[_Columns, np.ndarray, np.ndarray]:
    """The rows where both values are finite and the measured one positive (as :func:`_pairs`),
    with their predicted and measured values."""
    m, p = cols.column(measured), cols.column(predicted)
    with np.errstate(invalid="ignore"):
        keep = np.isfinite(m) & np.isfinite(p) & (m > 0)
    return cols.subset(keep), p[keep], m[keep]


def _columns_metric(cols: _Columns, metric: str, label: str, unit: str, measured_col: str,
                    predicted_col: str) -> MetricAccuracy:
    """:func:`_column_accuracy` on columns (the same sums in the same order)."""
    pairs, p, m = _column_pairs(cols, measured_col, predicted_col)
    if len(pairs) == 0:
        return MetricAccuracy(metric, label, unit, 0, math.nan, math.nan, "")
    apes = 100.0 * np.abs(p - m) / m
    worst = int(np.argmax(apes))  # the first of the largest
    error = 100.0 * sum((np.abs(p - m) / m).tolist()) / len(m)  # as percent.mape sums
    return MetricAccuracy(metric, label, unit, len(pairs), error, float(apes[worst]), pairs.label(worst))


def _columns_top(pairs: _Columns, values: np.ndarray, k: int) -> list[int]:
    """Indices of the k largest ``values`` (ties broken by label, as :func:`_top`)."""
    threshold = np.partition(values, len(values) - k)[len(values) - k]
    above = np.flatnonzero(values > threshold).tolist()  # fewer than k
    ties = np.flatnonzero(values == threshold).tolist()
    tie_labels = pairs.labels(ties)
    chosen = heapq.nsmallest(k - len(above), range(len(ties)), key=tie_labels.__getitem__)
    return (sorted(above, key=lambda i: (-values[i], pairs.label(i)))
            + [ties[j] for j in sorted(chosen, key=tie_labels.__getitem__)])


def _columns_ranking(cols: _Columns, top_k: int, predicted: str = "pred_lups_per_s") -> RankingQuality | None:
    """:func:`ranking_quality` on columns."""
    from scipy.stats import spearmanr

    if top_k < 1:
        raise AccuracyError(f"top_k must be >= 1, got {top_k}")
    pairs, p, m = _column_pairs(cols, "meas_lups_per_s", predicted)
    if len(pairs) < 2:
        return None
    configs = pairs.configs()
    keys = np.zeros(len(pairs), dtype=np.int64)
    for j in range(configs.shape[1]):  # entries 1..1024: 10 bits each
        keys = (keys << 10) | (configs[:, j] - 1)
    keys.sort()
    if np.any(keys[1:] == keys[:-1]):
        counts = Counter(pairs.label(i) for i in range(len(pairs)))
        repeated = sorted(lab for lab, n in counts.items() if n > 1)
        shown = ", ".join(repeated[:SHOWN_DUPLICATES]) + (f" and {len(repeated) - SHOWN_DUPLICATES} more"
                                                          if len(repeated) > SHOWN_DUPLICATES else "")
        raise AccuracyError(f"ranking needs one row per configuration; duplicate configuration(s): {shown}")
    if np.all(p == p[0]) or np.all(m == m[0]):
        rho = p_value = math.nan  # a constant ranking has no rank correlation
    else:
        result = spearmanr(p, m)
        rho, p_value = float(result.statistic), float(result.pvalue)
    best_pred = _columns_top(pairs, p, 1)[0]
    best_meas = _columns_top(pairs, m, 1)[0]
    k = min(top_k, len(pairs))
    overlap = len({pairs.label(i) for i in _columns_top(pairs, p, k)} & {pairs.label(i) for i in _columns_top(pairs, m, k)})
    return RankingQuality(n=len(pairs), spearman=rho, spearman_p_value=p_value, best_predicted=pairs.label(best_pred),
                          best_measured=pairs.label(best_meas),
                          best_predicted_relative=float(m[best_pred]) / float(m[best_meas]), top_k=k,
                          top_k_overlap=overlap)


#: The columns :func:`phenomenological_roofline` reads.
_PHENOMENOLOGICAL_INPUTS = ("meas_l1_wavefronts_per_lup", "meas_l2_load_bytes_per_lup", "meas_l2_store_bytes_per_lup",
                            "meas_dram_load_bytes_per_lup", "meas_dram_store_bytes_per_lup",
                            "pred_dram_resident_threads", "pred_registers", "pred_fp_lups_per_s",
                            *(c for c in CONFIG_COLUMNS if c.startswith("fold_")))


def _row_codes(columns: Sequence[np.ndarray]) -> np.ndarray:
    """One integer per row of the float ``columns`` (of one length), equal for rows of equal bits:
    each column's distinct bit patterns numbered, the numbers combined (and renumbered whenever
    the product of the counts would leave int64)."""
    codes = np.zeros(len(columns[0]), dtype=np.int64)
    count = 1
    for column in columns:
        distinct, numbers = np.unique(column.view(np.int64), return_inverse=True)
        if count * len(distinct) >= 2**62:
            count_codes, codes = np.unique(codes, return_inverse=True)
            count = len(count_codes)
        codes = codes * len(distinct) + numbers.ravel()
        count *= len(distinct)
    return codes


def _columns_phenomenological(cols: _Columns, device: Device, top_k: int) -> PhenomenologicalAccuracy | None:
    """:func:`phenomenological_accuracy` on columns: :func:`phenomenological_roofline` once per
    distinct combination of the values it reads (rows that share them share the roofline)."""
    present = [c for c in _PHENOMENOLOGICAL_INPUTS if c in cols.table.columns]
    inputs = [cols.column(c) for c in present]
    _, first, inverse = np.unique(_row_codes(inputs), return_index=True, return_inverse=True)
    rates, limiters = np.empty(len(first)), []
    for j, row in enumerate(first.tolist()):
        roof = phenomenological_roofline({c: float(values[row]) for c, values in zip(present, inputs)}, device)
        rates[j] = math.nan if roof is None else roof.lups_per_s
        limiters.append("" if roof is None else roof.limiter)
    rate = rates[inverse.ravel()]
    used = np.isfinite(rate)
    if not used.any():
        return None
    groups = np.bincount(inverse.ravel()[used], minlength=len(first))
    counts: dict[str, int] = {}
    for j in np.flatnonzero(groups).tolist():  # in the order the rows first have each limiter
        counts[limiters[j]] = counts.get(limiters[j], 0) + int(groups[j])
    ordered = tuple(sorted(counts.items(), key=lambda kv: (LIMITERS.index(kv[0]) if kv[0] in LIMITERS
                                                           else len(LIMITERS), kv[0])))
    table = _with_column(cols.subset(used), PHENOMENOLOGICAL_COLUMN, rate[used])
    performance = _columns_metric(table, "performance_phenomenological", PHENOMENOLOGICAL_LABEL, "lup/s",
                                  "meas_lups_per_s", PHENOMENOLOGICAL_COLUMN)
    return PhenomenologicalAccuracy(n=int(used.sum()), performance=performance, limiters=ordered,
                                    ranking=_columns_ranking(table, top_k, PHENOMENOLOGICAL_COLUMN))


def _with_column(cols: _Columns, name: str, values: np.ndarray) -> _Columns:
    """``cols`` with a further float column (one value per selected row)."""
    full = np.full(len(cols.table), math.nan)
    full[cols.index] = values
    table = replace(cols.table, columns={**cols.table.columns, name: full},
                    names=(*cols.table.names, name))
    return _Columns(table, cols.index)


def columns_accuracy(table: MeasurementColumns, top_k: int = DEFAULT_TOP_K,
                     device: Device | str | None = None) -> AccuracyReport:
    """:func:`table_accuracy` of a measurement file read as columns (the same report, in
    array operations: a million rows in seconds)."""
    errors = table.columns.get("error")
    ok = np.arange(len(table)) if errors is None else np.flatnonzero([not e for e in errors])
    cols = _Columns(table, ok)
    spec = _columns_device(table, device)
    return AccuracyReport(kernel=table.kernel, device=table.device, rows=len(ok),
                          metrics=tuple(_columns_metric(cols, name, METRIC_LABELS[name], unit, m, p)
                                        for name, m, p, unit in COMPARED_METRICS),
                          ranking=_columns_ranking(cols, top_k),
                          phenomenological=None if spec is None else _columns_phenomenological(cols, spec, top_k))


def _columns_device(table: MeasurementColumns, device: Device | str | None) -> Device | None:
    """:func:`table_device` of a table read as columns."""
    columns = ("meas_l1_wavefronts_per_lup", "meas_l2_load_bytes_per_lup", "meas_l2_store_bytes_per_lup",
               "meas_dram_load_bytes_per_lup", "meas_dram_store_bytes_per_lup")
    every = _Columns(table, np.arange(len(table)))
    if not np.all([np.isfinite(every.column(c)) for c in columns], axis=0).any():
        return None
    return _load_table_device(table.device, device)


def plot_accuracy(rows: Sequence[Mapping[str, Any]], path: str | Path, title: str = "") -> Path:
    """Predicted vs measured, one panel per metric (log axes, diagonal, block-shape colors).

    Only the metrics the rows measure get a panel (a file timed without ncu: performance alone);
    rows that measure nothing get an empty panel per metric saying so. The format follows the suffix
    (png, pdf, svg, ...). Returns the written path.
    """
    fig = accuracy_figure(rows, title)
    return save_figure(fig, path, ACCURACY_DPI)


#: Resolution of the accuracy figure (dots per inch) and the size of one panel (inches).
ACCURACY_DPI = 120
_PANEL_IN = (4.2, 4.0)
_PANEL_COLUMNS = 3
#: Margin around the data of a panel: the axes span [min / f, max * f].
_AXIS_MARGIN = 1.3


def _panel_points(rows: Sequence[Mapping[str, Any]], name: str, meas_col: str, pred_col: str) -> list[tuple]:
    scale = NANO if name == "performance" else 1.0
    out = []
    for r in rows:
        m, p = _value(r, meas_col), _value(r, pred_col)
        if math.isfinite(m) and math.isfinite(p) and m > 0 and p > 0:
            out.append((scale * m, scale * p, block_color(tuple(int(r[f"block_{d}"]) for d in "xyz"))))
    return out


def _draw_panel(ax: Any, ok: Sequence[Mapping[str, Any]], name: str, meas_col: str, pred_col: str, unit: str) -> None:
    ax.set_title(METRIC_LABELS[name])
    points = _panel_points(ok, name, meas_col, pred_col)
    if not points:
        ax.text(0.5, 0.5, "no measured data", ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks([])
        ax.set_yticks([])
        return
    shown_unit = "Glup/s" if name == "performance" else unit
    xs, ys, colors = zip(*points)
    ax.scatter(xs, ys, c=colors, s=22, edgecolors="black", linewidths=0.3)
    lo, hi = min(xs + ys) / _AXIS_MARGIN, max(xs + ys) * _AXIS_MARGIN
    ax.plot([lo, hi], [lo, hi], color="gray", linestyle="--", linewidth=1, label="predicted = measured")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel(f"measured, {shown_unit}")
    ax.set_ylabel(f"predicted, {shown_unit}")
    err = metric_accuracy(ok, name)
    ax.text(0.04, 0.94, f"MAPE {err.mape_percent:.1f} % (n={err.n})", transform=ax.transAxes, fontsize=8, va="top")


def accuracy_figure(rows: Sequence[Mapping[str, Any]], title: str = "") -> Any:
    """The figure of :func:`plot_accuracy` (a :class:`matplotlib.figure.Figure`, not shown anywhere)."""
    from matplotlib.patches import Patch

    ok = [r for r in rows if not str(r.get("error", "") or "").strip()]
    shown = [m for m in COMPARED_METRICS if _panel_points(ok, m[0], m[1], m[2])] or list(COMPARED_METRICS)
    columns = min(_PANEL_COLUMNS, len(shown))
    nrows = math.ceil(len(shown) / columns)
    fig = new_figure(_PANEL_IN[0] * max(columns, 2), _PANEL_IN[1] * nrows + (1.0 if nrows == 1 else 0.0))
    axes = fig.subplots(nrows, columns, squeeze=False)
    for ax, (name, meas_col, pred_col, unit) in zip(axes.flat, shown):
        _draw_panel(ax, ok, name, meas_col, pred_col, unit)
    for ax in list(axes.flat)[len(shown):]:
        ax.set_visible(False)
    handles = [Patch(color=c, label=lab) for c, lab in BLOCK_SHAPE_LEGEND]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=8, title="block shape (RGB = log2 x, y, z)")
    fig.suptitle(title or "predicted vs measured")
    fig.tight_layout(rect=(0, 0.07, 1, 0.96))
    return fig
